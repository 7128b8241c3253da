package snark

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/filecoin/update"
	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/internal/units"
	"github.com/c2flow/c2flow/prover/packed"
)

// WriteInfo implements scheme.Scheme: it counts one partition of a registered proof's
// StackedCircuit (the blank circuit, with r1cs.Counter: no matrix is
// stored, so the 32GiB circuit fits a small machine) and writes its sizes
// to w: human lines, then one line of exactly the key=value pairs
// constraints= (as synthesized, without bellperson's per-input
// constraints) inputs= (ONE included) aux= a_nnz= b_nnz= c_nnz= (nonzeros
// without the per-input constraints), then the synthesis memory of one
// partition.
func (*Scheme) WriteInfo(w io.Writer, proof string) error {
	info, err := proofs.ByName(proof)
	if err != nil {
		return fmt.Errorf("circuit info: %w", err)
	}
	s := circuit.ShapeOf(info)
	st, took, err := sealStats(info)
	if err != nil {
		return err
	}
	return writeCounts(w, st, 0, took, func(tw io.Writer) {
		fmt.Fprintf(tw, "proof\t%s (id %d, api %v)\n", info.Name, info.ID(), info.APIVersion)
		fmt.Fprintf(tw, "sector\t%s, %d nodes, %d layers, tree R/C %s\n", units.Bytes(info.SectorSize), info.Nodes, info.Layers, info.TreeR)
		fmt.Fprintf(tw, "partitions\t%d x %d challenges\n", info.Partitions, info.ChallengesPerPartition)
		fmt.Fprintf(tw, "circuit shape\t%v\n", s)
	})
}

// WriteUpdateInfo is WriteInfo for a registered update proof (SnapDeals):
// it counts one partition of its EmptySectorUpdateCircuit, and writes the
// same lines, the key=value line in the same form.
func WriteUpdateInfo(w io.Writer, proof string) error {
	info, err := proofs.UpdateByName(proof)
	if err != nil {
		return fmt.Errorf("circuit info: %w", err)
	}
	s, err := circuit.UpdateShapeOf(info.SectorSize)
	if err != nil {
		return fmt.Errorf("circuit info %s: %w", info.Name, err)
	}
	st, took, err := updateStats(info.Name, s)
	if err != nil {
		return err
	}
	return writeCounts(w, st, 0, took, func(tw io.Writer) {
		fmt.Fprintf(tw, "update proof\t%s (id %d, api %v)\n", info.Name, int64(info.Proof), info.APIVersion)
		fmt.Fprintf(tw, "sector\t%s, %d nodes, tree R %d-%d-%d\n", units.Bytes(info.SectorSize), s.SectorNodes, s.Tree.Base, s.Tree.Sub, s.Tree.Top)
		fmt.Fprintf(tw, "partitions\t%d x %d challenges, h in %v (default %d), %d apex leaves\n", s.Partitions(), s.Challenges(), s.Hs(), s.HDefault(), s.ApexLeaves())
		params, _ := update.ParamsFiles(update.CacheID(s))
		fmt.Fprintf(tw, "parameters\t%s (and .vk)\n", params)
	})
}

// WriteInfo implements scheme.InfoWriter (WritePoStInfo).
func (*PoStScheme) WriteInfo(w io.Writer, proof string) error { return WritePoStInfo(w, proof) }

// WritePoStInfo is WriteInfo for a registered PoSt proof (a WindowPoSt
// partition or a WinningPoSt): one sector's FallbackPoSt circuit counted
// and multiplied by the partition's sector count (a partition is that many
// copies and nothing else: circuit.CountPoSt), the same lines and the
// key=value line in the same form.
func WritePoStInfo(w io.Writer, proof string) error {
	info, err := proofs.PoStByName(proof)
	if err != nil {
		return fmt.Errorf("circuit info: %w", err)
	}
	s := circuit.PoStShapeOf(info)
	all, sys, took, err := postStats(info)
	if err != nil {
		return err
	}
	return writeCounts(w, all, sys, took, func(tw io.Writer) {
		fmt.Fprintf(tw, "PoSt proof\t%s (%v, id %d)\n", info.Name, info.Type, int64(info.Proof))
		fmt.Fprintf(tw, "sector\t%s, %d nodes, tree R %s\n", units.Bytes(info.SectorSize), info.Nodes, s.Tree)
		fmt.Fprintf(tw, "partition\t%d sectors x %d challenges (one sector counted, times %d)\n", s.Sectors, s.Challenges, s.Sectors)
	})
}

// sealStats counts one partition of a seal proof's StackedCircuit.
func sealStats(info proofs.SealProofInfo) (r1cs.Stats, time.Duration, error) {
	s := circuit.ShapeOf(info)
	return count(info.Name, func(cnt *r1cs.Counter) error { return circuit.Synthesize(cnt, s, nil) })
}

// updateStats counts one partition of an update proof's circuit.
func updateStats(name string, s circuit.UpdateShape) (r1cs.Stats, time.Duration, error) {
	return count(name, func(cnt *r1cs.Counter) error { return circuit.SynthesizeUpdate(cnt, s, nil) })
}

