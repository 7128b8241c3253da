package post

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/c2flow/c2flow/internal/parallel"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/c2flow/c2flow/filecoin/merkle"
	"github.com/c2flow/c2flow/filecoin/proofs"
)

// Partition is what one partition's circuit proves: the proof's public
// data and the vanilla proofs laid out as the circuit takes them
// (post_util.rs single_partition_vanilla_proofs), verified.
type Partition struct {
	Info       proofs.PoStProofInfo
	Randomness [32]byte
	// K is the partition's index (k).
	K int
	// Sectors are the circuit's public sectors before padding: a window
	// partition's sectors; a winning proof's one sector CircuitSectors
	// times (verify_winning_post).
	Sectors []PublicSector
	// Proofs are the circuit's CircuitSectors sector proofs: a window
	// partition's, the last repeated to fill it; for winning, the one
	// sector's 66 openings as 66 one-opening sector proofs.
	Proofs []*SectorProof
}

// MaxPartitions bounds a partition index: a deadline's sectors fill far
// fewer window partitions, and the bound keeps sector positions (k ·
// sector_count + i) far from overflowing.
const MaxPartitions = 1 << 20

// circuitSectors is compound.rs's chunk of public sectors for partition
// k: window, the k-th chunk of CircuitSectors; winning, the one replica
// CircuitSectors times (verify_winning_post and
// generate_winning_post build the public inputs so).
func circuitSectors(info proofs.PoStProofInfo, replicas []PublicSector, k int) ([]PublicSector, error) {
	if k < 0 || k >= MaxPartitions {
		return nil, fmt.Errorf("post: %s: partition %d (0 to %d)", info.Name, k, MaxPartitions-1)
	}
	if info.Type == proofs.PoStWinning {
		if len(replicas) != info.SectorCount || k != 0 {
			return nil, fmt.Errorf("post: %s proves %d sector in partition 0, not %d in partition %d", info.Name, info.SectorCount, len(replicas), k)
		}
		out := make([]PublicSector, info.CircuitSectors)
		for i := range out {
			out[i] = replicas[0]
		}
		return out, nil
	}
	n := info.CircuitSectors
	if len(replicas) == 0 || k*n >= len(replicas) {
		return nil, fmt.Errorf("post: %s: partition %d of %d sectors (%d a partition)", info.Name, k, len(replicas), n)
	}
	return replicas[k*n : min(len(replicas), (k+1)*n)], nil
}

// circuitChallenge is the leaf the circuit's sector i (of the unpadded
// ones) opens for its challenge j in partition k: compound.rs
// generate_public_inputs.
func circuitChallenge(info proofs.PoStProofInfo, randomness [32]byte, sectorID uint64, k, i, j int) uint64 {
	idx := ChallengeIndex(info.APIVersion, k*info.CircuitSectors+i, info.CircuitChallenges, j)
	return LeafChallenge(randomness, sectorID, idx, info.Nodes)
}

// PublicInputs is FallbackPoStCompound::generate_public_inputs for
// partition k of a PoSt of replicas (in the proof's order; Curio sorts
// them by sector number), from public data alone, without ONE: per
// circuit sector its comm_r, then each challenge's leaf index (the packed
// path bits); the last sector's inputs repeated to fill the partition.
// A winning proof takes its one replica.
func PublicInputs(info proofs.PoStProofInfo, randomness [32]byte, replicas []PublicSector, k int) ([]fr.Element, error) {
	if err := checkCanonical("randomness", randomness); err != nil {
		return nil, fmt.Errorf("post: public inputs: %w", err)
	}
	secs, err := circuitSectors(info, replicas, k)
	if err != nil {
		return nil, err
	}
	return publicInputs(info, randomness, secs, k)
}

// publicInputs computes the inputs of the unpadded circuit sectors secs
// of partition k.
func publicInputs(info proofs.PoStProofInfo, randomness [32]byte, secs []PublicSector, k int) ([]fr.Element, error) {
	per := 1 + info.CircuitChallenges
	out := make([]fr.Element, 0, info.CircuitSectors*per)
	for i, s := range secs {
		commR, err := hash.ElementFromLE(s.CommR)
		if err != nil {
			return nil, fmt.Errorf("post: public inputs: sector %d's comm_r: %w", s.ID, err)
		}
		out = append(out, commR)
		for j := range info.CircuitChallenges {
			var e fr.Element
			e.SetUint64(circuitChallenge(info, randomness, s.ID, k, i, j))
			out = append(out, e)
		}
	}
	for len(out) < cap(out) {
		out = append(out, out[len(out)-per:len(out)]...)
	}
	return out, nil
}

