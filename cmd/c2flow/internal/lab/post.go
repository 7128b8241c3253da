package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/c2flow/c2flow/filecoin/merkle"
	"github.com/c2flow/c2flow/filecoin/post"
	"github.com/c2flow/c2flow/filecoin/post/posttest"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/internal/atomicfile"
	"github.com/c2flow/c2flow/scheme"
)

// maxPoStVanillaNodes bounds the sectors post-vanilla seals: it seals them
// in full, in memory (2KiB in milliseconds, 8MiB in seconds); 512MiB
// would take minutes and gigabytes for a test generator. Larger sectors
// are sparse replicas instead (posttest.Sparse: tree R zero but the
// challenged leaves), whose vanilla proofs are as valid: a PoSt opens
// tree R alone.
const maxPoStVanillaNodes = (8 << 20) / proofs.NodeSize

// maxPoStVanillaWindow bounds the partitions of a window proof
// post-vanilla makes: enough for any multi-partition test.
const maxPoStVanillaWindow = 64

// RunPostVanilla is the PoSt test generator: it seals committed-capacity
// sectors and writes their PoSt vanilla proofs as filecoin-ffi's
// GenerateSingleVanillaProof returns them, and the verify-post record of
// their public data.
func RunPostVanilla(ctx context.Context, args []string) error {
	return postVanilla(ctx, args, os.Stderr)
}

