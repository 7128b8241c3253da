package porep_test

import (
	"errors"
	"testing"

	"github.com/c2flow/c2flow/scheme/testscheme/porep"
	"github.com/c2flow/c2flow/scheme/testscheme/porep/poreptest"
)

func TestTamperedProofsAreRejected(t *testing.T) {
	h := porep.NewHasher()
	for _, tc := range poreptest.Tampers {
		t.Run(tc.Name, func(t *testing.T) {
			c1 := poreptest.Sector(t, "2KiB", 1).C1()
			tc.Do(c1)
			err := c1.Verify(h)
			if !errors.Is(err, tc.Want) {
				t.Fatalf("got %v, want %v", err, tc.Want)
			}
			var pe *porep.ProofError
			if !errors.As(err, &pe) || pe.Partition != 0 {
				t.Fatalf("error %v does not name the partition", err)
			}
		})
	}
}
