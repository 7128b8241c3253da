package strictjson

import (
	"errors"
	"testing"
)

func TestDecode(t *testing.T) {
	type obj struct {
		A int `json:"a"`
	}
	var o obj
	if err := Decode([]byte(" {\"a\": 7}\n"), &o); err != nil || o.A != 7 {
		t.Fatalf("a good object: %v, %+v", err, o)
	}
	for name, raw := range map[string]string{
		"unknown field": `{"a": 1, "b": 2}`,
		"two objects":   `{"a": 1} {"a": 2}`,
		"not JSON":      `{"a": `,
		"wrong type":    `{"a": "x"}`,
	} {
		if err := Decode([]byte(raw), &o); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	if err := Decode([]byte(`{"a": 1} []`), &o); !errors.Is(err, ErrTrailing) {
		t.Errorf("trailing data: %v", err)
	}
}