// NewPartition lays out partition k's vanilla proofs for the circuit and
// verifies them natively, as single_partition_vanilla_proofs and
// FallbackPoSt::verify do (each opening for its own challenge, comm_r =
// H(comm_c, comm_r_last)); the first failure is a *SectorError naming the
// sector and challenge. vanilla are the partition's vanilla proofs in the
// proof's order, one a sector (GenerateSingleVanillaProof's), at most
// SectorCount; a winning proof has one, of 66 openings. The public sectors
// are the vanilla proofs' own (sector id, comm_r), as
// generate_*_post_with_vanilla take them: the caller compares them with
// the sectors it expects.
func NewPartition(info proofs.PoStProofInfo, randomness [32]byte, k int, vanilla []*VanillaProof) (*Partition, error) {
	if err := checkCanonical("randomness", randomness); err != nil {
		return nil, fmt.Errorf("post: partition %d: %w", k, err)
	}
	if len(vanilla) == 0 || len(vanilla) > info.SectorCount {
		return nil, fmt.Errorf("post: %s partition %d: %d vanilla proofs, want 1 to %d", info.Name, k, len(vanilla), info.SectorCount)
	}
	replicas := make([]PublicSector, len(vanilla))
	for i, v := range vanilla {
		if v == nil {
			return nil, fmt.Errorf("post: %s partition %d: vanilla proof %d missing", info.Name, k, i)
		}
		if len(v.Sectors) != 1 {
			return nil, &SectorError{Sector: v.SectorID, Challenge: -1, Err: fmt.Errorf("%d sector proofs, want 1", len(v.Sectors))}
		}
		replicas[i] = PublicSector{ID: v.SectorID, CommR: v.CommR}
	}
	p := &Partition{Info: info, Randomness: randomness, K: k, Proofs: make([]*SectorProof, 0, info.CircuitSectors)}
	// A window partition's sectors are chunk k of the proof's: their
	// positions start at k·sector_count.
	if k < 0 || k >= MaxPartitions {
		return nil, fmt.Errorf("post: %s: partition %d (0 to %d)", info.Name, k, MaxPartitions-1)
	}
	p.Sectors = replicas
	if info.Type == proofs.PoStWinning {
		var err error
		if p.Sectors, err = circuitSectors(info, replicas, k); err != nil {
			return nil, err
		}
	}
	if info.Type == proofs.PoStWinning {
		sp := &vanilla[0].Sectors[0]
		if err := checkCount(p.Sectors[0], len(sp.Openings), SectorChallenges(info, randomness, vanilla[0].SectorID, 0)); err != nil {
			return nil, err
		}
		for _, o := range sp.Openings {
			p.Proofs = append(p.Proofs, &SectorProof{Openings: []*merkle.Proof{o}, CommC: sp.CommC, CommRLast: sp.CommRLast})
		}
	} else {
		for _, v := range vanilla {
			p.Proofs = append(p.Proofs, &v.Sectors[0])
		}
		for len(p.Proofs) < info.CircuitSectors {
			p.Proofs = append(p.Proofs, p.Proofs[len(p.Proofs)-1])
		}
	}
	if err := p.verify(); err != nil {
		return nil, err
	}
	return p, nil
}

// verify is FallbackPoSt::verify over the circuit's sectors: each sector
// proof's comm_r, opening count and openings, each for the leaf its
// circuit sector and challenge are given. Padding (the last proof
// repeated) is verified once. The sectors are verified on every core: a
// 32GiB window partition's 2,349 sectors take about 7 ms each on one
// (23,490 openings, 17 s), and every decode verifies them. The error is
// the first failing sector's in partition order, whatever the scheduling
// (parallel.FirstError).
func (p *Partition) verify() error {
	n := len(p.Sectors)
	todo := len(p.Proofs)
	for todo > n && p.Proofs[todo-1] == p.Proofs[n-1] {
		todo--
	}
	return parallel.FirstError(runtime.GOMAXPROCS(0), todo, p.verifySector)
}

