package cliflags

import (
	"flag"
	"io"
	"strings"
	"testing"
)

// --partition-workers below 1 is refused, naming the flag, by every
// binary with the host flags (c2flow dev, the worker).
func TestAddHostRefusesPartitionWorkers(t *testing.T) {
	for _, n := range []string{"0", "-1"} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		build, err := AddHost(fs)
		if err != nil {
			t.Fatal(err)
		}
		if err := fs.Parse([]string{"--partition-workers", n}); err != nil {
			t.Fatal(err)
		}
		if _, err := build(); err == nil || !strings.Contains(err.Error(), "--partition-workers "+n) {
			t.Errorf("--partition-workers %s: %v", n, err)
		}
	}
}
