package testscheme

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/c2flow/c2flow/internal/atomicfile"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
)

// SealManifest lists the sectors a seal run wrote (its sectors.json).
type SealManifest struct {
	Profile string        `json:"profile"`
	Sectors []SealedEntry `json:"sectors"`
}

// SealedEntry is one sealed sector of a manifest.
type SealedEntry struct {
	SectorID uint64 `json:"sector_id"`
	C1       string `json:"c1"`
	CommR    string `json:"comm_r"`
	CommD    string `json:"comm_d"`
}

// SectorInfo is the identity and randomness of test sector id of prover:
// fixed, so a second seal of the same id writes the same C1.
func SectorInfo(prover [32]byte, id uint64) porep.SectorInfo {
	info := porep.SectorInfo{SectorID: id, ProverID: prover}
	copy(info.Ticket[:], fmt.Sprintf("ticket-%d", id))
	copy(info.Seed[:], fmt.Sprintf("seed-%d", id))
	return info
}

// SealTest implements scheme.Scheme: porep.Seal of each sector.
func (*Scheme) SealTest(ctx context.Context, r scheme.SealRequest) ([]string, error) {
	p, err := porep.LookupProfile(r.Proof)
	if err != nil {
		return nil, err
	}
	if r.N < 1 {
		return nil, fmt.Errorf("seal: at least one sector, not %d", r.N)
	}
	if r.First > math.MaxUint64-uint64(r.N-1) {
		return nil, fmt.Errorf("seal: sectors %d .. +%d: the last sector id overflows 64 bits", r.First, r.N-1)
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	m := SealManifest{Profile: p.Name}
	var files []string
	for i := range r.N {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		id := r.First + uint64(i)
		t0 := time.Now()
		s, err := porep.Seal(p, SectorInfo(r.Prover, id))
		if err != nil {
			return nil, fmt.Errorf("seal sector %d: %w", id, err)
		}
		path := filepath.Join(r.Dir, fmt.Sprintf("%d.c1.json", id))
		if err := writeC1(path, s.C1()); err != nil {
			return nil, err
		}
		files = append(files, path)
		cr, cd := s.CommR.Bytes(), s.CommD.Bytes()
		m.Sectors = append(m.Sectors, SealedEntry{SectorID: id, C1: filepath.Base(path),
			CommR: fmt.Sprintf("0x%x", cr), CommD: fmt.Sprintf("0x%x", cd)})
		if r.Progress != nil {
			fmt.Fprintf(r.Progress, "sealed sector %d (%s) in %v -> %s\n", id, p.Name, time.Since(t0).Round(time.Millisecond), path)
		}
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := atomicfile.WriteBytes(filepath.Join(r.Dir, "sectors.json"), append(b, '\n')); err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	return files, nil
}

// writeC1 writes a C1 file whole or not at all.
func writeC1(path string, c1 *porep.C1) error {
	return atomicfile.Write(path, func(w io.Writer) error { return c1.Encode(w) })
}
