package post

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/merkle"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
)

// randomNode is a random field element's 32 bytes.
func randomNode(rng *rand.Rand) merkle.Node {
	var n merkle.Node
	for i := range n {
		n[i] = byte(rng.Uint32())
	}
	n[31] &= 0x3f
	return n
}

// makeVanilla is GenerateVanilla over a random replica: tree R of info's
// shape over random leaves, a random comm_c. It returns the proof through
// its bincode bytes.
func makeVanilla(t *testing.T, rng *rand.Rand, info proofs.PoStProofInfo, randomness [32]byte, id uint64, sectorIndex int) *VanillaProof {
	t.Helper()
	leaves := make([]merkle.Node, info.Nodes)
	for i := range leaves {
		leaves[i] = randomNode(rng)
	}
	tree, err := merkle.Build(merkle.PoseidonHasher{}, treeShape(info), leaves)
	if err != nil {
		t.Fatal(err)
	}
	v, err := GenerateVanilla(info, randomness, id, sectorIndex, randomNode(rng), tree)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeVanilla(v.Bincode())
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// synthesizeChecked synthesizes p's circuit into a checking witness and
// returns its inputs without ONE.
func synthesizeChecked(t *testing.T, p *Partition) []fr.Element {
	t.Helper()
	w, err := p.Witness()
	if err != nil {
		t.Fatal(err)
	}
	cs := r1cs.NewWitness(r1cs.WitnessOptions{Check: true})
	if err := circuit.SynthesizePoSt(cs, p.Shape(), w); err != nil {
		t.Fatal(err)
	}
	if err := cs.Err(); err != nil {
		t.Fatalf("%s partition %d: %v", p.Info.Name, p.K, err)
	}
	if len(cs.Inputs) != p.Shape().NumInputs() {
		t.Fatalf("%d inputs, want %d", len(cs.Inputs), p.Shape().NumInputs())
	}
	return cs.Inputs[1:]
}

func equalInputs(t *testing.T, what string, got, want []fr.Element) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d inputs, public data gives %d", what, len(got), len(want))
	}
	for i := range got {
		if !got[i].Equal(&want[i]) {
			t.Fatalf("%s: input %d is %s, public data gives %s", what, i+1, got[i].String(), want[i].String())
		}
	}
}

// The circuit's input assignment equals the public inputs computed from
// public data alone (compound.rs generate_public_inputs), and the
// witness satisfies every constraint: 2KiB window partitions full and
// short (padding), a V1 proof's second partition (its challenges depend
// on the sectors' positions), a 2KiB winning proof (66 one-opening
// sectors), and an 8-4-2 tree (sub and top levels).
func TestPartitionInputs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	randomness := MaskRandomness([32]byte(randomNode(rng)))
	lookup := func(p proofs.RegisteredPoStProof) proofs.PoStProofInfo {
		info, err := proofs.LookupPoSt(p)
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	top := lookup(proofs.StackedDrgWindow2KiBV1_2)
	top.Name, top.Nodes, top.SectorSize, top.TreeR = "window 16KiB 8-4-2 (test)", 512, 512*32, proofs.TreeShape{Base: 8, Sub: 4, Top: 2}
	for _, tc := range []struct {
		name    string
		info    proofs.PoStProofInfo
		k       int
		sectors []uint64
	}{
		{"window V1_2, 2 sectors", lookup(proofs.StackedDrgWindow2KiBV1_2), 0, []uint64{3, 9}},
		{"window V1_2, 1 sector padded", lookup(proofs.StackedDrgWindow2KiBV1_2), 0, []uint64{7}},
		{"window V1, partition 1", lookup(proofs.StackedDrgWindow2KiBV1), 1, []uint64{20, 21}},
		{"window V1, partition 1 padded", lookup(proofs.StackedDrgWindow2KiBV1), 1, []uint64{20}},
		{"winning", lookup(proofs.StackedDrgWinning2KiBV1), 0, []uint64{42}},
		{"window 8-4-2", top, 0, []uint64{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var vs []*VanillaProof
			var replicas []PublicSector
			for i, id := range tc.sectors {
				v := makeVanilla(t, rng, tc.info, randomness, id, tc.k*tc.info.SectorCount+i)
				if err := VerifySector(tc.info, randomness, tc.k*tc.info.SectorCount+i, v); err != nil {
					t.Fatal(err)
				}
				vs = append(vs, v)
				replicas = append(replicas, PublicSector{ID: v.SectorID, CommR: v.CommR})
			}
			p, err := NewPartition(tc.info, randomness, tc.k, vs)
			if err != nil {
				t.Fatal(err)
			}
			got := synthesizeChecked(t, p)
			// From public data: the whole proof's replicas, partition k.
			all := append(make([]PublicSector, tc.k*tc.info.SectorCount), replicas...)
			for i := range tc.k * tc.info.SectorCount {
				all[i] = PublicSector{ID: 1000 + uint64(i), CommR: randomNode(rng)}
			}
			want, err := PublicInputs(tc.info, randomness, all, tc.k)
			if err != nil {
				t.Fatal(err)
			}
			equalInputs(t, tc.name, got, want)
			pi, err := p.PublicInputs()
			if err != nil {
				t.Fatal(err)
			}
			equalInputs(t, tc.name+" (Partition.PublicInputs)", pi, want)
			// Other randomness gives other inputs.
			other, err := PublicInputs(tc.info, MaskRandomness([32]byte(randomNode(rng))), all, tc.k)
			if err != nil {
				t.Fatal(err)
			}
			if other[1].Equal(&want[1]) && other[2].Equal(&want[2]) {
				t.Error("other randomness, same challenges")
			}
		})
	}
}

