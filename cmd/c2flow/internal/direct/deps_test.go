package direct

import (
	"os/exec"
	"strings"
	"testing"
)

// make test-icicle compiles the cuda-tagged tests of this package, gpu and
// prover cold in about 2 minutes because they link no Temporal client or
// server, and no S3 server: with the Temporal server linked (when prove's
// test lived in lab) the compile alone took over 13 minutes. This keeps it
// so.
func TestIcicleTestsLinkNoServer(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-test", "-tags", "cuda",
		"github.com/c2flow/c2flow/cmd/c2flow/internal/direct",
		"github.com/c2flow/c2flow/gpu",
		"github.com/c2flow/c2flow/prover").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	pkgs := strings.Fields(string(out))
	t.Logf("the cuda-tagged tests link %d packages", len(pkgs))
	for _, p := range pkgs {
		for _, heavy := range []string{"go.temporal.io/", "github.com/versity/"} {
			if strings.HasPrefix(p, heavy) {
				t.Errorf("a cuda-tagged test links %s: make test-icicle would compile it cold", p)
			}
		}
	}
}
