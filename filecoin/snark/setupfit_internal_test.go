package snark

import (
	"strings"
	"testing"
)

// A development setup is refused by its size, named, not by a list of
// sector sizes: the production 32GiB and 64GiB WinningPoSt circuits and
// the 512MiB PoRep fit a 24 GiB machine; 32GiB PoRep, SnapDeals and
// WindowPoSt do not, and the refusal says what they need (issue 56).
func TestSetupRefusedBySize(t *testing.T) {
	const box = 24 << 30
	for _, c := range []struct {
		proof string
		fits  bool
	}{
		{"StackedDrg2KiBV1_1", true},
		{"StackedDrg512MiBV1_1", true},
		{"StackedDrgWinning32GiBV1", true},
		{"StackedDrgWinning64GiBV1", true},
		{"StackedDrgWindow512MiBV1_2", true},
		{"StackedDrg32GiBV1_1", false},
		{"StackedDrgWindow32GiBV1_2", false},
		{UpdatePrefix + "StackedDrg32GiBV1", false},
	} {
		sp, err := specOf(c.proof)
		if err != nil {
			t.Fatal(err)
		}
		err = setupFits(sp, box)
		if (err == nil) != c.fits {
			t.Errorf("%s on a 24 GiB machine: %v, want fits=%v", c.proof, err, c.fits)
		}
		if err != nil && !strings.Contains(err.Error(), "GB") {
			t.Errorf("%s: %v: the refusal names no size", c.proof, err)
		}
	}
}
