package snark

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/internal/units"
)

// Sizes of bellperson's uncompressed points in a .params file, and of
// gnark-crypto's affine points in memory: the same.
const (
	g1Bytes = 96
	g2Bytes = 192
)

// Plan is what a host needs to prove one registered proof, from its
// circuit's counts (the blank circuit counted, nothing recorded: a 32GiB
// circuit is planned on a laptop).
type Plan struct {
	Proof string
	// Partitions is a job's: a seal or update proof's per sector; a PoSt
	// job is one partition.
	Partitions int
	Stats      r1cs.Stats // one partition's, as synthesized
	Domain     uint64     // the FFT domain: rows (constraints and per-input ones) rounded up to a power of 2
	// ParamsBytes is the .params file bellperson writes (and Filecoin
	// publishes): the verifying key (VKBytes), then H (domain-1 points),
	// L (aux), A (inputs and aux with an A entry), B in G1 and B in G2
	// (wires with a B entry), uncompressed, each list behind a u32
	// length. Exact: equal to a development setup's file (TestPlanIsExact).
	ParamsBytes, VKBytes int64
	// KeyBytes is the proving key's points in memory (gnark-crypto
	// affine: as many bytes as the file's). KeyFileBytes is the key file
	// every worker process of the box maps (groth.WriteKeyFile): the
	// points, the densities (a byte a wire and matrix), its header.
	KeyBytes, KeyFileBytes int64
	// SystemBytes is the recorded constraint system the device phase
	// evaluates a, b, c from.
	SystemBytes int64
	// PartitionBytes is the most one partition's synthesis holds (packed:
	// every value a field element, the worst case).
	PartitionBytes int64
	// LaneBytes is one device lane's NTT vectors on the host.
	LaneBytes int64
	// DeviceBytes is one GPU with the proving key's G1 bases resident:
	// the bases, the wire and H scalars, a, b, c and the NTT twiddles.
	// DeviceMinBytes streams the bases instead (1M points at a time).
	// icicle's MSM scratch is not counted (issue 57).
	DeviceBytes, DeviceMinBytes int64
}

// PlanOf plans proof: a registered seal proof, an update profile
// (UpdateProfile) or a registered PoSt proof.
func PlanOf(proof string) (Plan, error) {
	var p Plan
	var sys int64
	var err error
	if info, e := proofs.PoStByName(proof); e == nil {
		p.Proof, p.Partitions = info.Name, 1
		p.Stats, sys, _, err = postStats(info)
	} else if info, e := proofs.UpdateByName(trimUpdate(proof)); e == nil {
		s, serr := circuit.UpdateShapeOf(info.SectorSize)
		if serr != nil {
			return p, fmt.Errorf("plan %s: %w", proof, serr)
		}
		p.Proof, p.Partitions = UpdateProfile(info), s.Partitions()
		p.Stats, _, err = updateStats(info.Name, s)
	} else if info, e := proofs.ByName(proof); e == nil {
		p.Proof, p.Partitions = info.Name, info.Partitions
		p.Stats, _, err = sealStats(info)
	} else {
		return p, fmt.Errorf("plan: %q is no registered seal, update or PoSt proof", proof)
	}
	if err != nil {
		return p, err
	}
	st := p.Stats
	rows := st.Constraints + st.Inputs
	p.Domain = uint64(1) << units.Log2(rows)
	wires := int64(st.Inputs + st.Aux)
	a := int64(st.Inputs + st.AAuxDensity)
	b := int64(st.BInputDensity + st.BAuxDensity)
	h := int64(p.Domain) - 1
	// alpha, beta, delta in G1; beta, gamma, delta in G2; IC behind its
	// length.
	p.VKBytes = 3*g1Bytes + 3*g2Bytes + 4 + int64(st.Inputs)*g1Bytes
	g1 := h + int64(st.Aux) + a + b
	p.KeyBytes = g1*g1Bytes + b*g2Bytes
	p.ParamsBytes = p.VKBytes + 5*4 + p.KeyBytes
	p.KeyFileBytes = keyFileBytes(h, int64(st.Aux), a, b, wires)
	if sys == 0 {
		sys = wholeSystemBytes(st)
	}
	p.SystemBytes = sys
	p.PartitionBytes = Counts{Inputs: st.Inputs, Aux: st.Aux, Constraints: rows}.Bytes()
	p.LaneBytes = gpu.HostQuotientBytes(p.Domain)
	scalars := 32 * (wires + int64(p.Domain)) // the wires, and H
	ntt := 32 * 4 * int64(p.Domain)           // a, b, c and the twiddles
	p.DeviceBytes = g1*g1Bytes + scalars + ntt
	p.DeviceMinBytes = min(g1, 1<<20)*g1Bytes + scalars + ntt
	return p, nil
}

