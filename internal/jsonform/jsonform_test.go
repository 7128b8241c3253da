package jsonform

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Both forms hold the same content in other bytes; ReverseKeys reverses
// every object's keys and keeps numbers as written.
func TestForms(t *testing.T) {
	in := []byte(`{"a":1,"b":[{"x":"s","y":null},true],"c":18446744073709551615}`)
	rev, err := ReverseKeys(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"c": 18446744073709551615, "b": [{"y": null, "x": "s"},true], "a": 1}`; string(rev) != want {
		t.Errorf("ReverseKeys: %s, want %s", rev, want)
	}
	ind, err := Indent(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n\t\"a\": 1,\n\t\"b\": [{\n\t\t\"x\": \"s\",\n\t\t\"y\": null\n\t},true],\n\t\"c\": 18446744073709551615\n}\n"; string(ind) != want {
		t.Errorf("Indent: %q, want %q", ind, want)
	}
	var a, b, c any
	for _, x := range []struct {
		b []byte
		v *any
	}{{in, &a}, {rev, &b}, {ind, &c}} {
		if err := json.Unmarshal(x.b, x.v); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(a, c) || string(ind) == string(in) {
		t.Errorf("not the same content in other bytes: %s / %s / %s", in, rev, ind)
	}
	if _, err := ReverseKeys([]byte(`{"a":1} x`)); err == nil {
		t.Error("trailing data accepted")
	}
}
