package lab

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/porep"
)

// SealManifest lists the sectors a seal run wrote.
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

func RunSeal(ctx context.Context, args []string) error {
	fs := cli.NewFlags("seal")
	profile := fs.String("profile", "32KiB", "profile: "+fmt.Sprint(porep.ProfileNames()))
	n := fs.Int("sectors", 2, "number of sectors")
	first := fs.Uint64("first-id", 1, "sector id of the first sector")
	fs.Uint64Var(first, "first-sector", 1, "alias of --first-id")
	out := fs.String("out", "c1", "output directory")
	var fc filecoinSealFlags
	fc.add(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	// The ids are first .. first+n-1: one past 2^64-1 would wrap to 0.
	if *n > 1 && *first > math.MaxUint64-uint64(*n-1) {
		return fmt.Errorf("--first-id %d with --sectors %d: the last sector id overflows 64 bits", *first, *n)
	}
	if fc.proof != "" {
		return runFilecoinSeal(ctx, fs, &fc, *n, *first, *out)
	}
	p, err := porep.LookupProfile(*profile)
	if err != nil {
		return err
	}
	if *n < 1 {
		return fmt.Errorf("--sectors must be at least 1")
	}
	var prover [32]byte
	if fc.proverID != "" {
		if prover, err = seal.ParseHex32(fc.proverID); err != nil {
			return fmt.Errorf("--prover-id: %w", err)
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	m := SealManifest{Profile: p.Name}
	for i := 0; i < *n; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		id := *first + uint64(i)
		t0 := time.Now()
		info := TestSectorInfo(id)
		if fc.proverID != "" {
			info.ProverID = prover
		}
		s, err := porep.Seal(p, info)
		if err != nil {
			return err
		}
		path := filepath.Join(*out, fmt.Sprintf("%d.c1.json", id))
		if err := writeC1(path, s.C1()); err != nil {
			return err
		}
		cr, cd := s.CommR.Bytes(), s.CommD.Bytes()
		m.Sectors = append(m.Sectors, SealedEntry{SectorID: id, C1: filepath.Base(path),
			CommR: fmt.Sprintf("0x%x", cr), CommD: fmt.Sprintf("0x%x", cd)})
		fmt.Fprintf(os.Stderr, "sealed sector %d (%s) in %v -> %s\n", id, p.Name, time.Since(t0).Round(time.Millisecond), path)
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	return os.WriteFile(filepath.Join(*out, "sectors.json"), append(b, '\n'), 0o644)
}

// TestSectorInfo is the identity and randomness of sealed test sector id:
// fixed, so a second seal of the same id writes the same C1.
func TestSectorInfo(id uint64) porep.SectorInfo {
	info := porep.SectorInfo{SectorID: id}
	copy(info.ProverID[:], "c2flow test prover")
	copy(info.Ticket[:], fmt.Sprintf("ticket-%d", id))
	copy(info.Seed[:], fmt.Sprintf("seed-%d", id))
	return info
}

func writeC1(path string, c1 *porep.C1) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := c1.Encode(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// runFilecoinSeal seals n Filecoin test sectors from sector id first.
func runFilecoinSeal(ctx context.Context, fs *flag.FlagSet, f *filecoinSealFlags, n int, first uint64, out string) error {
	var profileSet bool
	fs.Visit(func(fl *flag.Flag) { profileSet = profileSet || fl.Name == "profile" })
	if profileSet {
		return fmt.Errorf("--proof and --profile are exclusive")
	}
	info, err := proofs.ByName(f.proof)
	if err != nil {
		return fmt.Errorf("--proof: %w", err)
	}
	if n < 1 {
		return fmt.Errorf("--sectors must be at least 1")
	}
	if err := seal.CheckSectorID(first+uint64(n-1), fmt.Sprintf("--first-id %d with --sectors %d: last sector id", first, n)); err != nil {
		return err
	}
	prover := defaultProverID()
	if f.proverID != "" {
		if prover, err = seal.ParseHex32(f.proverID); err != nil {
			return fmt.Errorf("--prover-id: %w", err)
		}
	}
	sparse := f.sparse || info.Nodes > seal.MaxSealNodes
	if sparse && !f.sparse {
		fmt.Fprintf(os.Stderr, "%s sectors are sealed sparsely (committed capacity, only the opened nodes hold real labels)\n", info.Name)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	m := &seal.Manifest{Proof: info.Name}
	for i := range n {
		if err := ctx.Err(); err != nil {
			return err
		}
		id := first + uint64(i)
		p := seal.TestParams(info.Proof, prover, id)
		t0 := time.Now()
		var s *seal.Sealed
		if sparse {
			s, err = seal.SealSparse(ctx, p)
		} else {
			s, err = seal.Seal(ctx, p)
		}
		if err != nil {
			return err
		}
		name := fmt.Sprintf("%d.c1.json", id)
		path := filepath.Join(out, name)
		if err := writeFilecoinC1(path, s.C1); err != nil {
			return err
		}
		m.Sectors = append(m.Sectors, seal.EntryOf(s.Public, name))
		fmt.Fprintf(os.Stderr, "sealed sector %d (%s) in %v -> %s\n", id, info.Name, time.Since(t0).Round(time.Millisecond), path)
	}
	return seal.WriteManifest(filepath.Join(out, "sectors.json"), m)
}

func writeFilecoinC1(path string, c *c1.SealCommitPhase1Output) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := c1.Encode(f, c); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// defaultProverID is the prover id of c2flow's Filecoin test sectors: the
// same bytes as TestSectorInfo's.
func defaultProverID() [32]byte {
	var id [32]byte
	copy(id[:], "c2flow test prover")
	return id
}
