// Package intake turns C1 bytes into a sector's identity before anything
// is proved: it decodes them, binds them to their prover and sector, runs
// the native check and uploads them content-addressed. `c2flow submit`
// (files and their hints) and the cuzk gateway (Curio's requests) take C1s
// in through it, so both refuse the same inputs with the same errors.
package intake

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/c2"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/storage"
)

// LooksFilecoin reports whether b, the start of a C1 file, is a
// Filecoin C1's: Filecoin's scheme recognizes its head.
func LooksFilecoin(b []byte) bool {
	return c2.New(c2.Params{}, nil).Recognize(scheme.ReadHead(b))
}

// Public is the public data a Filecoin C1 is checked against, as given by
// a user (flags); empty fields come from elsewhere (see PublicFor).
type Public struct {
	ProverID, SectorID         string // hex of 32 bytes; decimal
	Ticket, Seed, CommD, CommR string // hex of 32 bytes
	Proof                      string // registered seal proof name
}

// Given reports whether any field besides ProverID is set.
func (p Public) Given() bool {
	return p.SectorID != "" || p.Ticket != "" || p.Seed != "" || p.CommD != "" || p.CommR != "" || p.Proof != ""
}

// Identify is `c2flow submit`'s batch.Identify. A Filecoin C1 (raw
// SealCommitPhase1Output or the Commit2In wrapper, as lotus, curio and
// lotus-bench write them) is bound to its prover and sector (hints,
// Commit2In SectorNum, file name, sectors.json) and verified natively
// against that identity; anything else is a C1 of c2flow's test scheme.
func Identify(hints Public) batch.Identify {
	fc := c2.New(c2.Params{}, nil) // decoding only: no parameters are read
	return func(ctx context.Context, path string, raw []byte) (job.SectorRef, error) {
		if !fc.Recognize(scheme.ReadHead(raw)) {
			// A test-scheme C1 names its own prover and sector: hints
			// would be ignored, so they are refused.
			if hints.ProverID != "" || hints.Given() {
				return job.SectorRef{}, fmt.Errorf("--prover-id and --sector-id are for Filecoin C1s; this is a c2flow test-scheme C1, which names its own prover and sector")
			}
			return batch.TestSchemeC1(ctx, path, raw)
		}
		a, err := c1.Decode(bytes.NewReader(raw))
		if err != nil {
			return job.SectorRef{}, err
		}
		pub, source, err := PublicFor(path, a, hints)
		if err != nil {
			return job.SectorRef{}, fmt.Errorf("public data (%s): %w", source, err)
		}
		if pub == nil {
			return job.SectorRef{}, fmt.Errorf("a %s C1 is proved for one prover's sector: give --prover-id (and --sector-id), or keep the sectors.json that c2flow seal wrote beside it", a.C1.RegisteredProof)
		}
		return check(ctx, fc, raw, pub, source)
	}
}

// check binds raw to pub's prover and sector (replica id, Commit2In
// SectorNum) and verifies it natively.
func check(ctx context.Context, fc *c2.Scheme, raw []byte, pub *seal.SectorPublic, source string) (job.SectorRef, error) {
	id := scheme.Ident{ProverID: hex.EncodeToString(pub.ProverID[:]), SectorID: pub.SectorID, Profile: pub.Proof.String()}
	s, err := fc.DecodeSector(raw, id)
	if err != nil {
		return job.SectorRef{}, fmt.Errorf("identity (%s): %w", source, err)
	}
	// Against every public datum given, not only the identity: a
	// sectors.json's comm_r or proof that the C1 does not match is caught
	// here, as `c2flow c1 check` catches it.
	full, err := c2.NewSector(s.C1(), pub)
	if err != nil {
		return job.SectorRef{}, fmt.Errorf("public data (%s): %w", source, err)
	}
	if err := full.Verify(ctx); err != nil {
		return job.SectorRef{}, fmt.Errorf("does not verify natively against its public data (%s), not submitted: %w", source, err)
	}
	ref := job.NewSectorRef(pub.ProverID, pub.SectorID, raw)
	ref.Profile = s.Proof()
	return ref, nil
}

