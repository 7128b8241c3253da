package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

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

func runSeal(ctx context.Context, args []string) error {
	fs := newFlags("seal")
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