// verifySector verifies circuit sector i's proof (verify's loop body).
func (p *Partition) verifySector(i int) error {
	n := len(p.Sectors)
	sp, pi := p.Proofs[i], min(i, n-1)
	pub := p.Sectors[pi]
	if err := checkCommR(pub, sp); err != nil {
		return err
	}
	leaves := make([]uint64, p.Info.CircuitChallenges)
	for j := range leaves {
		leaves[j] = circuitChallenge(p.Info, p.Randomness, pub.ID, p.K, pi, j)
	}
	// Name a winning challenge by its opening in the vanilla proof.
	name := func(j int) int { return j }
	if p.Info.Type == proofs.PoStWinning {
		name = func(int) int { return i }
	}
	if len(sp.Openings) != len(leaves) {
		err := checkCount(pub, len(sp.Openings), leaves)
		var se *SectorError
		if errors.As(err, &se) && se.Challenge >= 0 {
			se.Challenge = name(se.Challenge)
		}
		return err
	}
	for j, o := range sp.Openings {
		if err := checkOpening(p.Info, pub, sp, o, name(j), leaves[j]); err != nil {
			return err
		}
	}
	return nil
}

// PublicInputs are the partition's public inputs (PublicInputs of its
// sectors), from its public data.
func (p *Partition) PublicInputs() ([]fr.Element, error) {
	return publicInputs(p.Info, p.Randomness, p.Sectors, p.K)
}

// Shape is the partition's circuit.
func (p *Partition) Shape() circuit.PoStShape { return circuit.PoStShapeOf(p.Info) }

// Witness is the circuit's assignment (compound.rs circuit: Sector::circuit
// of each sector proof with its public sector, the last public sector for
// the padding). Repeated proofs share one circuit sector.
func (p *Partition) Witness() (*circuit.PoStWitness, error) {
	if len(p.Proofs) == 0 {
		return nil, fmt.Errorf("post: %s partition %d: public data only, no vanilla proofs to witness", p.Info.Name, p.K)
	}
	w := &circuit.PoStWitness{Sectors: make([]*circuit.PoStSector, len(p.Proofs))}
	done := map[*SectorProof]*circuit.PoStSector{}
	n := len(p.Sectors)
	for i, sp := range p.Proofs {
		pub := p.Sectors[min(i, n-1)]
		if c := done[sp]; c != nil && i >= n {
			w.Sectors[i] = c
			continue
		}
		c, err := circuitSector(pub, sp)
		if err != nil {
			return nil, fmt.Errorf("post: witness of sector %d: %w", pub.ID, err)
		}
		done[sp] = c
		w.Sectors[i] = c
	}
	return w, nil
}

func circuitSector(pub PublicSector, sp *SectorProof) (*circuit.PoStSector, error) {
	c := &circuit.PoStSector{Leaves: make([]fr.Element, len(sp.Openings)), Paths: make([]circuit.Path, len(sp.Openings))}
	var err error
	for _, f := range []struct {
		name string
		dst  *fr.Element
		b    merkle.Node
	}{{"comm_r", &c.CommR, pub.CommR}, {"comm_c", &c.CommC, sp.CommC}, {"comm_r_last", &c.CommRLast, sp.CommRLast}} {
		if *f.dst, err = hash.ElementFromLE(f.b); err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
	}
	for j, o := range sp.Openings {
		if c.Leaves[j], err = hash.ElementFromLE(o.Leaf); err != nil {
			return nil, fmt.Errorf("challenge %d leaf: %w", j, err)
		}
		if c.Paths[j], err = circuit.PathOf(o); err != nil {
			return nil, fmt.Errorf("challenge %d: %w", j, err)
		}
	}
	return c, nil
}

// NewPublicPartition is partition k's public data alone, without vanilla
// proofs: what verifying its Groth16 proof needs (verify_window_post's
// chunk k, verify_winning_post's one sector). sectors are the partition's
// own, in the proof's order (1 to SectorCount; a winning proof's one).
// Its Proofs are nil: Witness is an error.
func NewPublicPartition(info proofs.PoStProofInfo, randomness [32]byte, k int, sectors []PublicSector) (*Partition, error) {
	if err := checkCanonical("randomness", randomness); err != nil {
		return nil, fmt.Errorf("post: partition %d: %w", k, err)
	}
	if k < 0 || k >= MaxPartitions {
		return nil, fmt.Errorf("post: %s: partition %d (0 to %d)", info.Name, k, MaxPartitions-1)
	}
	if len(sectors) == 0 || len(sectors) > info.SectorCount {
		return nil, fmt.Errorf("post: %s partition %d: %d sectors, want 1 to %d", info.Name, k, len(sectors), info.SectorCount)
	}
	p := &Partition{Info: info, Randomness: randomness, K: k, Sectors: sectors}
	if info.Type == proofs.PoStWinning {
		var err error
		if p.Sectors, err = circuitSectors(info, sectors, k); err != nil {
			return nil, err
		}
	}
	return p, nil
}