// keyFileBytes is the size of a key file (internal/mapped's layout: a
// page of header, each section at a multiple of 64 bytes, a 32-byte
// digest) of a key with h Z points, k K points, a A points, b B points
// in G1 and G2, over wires wires.
func keyFileBytes(h, k, a, b, wires int64) int64 {
	off := int64(4096)
	for _, n := range []int64{a * g1Bytes, b * g1Bytes, k * g1Bytes, h * g1Bytes, b * g2Bytes, wires, wires} {
		off = (off+63)/64*64 + n
	}
	return off + 32
}

// ProcessBytes is what one worker process holds beyond the mapped key and
// system and its partitions: its runtime, clients and tables (bench load
// measured 15-20 MB of private memory in a process that holds a 512MiB
// PoRep circuit mapped; a worker's Temporal and S3 clients add some).
const ProcessBytes = 64 << 20

// trimUpdate takes an update profile's name to its update proof's.
func trimUpdate(proof string) string {
	name, _ := strings.CutPrefix(proof, UpdatePrefix)
	return name
}

// HostBytes is the memory a host needs for the proof with processes
// worker processes, partitionWorkers partitions in flight and gpus
// device lanes: the key file and the system once (mapped by every
// process, one copy in the page cache), each process's own, then the
// partitions and the
// lanes.
func (p Plan) HostBytes(processes, partitionWorkers, gpus int) int64 {
	return p.KeyFileBytes + p.SystemBytes + int64(processes)*ProcessBytes + int64(partitionWorkers)*p.PartitionBytes + int64(gpus)*p.LaneBytes
}

// Write writes the plan for people, then one line of key=value pairs
// (plain integers, bytes), for a host of processes worker processes,
// partitionWorkers partitions in flight and gpus devices.
func (p Plan) Write(w io.Writer, processes, partitionWorkers, gpus int) error {
	b := func(n int64) string { return units.Bytes(uint64(n)) }
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "proof\t%s: %d partition(s) a job, %d constraints each (FFT domain 2^%d), %d inputs, %d aux\n",
		p.Proof, p.Partitions, p.Stats.Constraints+p.Stats.Inputs, units.Log2(int(p.Domain)), p.Stats.Inputs, p.Stats.Aux)
	fmt.Fprintf(tw, "disk\t%s: the .params file (%s of it the verifying key), once per box\n", b(p.ParamsBytes), b(p.VKBytes))
	fmt.Fprintf(tw, "keys in memory\t%s: the proving key's points (a key file of %s, mapped once per box: c2flow params import)\n", b(p.KeyBytes), b(p.KeyFileBytes))
	fmt.Fprintf(tw, "system in memory\t%s: the recorded constraint system, mapped once per box\n", b(p.SystemBytes))
	fmt.Fprintf(tw, "per partition\t%s: one synthesis in flight (packed, at most)\n", b(p.PartitionBytes))
	fmt.Fprintf(tw, "per device lane\t%s on the host (NTT vectors)\n", b(p.LaneBytes))
	fmt.Fprintf(tw, "per GPU\t%s with the G1 bases resident, %s streaming them (icicle's MSM scratch not counted)\n", b(p.DeviceBytes), b(p.DeviceMinBytes))
	fmt.Fprintf(tw, "this host\t%s RAM for %d worker process(es) (sharing one mapped key and system, %s each of their own), %d partition(s) in flight, %d device(s)\n",
		b(p.HostBytes(processes, partitionWorkers, gpus)), processes, b(ProcessBytes), partitionWorkers, gpus)
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "params_bytes=%d vk_bytes=%d key_bytes=%d key_file_bytes=%d system_bytes=%d partition_bytes=%d lane_bytes=%d device_bytes=%d device_min_bytes=%d host_bytes=%d\n",
		p.ParamsBytes, p.VKBytes, p.KeyBytes, p.KeyFileBytes, p.SystemBytes, p.PartitionBytes, p.LaneBytes, p.DeviceBytes, p.DeviceMinBytes, p.HostBytes(processes, partitionWorkers, gpus))
	return err
}
