package snark

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/scheme"
)

// SealTest implements scheme.Scheme: Filecoin test sectors of r.Proof
// (filecoin/seal), their C1s as filecoin-ffi writes them and a
// sectors.json of each sector's public data. Sectors over
// seal.MaxSealNodes are sealed sparsely whatever r.Sparse says.
func (*Scheme) SealTest(ctx context.Context, r scheme.SealRequest) ([]string, error) {
	info, err := proofs.ByName(r.Proof)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	if r.N < 1 {
		return nil, fmt.Errorf("seal: at least one sector, not %d", r.N)
	}
	if err := seal.CheckSectorID(r.First+uint64(r.N-1), fmt.Sprintf("sectors %d .. +%d: last sector id", r.First, r.N-1)); err != nil {
		return nil, err
	}
	sparse := r.Sparse || info.Nodes > seal.MaxSealNodes
	if sparse && !r.Sparse && r.Progress != nil {
		fmt.Fprintf(r.Progress, "%s sectors are sealed sparsely (committed capacity, only the opened nodes hold real labels)\n", info.Name)
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	m := &seal.Manifest{Proof: info.Name}
	var files []string
	for i := range r.N {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		id := r.First + uint64(i)
		p := seal.TestParams(info.Proof, r.Prover, id)
		t0 := time.Now()
		var s *seal.Sealed
		if sparse {
			s, err = seal.SealSparse(ctx, p)
		} else {
			s, err = seal.Seal(ctx, p)
		}
		if err != nil {
			return nil, fmt.Errorf("seal sector %d: %w", id, err)
		}
		name := fmt.Sprintf("%d.c1.json", id)
		path := filepath.Join(r.Dir, name)
		if err := c1.WriteFile(path, s.C1); err != nil {
			return nil, err
		}
		files = append(files, path)
		m.Sectors = append(m.Sectors, seal.EntryOf(s.Public, name))
		if r.Progress != nil {
			fmt.Fprintf(r.Progress, "sealed sector %d (%s) in %v -> %s\n", id, info.Name, time.Since(t0).Round(time.Millisecond), path)
		}
	}
	if err := seal.WriteManifest(filepath.Join(r.Dir, "sectors.json"), m); err != nil {
		return nil, err
	}
	return files, nil
}