// Upload stores a C1 that Identify or Curio accepted under its sector's
// content-addressed key (conditionally: an object there has these bytes).
func Upload(ctx context.Context, store *storage.Store, ref job.SectorRef, raw []byte) error {
	return store.PutC1(ctx, ref.Identity(), raw)
}

// PublicFor returns the public data to check a decoded file against and
// their source: the hints where they name a prover, else a sectors.json
// beside the file that lists it; nil public data means the file's own
// (no prover or sector id to derive the replica id from).
func PublicFor(name string, a *c1.Artifact, h Public) (*seal.SectorPublic, string, error) {
	c := a.C1
	if h.ProverID != "" {
		const src = "flags"
		proverID, err := seal.ParseHex32(h.ProverID)
		if err != nil {
			return nil, src, fmt.Errorf("--prover-id: %w", err)
		}
		var sectorID uint64
		var sectorSrc string
		wrapped, isWrapped, werr := c2.WrappedSectorID(a)
		switch {
		case h.SectorID != "":
			sectorSrc = "--sector-id"
			if sectorID, err = strconv.ParseUint(h.SectorID, 10, 64); err != nil {
				return nil, src, fmt.Errorf("--sector-id: %w", err)
			}
			if err := seal.CheckSectorID(sectorID, "--sector-id"); err != nil {
				return nil, src, err
			}
			// A Commit2In names its sector: a flag that disagrees is a
			// mix-up of files, refused here as submit's decoder refuses it.
			if isWrapped && werr == nil && wrapped != sectorID {
				return nil, src, fmt.Errorf("--sector-id %d but the Commit2In SectorNum is %d", sectorID, wrapped)
			}
		case isWrapped:
			sectorSrc = "Commit2In SectorNum"
			if werr != nil {
				return nil, src, werr
			}
			sectorID = wrapped
		default:
			base := filepath.Base(name)
			id, ok := strings.CutSuffix(base, ".c1.json")
			if ok {
				sectorID, err = strconv.ParseUint(id, 10, 64)
			}
			if !ok || err != nil {
				return nil, src, fmt.Errorf("no sector id: give --sector-id, a Commit2In file, or a file named <sector-id>.c1.json")
			}
			if err := seal.CheckSectorID(sectorID, "file name "+base+": sector id"); err != nil {
				return nil, src, err
			}
			sectorSrc = "file name"
		}
		pub := c2.PublicOf(c, proverID, sectorID)
		given := []string{"prover id", "sector id (" + sectorSrc + ")"}
		for _, f := range []struct {
			flag, s string
			dst     *[32]byte
		}{{"ticket", h.Ticket, &pub.Ticket}, {"seed", h.Seed, &pub.Seed}, {"comm-d", h.CommD, &pub.CommD}, {"comm-r", h.CommR, &pub.CommR}} {
			if f.s == "" {
				continue
			}
			if *f.dst, err = seal.ParseHex32(f.s); err != nil {
				return nil, src, fmt.Errorf("--%s: %w", f.flag, err)
			}
			given = append(given, f.flag)
		}
		if h.Proof != "" {
			if pub.Proof, err = proofs.Parse(h.Proof); err != nil {
				return nil, src, fmt.Errorf("--proof: %w", err)
			}
			given = append(given, "proof")
		}
		return &pub, src + ": " + strings.Join(given, ", ") + "; the rest from the file", nil
	}
	mpath := filepath.Join(filepath.Dir(name), "sectors.json")
	m, err := seal.ReadManifest(mpath)
	switch {
	case err == nil:
		if e := m.Find(filepath.Base(name)); e != nil {
			pub, err := m.Public(e)
			if err != nil {
				return nil, mpath, err
			}
			return &pub, mpath, nil
		}
		return nil, "the file's own (not listed in " + mpath + "; replica id not derived)", nil
	case errors.Is(err, os.ErrNotExist), errors.Is(err, seal.ErrNotManifest):
		return nil, "the file's own (replica id not derived: no prover or sector id)", nil
	}
	return nil, mpath, err
}
