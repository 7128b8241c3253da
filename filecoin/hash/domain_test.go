package hash

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// TestDomainFormat checks that %x prints a Domain's bytes (not the hex of
// its String text) while %s and %v keep printing String().
func TestDomainFormat(t *testing.T) {
	var d Domain
	for i := range d {
		d[i] = byte(i * 7)
	}
	h := hex.EncodeToString(d[:])
	for _, c := range []struct{ format, want string }{
		{"%x", h},
		{"%X", strings.ToUpper(h)},
		{"0x%x", "0x" + h},
		{"%s", h},
		{"%v", h},
		{"%q", `"` + h + `"`},
		{"%70s", strings.Repeat(" ", 6) + h},
		{"% x", fmt.Sprintf("% x", [32]byte(d))},
		{"%#v", fmt.Sprintf("%#v", [32]byte(d))},
		{"%d", fmt.Sprintf("%d", [32]byte(d))},
	} {
		if got := fmt.Sprintf(c.format, d); got != c.want {
			t.Errorf("Sprintf(%q, d) = %q, want %q", c.format, got, c.want)
		}
	}
	if got := fmt.Sprint(d); got != h {
		t.Errorf("Sprint(d) = %q, want %q", got, h)
	}
	if got := fmt.Sprintf("%v", []Domain{d}); got != "["+h+"]" {
		t.Errorf("Sprintf(%%v, []Domain) = %q", got)
	}
}
