package snark

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

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme"
)

// Identify implements scheme.Scheme. A Filecoin C1 (raw
// SealCommitPhase1Output or the Commit2In wrapper, as lotus, curio and
// lotus-bench write them) does not name its prover, and only a Commit2In
// names its sector: it is bound to them (the hints, the Commit2In
// SectorNum, a file named N.c1.json, a sectors.json beside the file) and
// verified natively against that identity. Its canonical bytes are the
// bare C1 as filecoin-ffi's serde writes it (CanonicalC1), in whichever
// form it came.
func (sc *Scheme) Identify(ctx context.Context, name string, raw []byte, h scheme.Hints) (job.Ref, []byte, error) {
	return sc.IdentifyPublic(ctx, name, raw, Public{ProverID: h.ProverID, SectorID: h.SectorID})
}

// IdentifyPublic is Identify with every public datum a user may give
// (c2flow c1 check's flags).
func (sc *Scheme) IdentifyPublic(ctx context.Context, name string, raw []byte, h Public) (job.Ref, []byte, error) {
	if h.ProverID == "" && h.SectorID != "" {
		return job.Ref{}, nil, fmt.Errorf("--sector-id needs --prover-id")
	}
	a, err := c1.Decode(bytes.NewReader(raw))
	if err != nil {
		return job.Ref{}, nil, err
	}
	pub, source, err := PublicFor(name, a, h)
	if err != nil {
		return job.Ref{}, nil, fmt.Errorf("public data (%s): %w", source, err)
	}
	if pub == nil {
		return job.Ref{}, nil, fmt.Errorf("a %s C1 is proved for one prover's sector: give --prover-id (and --sector-id), or keep the sectors.json that c2flow seal wrote beside it", a.C1.RegisteredProof)
	}
	return sc.bind(ctx, raw, pub, source)
}

// Public is the public data a Filecoin C1 is checked against, as given by
// a user (flags); empty fields come from elsewhere (see PublicFor).
type Public = c1.Given

// bind binds raw to pub's prover and sector (replica id, Commit2In
// SectorNum), verifies it natively and returns its identity, the digest
// of its canonical bytes, with them.
func (sc *Scheme) bind(ctx context.Context, raw []byte, pub *seal.SectorPublic, source string) (job.Ref, []byte, error) {
	id := job.Ref{ProverID: hex.EncodeToString(pub.ProverID[:]), SectorID: pub.SectorID, Proof: pub.Proof.String()}
	s, err := sc.DecodeSector(raw, id)
	if err != nil {
		return job.Ref{}, nil, fmt.Errorf("identity (%s): %w", source, err)
	}
	// Against every public datum given, not only the identity: a
	// sectors.json's comm_r or proof that the C1 does not match is caught
	// here, as `c2flow c1 check` catches it.
	full, err := NewSector(s.C1(), pub)
	if err != nil {
		return job.Ref{}, nil, fmt.Errorf("public data (%s): %w", source, err)
	}
	if err := full.Verify(ctx); err != nil {
		return job.Ref{}, nil, fmt.Errorf("does not verify natively against its public data (%s), not submitted: %w", source, err)
	}
	return canonicalRef(s.C1(), pub.ProverID, pub.SectorID)
}

// CanonicalC1 is the canonical bytes of a decoded Filecoin C1: the bare
// C1 as filecoin-ffi's serde_json writes it (c1.Marshal: compact, fields
// in Rust order), whatever form it came in (a Commit2In wrapper or bare,
// indented, its keys in any order, base64 of any line length). The
// wrapper's SectorNum is left out: the sector's identity names the sector,
// and the replica id binds the C1 to it. It is never longer than the
// proof's C1 bound (c1.MaxSize, twice the longest compact C1), so the
// workers read it within MaxC1Bytes.
func CanonicalC1(c *c1.SealCommitPhase1Output) ([]byte, error) {
	b, err := c1.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("canonical C1: %w", err)
	}
	limit, err := c1.MaxSize(c.RegisteredProof)
	if err != nil {
		return nil, fmt.Errorf("canonical C1: %w", err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("canonical C1: %d bytes, over the %d-byte bound of a %s C1", len(b), limit, c.RegisteredProof)
	}
	return b, nil
}

// canonicalRef is the identity of c, bound to prover's sector, with its
// canonical bytes: the digest is theirs, so the same C1 in other bytes is
// the same job.
func canonicalRef(c *c1.SealCommitPhase1Output, prover [32]byte, sector uint64) (job.Ref, []byte, error) {
	canon, err := CanonicalC1(c)
	if err != nil {
		return job.Ref{}, nil, err
	}
	ref := job.NewRef(prover, sector, canon)
	ref.Proof = c.RegisteredProof.String()
	return ref, canon, nil
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
		wrapped, isWrapped, werr := WrappedSectorID(a)
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
		pub := PublicOf(c, proverID, sectorID)
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

// checkHints refuses hints that disagree with an input naming its own
// prover and sector (what: "the update input"; sector: "the update
// input is of sector").
func checkHints(h scheme.Hints, prover [32]byte, sector uint64, what, sectorIs string) error {
	if h.ProverID != "" {
		p, err := seal.ParseHex32(h.ProverID)
		if err != nil {
			return fmt.Errorf("--prover-id: %w", err)
		}
		if p != prover {
			return fmt.Errorf("--prover-id %x, but %s is of prover %x", p, what, prover)
		}
	}
	if h.SectorID != "" && h.SectorID != fmt.Sprint(sector) {
		return fmt.Errorf("--sector-id %s, but %s %d", h.SectorID, sectorIs, sector)
	}
	return nil
}