// A partition's bad vanilla proof is refused by NewPartition, named: the
// second sector of a window partition, a winning proof's 41st opening.
func TestNewPartitionRefuses(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	randomness := MaskRandomness([32]byte(randomNode(rng)))
	wdw, _ := proofs.LookupPoSt(proofs.StackedDrgWindow2KiBV1_2)
	a, b := makeVanilla(t, rng, wdw, randomness, 1, 0), makeVanilla(t, rng, wdw, randomness, 2, 1)
	b.Sectors[0].Openings[4].Base[1].Hashes[0][3] ^= 1
	var se *SectorError
	if _, err := NewPartition(wdw, randomness, 0, []*VanillaProof{a, b}); !errors.As(err, &se) || se.Sector != 2 || se.Challenge != 4 {
		t.Errorf("window: %v", err)
	}
	if _, err := NewPartition(wdw, randomness, 0, []*VanillaProof{a, a, a}); err == nil {
		t.Error("3 sectors in a 2-sector partition")
	}
	win, _ := proofs.LookupPoSt(proofs.StackedDrgWinning2KiBV1)
	w := makeVanilla(t, rng, win, randomness, 9, 0)
	w.Sectors[0].Openings[40].Leaf[0] ^= 1
	if _, err := NewPartition(win, randomness, 0, []*VanillaProof{w}); !errors.As(err, &se) || se.Sector != 9 || se.Challenge != 40 {
		t.Errorf("winning: %v", err)
	}
	w.Sectors[0].Openings = w.Sectors[0].Openings[:65]
	if _, err := NewPartition(win, randomness, 0, []*VanillaProof{w}); !errors.As(err, &se) || se.Challenge != 65 {
		t.Errorf("winning, 65 openings: %v", err)
	}
	if _, err := NewPartition(win, randomness, 0, []*VanillaProof{w, w}); err == nil {
		t.Error("two winning sectors")
	}
}

// Sectors are verified on every core, and the error is still the first
// failing sector's in partition order, whatever finished first: a window
// partition of 12 sectors with sectors 5 and 6 tampered (6 in flight
// beside 5, and failing later, at its last opening) names 5, and a winning
// proof with openings 10 and 11 tampered names 10, every time.
func TestPartitionVerifyNamesTheFirstFailure(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	rng := rand.New(rand.NewPCG(7, 8))
	randomness := MaskRandomness([32]byte(randomNode(rng)))
	wdw, _ := proofs.LookupPoSt(proofs.StackedDrgWindow2KiBV1_2)
	wdw.SectorCount, wdw.CircuitSectors = 12, 12
	vs := make([]*VanillaProof, 12)
	for i := range vs {
		vs[i] = makeVanilla(t, rng, wdw, randomness, uint64(100+i), i)
	}
	if _, err := NewPartition(wdw, randomness, 0, vs); err != nil {
		t.Fatalf("12 good sectors: %v", err)
	}
	vs[6].Sectors[0].Openings[len(vs[6].Sectors[0].Openings)-1].Leaf[0] ^= 1
	vs[5].Sectors[0].Openings[0].Leaf[0] ^= 1
	win, _ := proofs.LookupPoSt(proofs.StackedDrgWinning2KiBV1)
	w := makeVanilla(t, rng, win, randomness, 9, 0)
	w.Sectors[0].Openings[11].Leaf[0] ^= 1
	w.Sectors[0].Openings[10].Leaf[0] ^= 1
	for range 50 {
		var se *SectorError
		if _, err := NewPartition(wdw, randomness, 0, vs); !errors.As(err, &se) || se.Sector != 105 || se.Challenge != 0 {
			t.Fatalf("window, sectors 105 and 106 tampered: %v; want sector 105, challenge 0", err)
		}
		if _, err := NewPartition(win, randomness, 0, []*VanillaProof{w}); !errors.As(err, &se) || se.Sector != 9 || se.Challenge != 10 {
			t.Fatalf("winning, openings 10 and 11 tampered: %v; want challenge 10", err)
		}
	}
}