// postStats counts one sector's FallbackPoSt circuit and multiplies it by
// the partition's sector count (circuit.CountPoSt); sys is the recorded
// system a device host keeps: one sector's, repeated.
func postStats(info proofs.PoStProofInfo) (r1cs.Stats, int64, time.Duration, error) {
	s := circuit.PoStShapeOf(info)
	one := s
	one.Sectors = 1
	st, took, err := count(info.Name, func(cnt *r1cs.Counter) error { return circuit.SynthesizePoSt(cnt, one, nil) })
	if err != nil {
		return r1cs.Stats{}, 0, 0, err
	}
	k := s.Sectors
	all := r1cs.Stats{Constraints: k * st.Constraints, Inputs: 1 + k*(st.Inputs-1), Aux: k * st.Aux,
		ANNZ: k * st.ANNZ, BNNZ: k * st.BNNZ, CNNZ: k * st.CNNZ,
		AAuxDensity: k * st.AAuxDensity, BInputDensity: 1 + k*(st.BInputDensity-1), BAuxDensity: k * st.BAuxDensity}
	if st.BInputDensity == 0 {
		all.BInputDensity = 0
	}
	return all, packed.SystemBytes(st.Constraints, st.ANNZ+st.BNNZ+st.CNNZ), took, nil
}

// count counts a circuit's constraints and variables by synthesizing it
// into a counter (no witness), and says how long that took.
func count(name string, synth func(*r1cs.Counter) error) (r1cs.Stats, time.Duration, error) {
	t0 := time.Now()
	cnt := r1cs.NewCounter()
	if err := synth(cnt); err != nil {
		return r1cs.Stats{}, 0, fmt.Errorf("circuit info %s: counting: %w", name, err)
	}
	if err := cnt.Err(); err != nil {
		return r1cs.Stats{}, 0, fmt.Errorf("circuit info %s: counting: %w", name, err)
	}
	return cnt.Stats(), time.Since(t0), nil
}

// writeCounts writes a partition circuit's counts: head's lines, then the
// sizes, one key=value line (constraints= as synthesized, without
// bellperson's per-input constraints; inputs= with ONE; aux=; a_nnz=
// b_nnz= c_nnz= nonzeros without the per-input constraints), then what a
// partition holds: its witness packed (at most) beside what it was dense,
// the recorded system a device host keeps per circuit (sys bytes, 0: the
// whole circuit's), and one device phase's NTT vectors.
func writeCounts(w io.Writer, st r1cs.Stats, sys int64, took time.Duration, head func(io.Writer)) error {
	// bellperson's prover appends input_i · 0 = 0 per input: a, b and c
	// have one entry per synthesized constraint and per input.
	rows := uint64(st.Constraints) + uint64(st.Inputs)
	wires := st.Inputs + st.Aux
	abc := 3 * 32 * rows
	assignment := 32 * uint64(wires)
	domain := units.Log2(int(rows))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head(tw)
	fmt.Fprintf(tw, "constraints / partition\t%d synthesized + %d per-input = %d (FFT domain 2^%d)\n", st.Constraints, st.Inputs, rows, domain)
	fmt.Fprintf(tw, "variables\t%d inputs (ONE included), %d aux\n", st.Inputs, st.Aux)
	fmt.Fprintf(tw, "nonzeros\tA %d, B %d, C %d (synthesized constraints)\n", st.ANNZ, st.BNNZ, st.CNNZ)
	fmt.Fprintf(tw, "densities\tA aux %d, B inputs %d, B aux %d\n", st.AAuxDensity, st.BInputDensity, st.BAuxDensity)
	fmt.Fprintf(tw, "count time\t%v\n", took.Round(time.Millisecond))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "constraints=%d inputs=%d aux=%d a_nnz=%d b_nnz=%d c_nnz=%d\n",
		st.Constraints, st.Inputs, st.Aux, st.ANNZ, st.BNNZ, st.CNNZ)
	packedMax := packed.MaxBytes(wires)
	fmt.Fprintf(w, "witness per partition: packed at most %d B (%s; every value a field element, the worst case: a 0 or 1 takes 2 bits), dense W, a, b, c %d B (%s), not held: a, b, c are evaluated at the device\n",
		packedMax, units.Bytes(uint64(packedMax)), abc+assignment, units.Bytes(abc+assignment))
	how := "4 B a row and matrix, 6 B a nonzero"
	if sys == 0 {
		sys = wholeSystemBytes(st)
	} else {
		how = "one sector's, repeated"
	}
	fmt.Fprintf(w, "recorded system (a device host, once per circuit): %d B (%s: %s)\n", sys, units.Bytes(uint64(sys)), how)
	lane := gpu.HostQuotientBytes(1 << domain)
	_, err := fmt.Fprintf(w, "device phase (one lane, NTTs on the host): %d B (%s: two vectors of 2^%d)\n", lane, units.Bytes(uint64(lane)), domain)
	return err
}

// wholeSystemBytes is the recorded system of a whole circuit of st's
// counts (per-input constraints added: one nonzero each, in A).
func wholeSystemBytes(st r1cs.Stats) int64 {
	return packed.SystemBytes(st.Constraints+st.Inputs, st.ANNZ+st.BNNZ+st.CNNZ+st.Inputs)
}
