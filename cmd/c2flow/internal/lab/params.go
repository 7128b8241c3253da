package lab

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/registry"
)

// RunParams is `c2flow params import`: a provider's parameter directory
// made ready for this box's workers, once.
func RunParams(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "import" {
		return errors.New("params: usage: c2flow params import --proofs P1,P2 [--shapes DIR] DIR")
	}
	fs := cli.NewFlags("params import")
	list := fs.String("proofs", "", "the proofs to import, comma-separated: seal (StackedDrg32GiBV1_1), update (UpdateStackedDrg32GiBV1) or PoSt (StackedDrgWindow32GiBV1_2) names")
	shapes := fs.String("shapes", "", "where recorded circuits, key files and file stamps are kept (default: c2flow's cache, as the workers')")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 || *list == "" {
		fs.Usage()
		return fmt.Errorf("params import: usage: c2flow params import --proofs P1,P2 [--shapes DIR] DIR (Filecoin's default directory is %s)", registry.FilecoinParamsDir())
	}
	dir := fs.Arg(0)
	for _, proof := range strings.Split(*list, ",") {
		proof = strings.TrimSpace(proof)
		t0 := time.Now()
		fmt.Printf("%s: checking %s's pair against its parameters.json, recording the circuit, converting the key ...\n", proof, dir)
		m, err := registry.MapFilecoin(ctx, registry.Options{FilecoinParams: dir, FilecoinShapes: *shapes}, proof, true)
		if err != nil {
			return fmt.Errorf("params import %s from %s: %w", proof, dir, err)
		}
		fmt.Printf("%s: ready in %v: circuit %.16s, key file %d bytes, system %d bytes, mapped by every worker of this box\n",
			proof, time.Since(t0).Round(time.Millisecond), m.Digest, m.KeyBytes, m.SystemBytes)
	}
	return nil
}