func postVanilla(ctx context.Context, args []string, logw io.Writer) error {
	fs := cli.NewFlags("post-vanilla")
	proofName := fs.String("post-proof", "", "the registered PoSt proof by filecoin-proofs-api's name (StackedDrgWindow2KiBV1_2, StackedDrgWinning32GiBV1, ...; 2KiB and 8MiB sectors are sealed, larger ones are sparse replicas)")
	proverHex := fs.String("prover-id", "", "the 32-byte prover id in hex, a field element (default: the bytes of \"c2flow test prover\")")
	n := fs.Int("sectors", 2, "number of sectors in the provider's set: numbers --first-id .. +N-1; window proves them all, winning the one it selects")
	first := fs.Uint64("first-id", 1, "the first sector number")
	randHex := fs.String("randomness", "", "the 32-byte chain randomness in hex; masked as Curio masks it (byte 31 &= 0x3f)")
	out := fs.String("out", "", "output directory: <sector>.vproof per proved sector, post.json")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 || *proofName == "" || *randHex == "" || *out == "" {
		fs.Usage()
		return errors.New("post-vanilla: usage: c2flow post-vanilla --post-proof P --randomness HEX --out DIR [--prover-id HEX] [--sectors N] [--first-id N]")
	}
	info, err := proofs.PoStByName(*proofName)
	if err != nil {
		return fmt.Errorf("post-vanilla: --post-proof: %w", err)
	}
	sparse := info.Nodes > maxPoStVanillaNodes
	if sparse {
		fmt.Fprintf(logw, "post-vanilla: %s: %d-byte sectors are sparse replicas (tree R zero but the challenged leaves), not sealed\n", info.Name, info.SectorSize)
	}
	if *n < 1 {
		return fmt.Errorf("post-vanilla: --sectors %d: at least 1", *n)
	}
	// A window proof proves every sector of the set, each made here, one
	// file each: an unbounded count fills the disk and memory.
	if max := maxPoStVanillaWindow * info.SectorCount; info.Type == proofs.PoStWindow && *n > max {
		return fmt.Errorf("post-vanilla: --sectors %d: a window proof of %s proves each, sealed here in full; at most %d (%d partitions of %d sectors)", *n, info.Name, max, maxPoStVanillaWindow, info.SectorCount)
	}
	if *first > seal.MaxSectorID-uint64(*n-1) {
		return fmt.Errorf("post-vanilla: --first-id %d with --sectors %d: the last sector number is over %d, Filecoin's largest", *first, *n, uint64(seal.MaxSectorID))
	}
	prover := scheme.TestProver()
	if *proverHex != "" {
		if prover, err = seal.ParseHex32(*proverHex); err != nil {
			return fmt.Errorf("post-vanilla: --prover-id: %w", err)
		}
	}
	// Filecoin refuses a prover id that is not a field element
	// (as_safe_commitment), window and winning alike.
	if _, err := hash.ElementFromLE(prover); err != nil {
		return fmt.Errorf("post-vanilla: --prover-id %x: not a field element: %w", prover, err)
	}
	given, err := seal.ParseHex32(*randHex)
	if err != nil {
		return fmt.Errorf("post-vanilla: --randomness: %w", err)
	}
	randomness := post.MaskRandomness(given)
	if randomness != given {
		fmt.Fprintf(logw, "post-vanilla: randomness masked as Curio masks it (byte 31 %#02x -> %#02x)\n", given[31], randomness[31])
	}
	sealProof, err := postSealProof(info)
	if err != nil {
		return fmt.Errorf("post-vanilla: %w", err)
	}
	// The proved sectors and their positions in the proof: window, every
	// sector in number order; winning, the one it selects, at 0 (the set
	// is only counted: a provider's whole set is never sealed here).
	var ids []uint64
	if info.Type == proofs.PoStWinning {
		pos, err := post.WinningSectors(info, randomness, prover, uint64(*n))
		if err != nil {
			return fmt.Errorf("post-vanilla: %w", err)
		}
		for _, p := range pos {
			ids = append(ids, *first+p)
		}
	} else {
		for i := range *n {
			ids = append(ids, *first+uint64(i))
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("post-vanilla: %w", err)
	}
	rec := post.Record{RegisteredProof: info.Name, ProverID: prover, Randomness: randomness}
	for i, id := range ids {
		t0 := time.Now()
		var v *post.VanillaProof
		if sparse {
			v, err = posttest.Sparse(info, randomness, id, i)
			if err == nil {
				v, err = readBack(info, randomness, id, i, v)
			}
		} else {
			v, err = postVanillaProof(ctx, info, sealProof, prover, randomness, id, i)
		}
		if err != nil {
			return fmt.Errorf("post-vanilla: %w", err)
		}
		path := filepath.Join(*out, fmt.Sprintf("%d.vproof", id))
		if err := atomicfile.WriteBytes(path, v.Bincode()); err != nil {
			return fmt.Errorf("post-vanilla: sector %d: %w", id, err)
		}
		rec.Replicas = append(rec.Replicas, post.Replica{SectorID: id, CommR: v.CommR})
		fmt.Fprintf(logw, "post-vanilla: sector %d (%s, position %d): %d openings in %v -> %s\n", id, info.Name, i, len(v.Sectors[0].Openings), time.Since(t0).Round(time.Millisecond), path)
	}
	b, err := json.Marshal(&rec)
	if err != nil {
		return fmt.Errorf("post-vanilla: post.json: %w", err)
	}
	if err := atomicfile.WriteBytes(filepath.Join(*out, "post.json"), append(b, '\n')); err != nil {
		return fmt.Errorf("post-vanilla: %w", err)
	}
	fmt.Fprintf(logw, "post-vanilla: %s: %d sectors proved of %d, %d partitions; the verify-post record (without its proof): %s\n",
		info.Name, len(ids), *n, info.Partitions(len(ids)), filepath.Join(*out, "post.json"))
	return nil
}

// postSealProof is the V1_1 seal proof of a PoSt proof's sector size (the
// registered proofs of either kind are numbered by size class, modulo 5).
func postSealProof(info proofs.PoStProofInfo) (proofs.RegisteredSealProof, error) {
	p := proofs.StackedDrg2KiBV1_1 + proofs.RegisteredSealProof(info.Proof%5)
	s, err := proofs.Lookup(p)
	if err != nil {
		return 0, fmt.Errorf("the seal proof of %s: %w", info.Name, err)
	}
	if s.SectorSize != info.SectorSize || s.TreeR != info.TreeR {
		return 0, fmt.Errorf("the seal proof of %s: %s has %d-byte sectors and tree %v, not %d and %v", info.Name, s.Name, s.SectorSize, s.TreeR, info.SectorSize, info.TreeR)
	}
	return p, nil
}

// postVanillaProof seals committed-capacity sector id deterministically
// (seal.TestParams of the prover and sector) and returns its vanilla
// proof at position index of the proof, decoded again from its bytes.
func postVanillaProof(ctx context.Context, info proofs.PoStProofInfo, sp proofs.RegisteredSealProof, prover, randomness [32]byte, id uint64, index int) (*post.VanillaProof, error) {
	p := seal.TestParams(sp, prover, id)
	p.CC, p.KeepReplica = true, true
	s, err := seal.Seal(ctx, p)
	if err != nil {
		return nil, err
	}
	tree, err := merkle.Build(merkle.PoseidonHasher{}, merkle.Shape{Base: info.TreeR.Base, Sub: info.TreeR.Sub, Top: info.TreeR.Top}, s.Replica)
	if err != nil {
		return nil, fmt.Errorf("sector %d: tree R: %w", id, err)
	}
	if tree.Root() != merkle.Node(s.CommRLast) {
		return nil, fmt.Errorf("sector %d: tree R's root %x is not the sealer's comm_r_last %x", id, tree.Root(), s.CommRLast)
	}
	v, err := post.GenerateVanilla(info, randomness, id, index, merkle.Node(s.CommC), tree)
	if err != nil {
		return nil, err
	}
	if v.CommR != merkle.Node(s.Public.CommR) {
		return nil, fmt.Errorf("sector %d: the vanilla proof's comm_r %x is not the sealed comm_r %x", id, v.CommR, s.Public.CommR)
	}
	return readBack(info, randomness, id, index, v)
}

// readBack is v as a reader of its bytes gets it: what is written decodes
// to a proof that verifies.
func readBack(info proofs.PoStProofInfo, randomness [32]byte, id uint64, index int, v *post.VanillaProof) (*post.VanillaProof, error) {
	back, err := post.DecodeVanilla(v.Bincode())
	if err != nil {
		return nil, fmt.Errorf("sector %d: %w", id, err)
	}
	if err := post.VerifySector(info, randomness, index, back); err != nil {
		return nil, err
	}
	return back, nil
}
