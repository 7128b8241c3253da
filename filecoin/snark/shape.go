package snark

import (
	"fmt"

	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/prover/packed"
)

// recordCached returns the R1CS of sp's blank circuit, per-input
// constraints appended (as bellperson's parameter generator records it),
// from the cache in dir or recorded and cached there, and its digest.
func recordCached(dir string, sp *spec) (*r1cs.Shape, string, error) {
	cache := r1cs.ShapeCache{Dir: dir}
	return cache.GetOrRecord(sp.shapeName, sp.record)
}

// record records sp's blank circuit in memory, per-input constraints
// appended, as bellperson's parameter generator records it.
func (sp *spec) record() (*r1cs.Shape, error) {
	sh := r1cs.NewShape()
	if err := sp.synth(sh); err != nil {
		return nil, err
	}
	sh.AppendInputConstraints()
	return sh, sh.Err()
}

// Counts are the sizes of one partition's circuit: inputs (ONE included),
// aux variables, and constraints with bellperson's per-input ones.
type Counts r1cs.Counts

// PartitionOverhead is what a partition's synthesis holds beyond its
// Solution: the circuit witness FromC1 extracts (a few MB: the openings of
// the partition's challenges) and the builder's scratch. Measured on the
// 2KiB circuit (TestProve2KiB), with the dense witness builder: after
// Synthesize the live heap exceeded the Solution by 9 KB; the synthesis
// allocated 556 MB in all, the rest short-lived garbage of the builder's
// linear combinations that the GC reclaims as it goes.
const PartitionOverhead = 8 << 20

// Bytes is the most one partition's synthesis holds: its assignment
// packed (packed.MaxBytes: every value a field element, the rare worst
// case; Filecoin's circuits hold mostly bits), plus PartitionOverhead.
// A host's budget reserves it while the synthesis runs; the witness then
// holds its Solution's Bytes, a small part of it.
func (c Counts) Bytes() int64 {
	return packed.MaxBytes(c.Inputs+c.Aux) + PartitionOverhead
}

// DenseBytes is what one partition held before it was packed: the dense
// assignment and a, b, c, 32 bytes an element (circuit info compares).
func (c Counts) DenseBytes() int64 {
	return 32 * int64(c.Inputs+c.Aux+3*c.Constraints)
}

// knownCounts are one partition's counts per sector size, as
// `c2flow circuit info --proof P` counts the blank circuit (r1cs.Counter;
// README "One partition per registered proof"), the per-input constraints
// added: the same for V1, V1_1 and synthetic proofs (one circuit shape).
// 32GiB's equal curio's measurement of rust-fil-proofs' circuit
// (filecoin/circuit TestCount32GiB, cuzk-project.md); 64GiB's were counted
// with `c2flow circuit info --proof StackedDrg64GiBV1_1` (43 s, 250 MiB
// peak RSS: 15.6 GiB a partition). TestKnownCounts
// checks them against the counter (32GiB and 64GiB with
// C2FLOW_CIRCUIT_32GIB=1).
var knownCounts = map[uint64]Counts{
	2 << 10:   {Inputs: 40, Aux: 2_685_673, Constraints: 2_687_921 + 40},
	8 << 20:   {Inputs: 40, Aux: 3_842_449, Constraints: 3_844_929 + 40},
	512 << 20: {Inputs: 40, Aux: 4_420_837, Constraints: 4_423_433 + 40},
	32 << 30:  {Inputs: 328, Aux: 130_169_893, Constraints: 130_278_541 + 328},
	64 << 30:  {Inputs: 328, Aux: 131_076_643, Constraints: 131_185_849 + 328},
}

// CountsOf returns one partition's counts for proof without recording its
// circuit (see knownCounts).
func CountsOf(proof string) (Counts, error) {
	info, err := proofs.ByName(proof)
	if err != nil {
		return Counts{}, err
	}
	c, ok := knownCounts[info.SectorSize]
	if !ok {
		return Counts{}, fmt.Errorf("%s: no known circuit counts for sector size %d", proof, info.SectorSize)
	}
	return c, nil
}

// PartitionBytes is the most one partition's synthesis of proof holds
// (Counts.Bytes), known before its circuit is loaded: what a host's
// budget reserves while it runs.
func PartitionBytes(proof string) (int64, error) {
	c, err := CountsOf(proof)
	if err != nil {
		return 0, err
	}
	return c.Bytes(), nil
}

// knownUpdateCounts are one update partition's counts per sector size
// (EmptySectorUpdateCircuit, the per-input constraints added), as
// `c2flow circuit info --update-proof P` counts the blank circuit; the
// 32GiB's constraints equal storage-proofs-update tests/circuit.rs'
// 81,049,499 (filecoin/circuit TestUpdate32GiB counts them); 2KiB's its
// 1,705,039 (TestKnownUpdateCounts records the 2KiB circuit and compares).
var knownUpdateCounts = map[uint64]Counts{
	2 << 10:   {Inputs: UpdateInputs, Aux: 1_703_569, Constraints: 1_705_039 + UpdateInputs},
	8 << 20:   {Inputs: UpdateInputs, Aux: 9_998_039, Constraints: 10_007_503 + UpdateInputs},
	512 << 20: {Inputs: UpdateInputs, Aux: 57_401_314, Constraints: 57_450_479 + UpdateInputs},
	32 << 30:  {Inputs: UpdateInputs, Aux: 80_978_488, Constraints: 81_049_499 + UpdateInputs},
	64 << 30:  {Inputs: UpdateInputs, Aux: 84_931_220, Constraints: 85_006_101 + UpdateInputs},
}
