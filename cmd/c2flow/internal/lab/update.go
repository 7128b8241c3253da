package lab

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/commcid"
	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/c2flow/c2flow/filecoin/merkle"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/filecoin/update"
	"github.com/c2flow/c2flow/internal/atomicfile"
	"github.com/c2flow/c2flow/scheme"
)

// UpdateManifest is updates.json, what `c2flow update` wrote: per sector
// its update proof, the three commitments (hex of the 32 bytes, and as the
// CIDs Curio holds) and its vanilla proofs' file.
type UpdateManifest struct {
	Sectors []UpdatedSector `json:"sectors"`
}

// UpdatedSector is one updated sector of a manifest.
type UpdatedSector struct {
	ProverID    string `json:"prover_id"`
	SectorID    uint64 `json:"sector_id"`
	SealProof   string `json:"seal_proof"`
	UpdateProof string `json:"update_proof"`
	H           int    `json:"h"`
	CommROld    string `json:"comm_r_old"`
	CommRNew    string `json:"comm_r_new"`
	CommDNew    string `json:"comm_d_new"`
	SectorKey   string `json:"sector_key_cid"` // comm_r_old as a CID
	SealedCID   string `json:"sealed_cid"`     // comm_r_new
	UnsealedCID string `json:"unsealed_cid"`   // comm_d_new
	Vanilla     string `json:"vanilla"`        // <id>.snap-vproof.json
}

// RunUpdate is the test updater: it seals committed-capacity sectors of
// --proof, encodes deterministic new data into each replica and writes
// its update vanilla proofs as Curio stores them (<id>.snap-vproof.json)
// with updates.json. Every partition's vanilla proof is verified before
// it is written.
func RunUpdate(ctx context.Context, args []string) error {
	fs := cli.NewFlags("update")
	proof := fs.String("proof", "StackedDrg2KiBV1_1", "the sealed sectors' registered seal proof (dense sealing: 2KiB and 8MiB)")
	n := fs.Int("sectors", 1, "number of sectors")
	first := fs.Uint64("first-id", 1, "sector id of the first sector")
	out := fs.String("out", "update", "output directory")
	proverHex := fs.String("prover-id", "", "the 32-byte prover id in hex (default: the bytes of \"c2flow test prover\")")
	if err := fs.Parse(args); err != nil {
		return err
	}
	info, err := proofs.ByName(*proof)
	if err != nil {
		return fmt.Errorf("update: --proof: %w", err)
	}
	up, err := proofs.UpdateForSectorSize(info.SectorSize)
	if err != nil {
		return fmt.Errorf("update: %w", err)
	}
	s, err := circuit.UpdateShapeOf(info.SectorSize)
	if err != nil {
		return fmt.Errorf("update: %w", err)
	}
	if info.Nodes > seal.MaxSealNodes || *n < 1 {
		return fmt.Errorf("update: %d sectors of %s: the test updater seals 1 or more sectors of at most %d nodes in full", *n, info.Name, seal.MaxSealNodes)
	}
	if err := seal.CheckSectorID(*first+uint64(*n-1), "update: last sector id"); err != nil {
		return err
	}
	prover := scheme.TestProver()
	if *proverHex != "" {
		if prover, err = seal.ParseHex32(*proverHex); err != nil {
			return fmt.Errorf("update: --prover-id: %w", err)
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("update: %w", err)
	}
	var m UpdateManifest
	for i := range *n {
		id := *first + uint64(i)
		t0 := time.Now()
		sec, err := updateSector(ctx, s, info, prover, id)
		if err != nil {
			return err
		}
		var parts []*update.PartitionProof
		for k := range s.Partitions() {
			p, err := sec.PartitionProof(k)
			if err == nil {
				err = p.Verify(s, k, sec.Public())
			}
			if err != nil {
				return fmt.Errorf("update sector %d: %w", id, err)
			}
			parts = append(parts, p)
		}
		js, err := update.EncodeCurioVanilla(parts)
		if err != nil {
			return err
		}
		name := fmt.Sprintf("%d.snap-vproof.json", id)
		if err := atomicfile.WriteBytes(filepath.Join(*out, name), js); err != nil {
			return fmt.Errorf("update sector %d: %w", id, err)
		}
		rOld, rNew, dNew := hash.ElementToLE(sec.CommROld), hash.ElementToLE(sec.CommRNew), hash.ElementToLE(sec.CommDNew)
		m.Sectors = append(m.Sectors, UpdatedSector{ProverID: hex.EncodeToString(prover[:]), SectorID: id, SealProof: info.Name, UpdateProof: up.Name, H: sec.H,
			CommROld: hex.EncodeToString(rOld[:]), CommRNew: hex.EncodeToString(rNew[:]), CommDNew: hex.EncodeToString(dNew[:]),
			SectorKey: commcid.String(rOld, commcid.Sealed), SealedCID: commcid.String(rNew, commcid.Sealed), UnsealedCID: commcid.String(dNew, commcid.Unsealed),
			Vanilla: name})
		fmt.Fprintf(os.Stderr, "updated sector %d (%s, %d partitions) in %v -> %s\n", id, up.Name, s.Partitions(), time.Since(t0).Round(time.Millisecond), filepath.Join(*out, name))
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	return atomicfile.WriteBytes(filepath.Join(*out, "updates.json"), append(b, '\n'))
}

// updateSector seals a committed-capacity sector and encodes the new data
// of (prover, id) into it: node i is Trim254(SHA-256("c2flow/update/data"
// || prover || id LE || i LE)), a valid field element.
func updateSector(ctx context.Context, s circuit.UpdateShape, info proofs.SealProofInfo, prover [32]byte, id uint64) (*update.Replica, error) {
	p := seal.TestParams(info.Proof, prover, id)
	p.CC, p.KeepReplica = true, true
	sealed, err := seal.Seal(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("update sector %d: seal: %w", id, err)
	}
	data := make([]merkle.Node, s.SectorNodes)
	var buf [len("c2flow/update/data") + 32 + 16]byte
	k := copy(buf[:], "c2flow/update/data")
	k += copy(buf[k:], prover[:])
	binary.LittleEndian.PutUint64(buf[k:], id)
	for i := range data {
		binary.LittleEndian.PutUint64(buf[k+8:], uint64(i))
		data[i] = merkle.Node(hash.Trim(sha256.Sum256(buf[:])))
	}
	return update.UpdateSealed(s, s.HDefault(), sealed, data)
}
