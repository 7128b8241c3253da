package snark

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

// SealTest implements scheme.Scheme: the test updater. For each sector
// it seals a committed-capacity sector of the update proof's size (its
// V1_1 seal proof, dense: 2KiB and 8MiB), encodes deterministic new data
// into the replica (update.UpdateSealed) and writes the update's vanilla
// proofs, each partition verified first, as Curio stores them
// (<id>.snap-vproof.json) and as c2flow proves them (<id>.update.json, the
// UpdateInput: the file returned), with updates.json.
func (*UpdateScheme) SealTest(ctx context.Context, r scheme.SealRequest) ([]string, error) {
	up, err := updateInfo(r.Proof)
	if err != nil {
		return nil, fmt.Errorf("update: %w", err)
	}
	info, err := proofs.ByName(up.Name + "_1")
	if err != nil {
		return nil, fmt.Errorf("update: the seal proof of %s: %w", up.Name, err)
	}
	s, err := circuit.UpdateShapeOf(info.SectorSize)
	if err != nil {
		return nil, fmt.Errorf("update: %w", err)
	}
	if info.Nodes > seal.MaxSealNodes || r.N < 1 {
		return nil, fmt.Errorf("update: %d sectors of %s: the test updater seals 1 or more sectors of at most %d nodes in full", r.N, info.Name, seal.MaxSealNodes)
	}
	if err := seal.CheckSectorID(r.First+uint64(r.N-1), "update: last sector id"); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("update: %w", err)
	}
	var m update.Manifest
	var files []string
	for i := range r.N {
		id := r.First + uint64(i)
		t0 := time.Now()
		rep, err := updateSector(ctx, s, info, r.Prover, id)
		if err != nil {
			return nil, err
		}
		in := &UpdateInput{Proof: up, ProverID: r.Prover, SectorID: id,
			CommROld: hash.ElementToLE(rep.CommROld), CommRNew: hash.ElementToLE(rep.CommRNew), CommDNew: hash.ElementToLE(rep.CommDNew)}
		var parts []*update.PartitionProof
		for k := range s.Partitions() {
			p, err := rep.PartitionProof(k)
			if err == nil {
				err = p.Verify(s, k, rep.Public())
			}
			if err != nil {
				return nil, fmt.Errorf("update sector %d: %w", id, err)
			}
			parts = append(parts, p)
			in.Vanilla = append(in.Vanilla, p.Bincode())
		}
		curio, err := update.EncodeCurioVanilla(parts)
		if err != nil {
			return nil, err
		}
		raw, err := in.Encode()
		if err != nil {
			return nil, err
		}
		vname, iname := fmt.Sprintf("%d.snap-vproof.json", id), fmt.Sprintf("%d.update.json", id)
		for _, f := range []struct {
			name string
			b    []byte
		}{{vname, curio}, {iname, raw}} {
			if err := atomicfile.WriteBytes(filepath.Join(r.Dir, f.name), f.b); err != nil {
				return nil, fmt.Errorf("update sector %d: %w", id, err)
			}
		}
		files = append(files, filepath.Join(r.Dir, iname))
		m.Sectors = append(m.Sectors, update.ManifestSector{ProverID: hex.EncodeToString(r.Prover[:]), SectorID: id, SealProof: info.Name, UpdateProof: up.Name, H: rep.H,
			CommROld: hex.EncodeToString(in.CommROld[:]), CommRNew: hex.EncodeToString(in.CommRNew[:]), CommDNew: hex.EncodeToString(in.CommDNew[:]),
			SectorKey: commcid.String(in.CommROld, commcid.Sealed), SealedCID: commcid.String(in.CommRNew, commcid.Sealed), UnsealedCID: commcid.String(in.CommDNew, commcid.Unsealed),
			Vanilla: vname, Input: iname})
		if r.Progress != nil {
			fmt.Fprintf(r.Progress, "updated sector %d (%s, %d partitions) in %v -> %s\n", id, up.Name, s.Partitions(), time.Since(t0).Round(time.Millisecond), filepath.Join(r.Dir, iname))
		}
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := atomicfile.WriteBytes(filepath.Join(r.Dir, "updates.json"), append(b, '\n')); err != nil {
		return nil, err
	}
	return files, nil
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