// curio's post.vproof in a 32GiB window circuit of two sectors (the real
// 8-8-0 tree and 2^30 leaves; the real partition has 2349, see the large
// test): its sector and its repetition satisfy every constraint, and the
// inputs are those of postpub.json's public data.
func TestGoldenPartition(t *testing.T) {
	g := loadGolden(t)
	info := g.info
	info.SectorCount, info.CircuitSectors = 2, 2
	p, err := NewPartition(info, g.randomness, 0, []*VanillaProof{g.vp})
	if err != nil {
		t.Fatal(err)
	}
	got := synthesizeChecked(t, p)
	want, err := PublicInputs(info, g.randomness, []PublicSector{g.sector}, 0)
	if err != nil {
		t.Fatal(err)
	}
	equalInputs(t, "post.vproof", got, want)
	var leaf fr.Element
	leaf.SetUint64(707914199) // challenge 0's leaf (TestGoldenLeafChallenges)
	if !want[1].Equal(&leaf) || !want[12].Equal(&leaf) {
		t.Errorf("inputs 2 and 13: %s, %s", want[1].String(), want[12].String())
	}
}

// A witness that is not the vanilla proof's fails the circuit, at the
// constraint that checks it: a leaf at its inclusion's root, comm_r at
// H(comm_c, comm_r_last).
func TestPartitionWitnessTampered(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	randomness := MaskRandomness([32]byte(randomNode(rng)))
	info, _ := proofs.LookupPoSt(proofs.StackedDrgWindow2KiBV1_2)
	p, err := NewPartition(info, randomness, 0, []*VanillaProof{makeVanilla(t, rng, info, randomness, 5, 0)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		mutate func(w *circuit.PoStWitness)
		want   string
	}{
		{"leaf", func(w *circuit.PoStWitness) { w.Sectors[0].Leaves[3].SetUint64(1) }, "challenge_inclusion 3/enforce root is correct"},
		{"comm_r", func(w *circuit.PoStWitness) { w.Sectors[0].CommR.SetUint64(1) }, "enforce_comm_c_comm_r_last_hash_comm_r"},
	} {
		w, err := p.Witness()
		if err != nil {
			t.Fatal(err)
		}
		tc.mutate(w)
		cs := r1cs.NewWitness(r1cs.WitnessOptions{Check: true})
		if err := circuit.SynthesizePoSt(cs, p.Shape(), w); err != nil {
			t.Fatal(err)
		}
		if err := cs.Err(); !errors.Is(err, r1cs.ErrUnsatisfied) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// GenerateVanilla refuses a tree R that is not of the proof's sector: a
// 2KiB window proof over a 256-leaf 8-4-0 tree.
func TestGenerateVanillaWrongTree(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	leaves := make([]merkle.Node, 256)
	for i := range leaves {
		leaves[i] = randomNode(rng)
	}
	tree, err := merkle.Build(merkle.PoseidonHasher{}, merkle.Shape{Base: 8, Sub: 4}, leaves)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := proofs.LookupPoSt(proofs.StackedDrgWindow2KiBV1_2)
	var se *SectorError
	if _, err := GenerateVanilla(info, [32]byte{}, 1, 0, randomNode(rng), tree); !errors.As(err, &se) || se.Challenge != 0 {
		t.Errorf("8-4-0 tree for a 2KiB sector: %v", err)
	}
}

// Partition indices out of range are refused, never allocated or
// overflowed.
func TestPartitionIndexBounds(t *testing.T) {
	info, _ := proofs.LookupPoSt(proofs.StackedDrgWindow2KiBV1_2)
	win, _ := proofs.LookupPoSt(proofs.StackedDrgWinning2KiBV1)
	reps := []PublicSector{{ID: 1}}
	for _, k := range []int{-1, MaxPartitions, 1 << 62, -(1 << 62)} {
		if _, err := PublicInputs(info, [32]byte{}, reps, k); err == nil {
			t.Errorf("window partition %d", k)
		}
		if _, err := NewPartition(info, [32]byte{}, k, []*VanillaProof{{SectorID: 1, Sectors: make([]SectorProof, 1)}}); err == nil {
			t.Errorf("window partition %d", k)
		}
	}
	if _, err := PublicInputs(win, [32]byte{}, reps, 1); err == nil {
		t.Error("winning partition 1")
	}
	if _, err := PublicInputs(info, [32]byte{}, reps, 1); err == nil {
		t.Error("window partition 1 of 1 sector")
	}
	if err := VerifySector(info, [32]byte{}, 0, nil); err == nil {
		t.Error("nil proof")
	}
}
