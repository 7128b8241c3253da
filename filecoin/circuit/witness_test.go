package circuit

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/filecoin/seal"
)

// sealTest seals a test sector of proof p with filecoin/seal's sealer.
func sealTest(t *testing.T, p proofs.RegisteredSealProof, sectorID uint64) *seal.Sealed {
	t.Helper()
	var prover [32]byte
	prover[0] = 7
	s, err := seal.Seal(context.Background(), seal.TestParams(p, prover, sectorID))
	if err != nil {
		t.Fatalf("seal %v: %v", p, err)
	}
	return s
}

// synthesizeChecked builds the checked witness of partition k of c.
func synthesizeChecked(t *testing.T, c *c1.SealCommitPhase1Output, k int) (*r1cs.Witness, Shape) {
	t.Helper()
	s, w, err := FromC1(c, k)
	if err != nil {
		t.Fatalf("FromC1: %v", err)
	}
	cs := r1cs.NewWitness(r1cs.WitnessOptions{Check: true})
	if err := Synthesize(cs, s, w); err != nil {
		t.Fatalf("Synthesize: %v", err)
	}
	return cs, s
}

// TestSealedSectorsSatisfy: the witness of every partition of sealed test
// sectors satisfies the circuit, has the counted shape, and its input
// assignment equals the public inputs computed from the sector's public
// data alone (the check stacked_circuit.rs makes against
// generate_public_inputs).
func TestSealedSectorsSatisfy(t *testing.T) {
	ps := []proofs.RegisteredSealProof{
		proofs.StackedDrg2KiBV1,
		proofs.StackedDrg2KiBV1_1,
		proofs.StackedDrg2KiBV1_1_Feat_SyntheticPoRep,
	}
	if !testing.Short() {
		ps = append(ps, proofs.StackedDrg8MiBV1_1)
	}
	for _, p := range ps {
		t.Run(p.String(), func(t *testing.T) {
			sealed := sealTest(t, p, 3)
			info, err := proofs.Lookup(p)
			if err != nil {
				t.Fatal(err)
			}
			replicaID, err := sealed.Public.ReplicaID()
			if err != nil {
				t.Fatal(err)
			}
			for k := range info.Partitions {
				cs, s := synthesizeChecked(t, sealed.C1, k)
				if err := cs.Err(); err != nil {
					t.Fatalf("partition %d: %v", k, err)
				}
				cnt := r1cs.NewCounter()
				if err := Synthesize(cnt, s, nil); err != nil {
					t.Fatal(err)
				}
				st := cnt.Stats()
				if cs.NumConstraints() != st.Constraints || len(cs.Inputs) != st.Inputs || len(cs.Aux) != st.Aux {
					t.Errorf("witness has %d constraints, %d inputs, %d aux; blank circuit %d, %d, %d",
						cs.NumConstraints(), len(cs.Inputs), len(cs.Aux), st.Constraints, st.Inputs, st.Aux)
				}
				if len(cs.Inputs) != s.NumInputs() {
					t.Errorf("%d inputs, NumInputs %d", len(cs.Inputs), s.NumInputs())
				}
				pub := sealed.Public
				want, err := PublicInputsOf(info, replicaID, pub.CommD, pub.CommR, pub.Seed, k)
				if err != nil {
					t.Fatal(err)
				}
				if len(want) != len(cs.Inputs)-1 {
					t.Fatalf("generated %d public inputs, circuit has %d (+ONE)", len(want), len(cs.Inputs)-1)
				}
				one := cs.Inputs[0]
				if !one.IsOne() {
					t.Errorf("input 0 is not ONE")
				}
				for i := range want {
					if !want[i].Equal(&cs.Inputs[i+1]) {
						t.Errorf("partition %d public input %d: generated %s, circuit %s", k, i, want[i].String(), cs.Inputs[i+1].String())
					}
				}
				t.Logf("partition %d: %d constraints, %d inputs, %d aux", k, cs.NumConstraints(), len(cs.Inputs), len(cs.Aux))
			}
		})
	}
}

// clone returns a deep copy of c (through its JSON encoding).
func clone(t *testing.T, c *c1.SealCommitPhase1Output) *c1.SealCommitPhase1Output {
	t.Helper()
	b, err := c1.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	d, err := c1.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func flip(d *[32]byte) { d[0] ^= 1 }

// TestTamperedC1Unsatisfied: a C1 with one value changed yields a witness
// that the checking builder rejects, naming the first failing constraint's
// namespace path.
func TestTamperedC1Unsatisfied(t *testing.T) {
	sealed := sealTest(t, proofs.StackedDrg2KiBV1_1, 5)
	for _, tc := range []struct {
		name   string
		tamper func(c *c1.SealCommitPhase1Output)
		path   string // the failing constraint's path
	}{
		{"comm_r", func(c *c1.SealCommitPhase1Output) { flip(&c.CommR) },
			"enforce comm_r = H(comm_c || comm_r_last)"},
		{"data leaf", func(c *c1.SealCommitPhase1Output) {
			flip(&c.VanillaProofs.Partitions[0][0].CommDProofs.Data.Single.Leaf)
		}, "challenge_0/comm_d_inclusion/enforce root is correct"},
		{"tree D sibling", func(c *c1.SealCommitPhase1Output) {
			flip(&c.VanillaProofs.Partitions[0][1].CommDProofs.Data.Single.Path.Path[2].Hashes[0])
		}, "challenge_1/comm_d_inclusion/enforce root is correct"},
		{"drg parent row", func(c *c1.SealCommitPhase1Output) {
			flip(&c.VanillaProofs.Partitions[0][0].ReplicaColumnProofs.DrgParents[2].Column.Rows[1])
		}, "challenge_0/drg_parent_2_inclusion/enforce root is correct"},
		{"expander parent path index", func(c *c1.SealCommitPhase1Output) {
			el := &c.VanillaProofs.Partitions[0][1].ReplicaColumnProofs.ExpParents[3].InclusionProof.Data.Single.Path.Path[0]
			el.Index = (el.Index + 1) % 8
		}, "challenge_1/exp_parent_3_inclusion/enforce root is correct"},
		{"challenge node", func(c *c1.SealCommitPhase1Output) {
			lp := &c.VanillaProofs.Partitions[0][0].LabelingProofs[0]
			lp.Node ^= 1
		}, "challenge_0/comm_r_last_data_inclusion/enforce root is correct"},
		{"tree R sibling", func(c *c1.SealCommitPhase1Output) {
			flip(&c.VanillaProofs.Partitions[0][1].CommRLastProof.Data.Single.Path.Path[1].Hashes[6])
		}, "challenge_1/comm_r_last_data_inclusion/enforce root is correct"},
		{"challenged column path", func(c *c1.SealCommitPhase1Output) {
			flip(&c.VanillaProofs.Partitions[0][0].ReplicaColumnProofs.CX.InclusionProof.Data.Single.Path.Path[0].Hashes[3])
		}, "challenge_0/c_x_inclusion/enforce root is correct"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := clone(t, sealed.C1)
			tc.tamper(c)
			cs, _ := synthesizeChecked(t, c, 0)
			err := cs.Err()
			var ue *r1cs.UnsatisfiedError
			if !errors.As(err, &ue) || !errors.Is(err, r1cs.ErrUnsatisfied) {
				t.Fatalf("got %v, want an unsatisfied constraint", err)
			}
			if ue.Path != tc.path {
				t.Errorf("first unsatisfied constraint %d at %q, want %q", ue.Index, ue.Path, tc.path)
			}
		})
	}
}

// TestFromC1Errors: layouts the circuit cannot take are errors, not panics.
func TestFromC1Errors(t *testing.T) {
	sealed := sealTest(t, proofs.StackedDrg2KiBV1_1, 6)
	for _, tc := range []struct {
		name   string
		k      int
		tamper func(c *c1.SealCommitPhase1Output)
		want   string
	}{
		{"partition out of range", 1, func(*c1.SealCommitPhase1Output) {}, "partition 1 of 1"},
		{"inconsistent comm_c", 0, func(c *c1.SealCommitPhase1Output) {
			flip(&c.VanillaProofs.Partitions[0][1].ReplicaColumnProofs.CX.InclusionProof.Data.Single.Root)
		}, "inconsistent comm_c"},
		{"non-canonical row", 0, func(c *c1.SealCommitPhase1Output) {
			for i := range 32 {
				c.VanillaProofs.Partitions[0][0].ReplicaColumnProofs.ExpParents[0].Column.Rows[0][i] = 0xff
			}
		}, "expander parent 0: row 0"},
		{"short path", 0, func(c *c1.SealCommitPhase1Output) {
			p := &c.VanillaProofs.Partitions[0][0].CommRLastProof.Data.Single.Path
			p.Path = p.Path[:1]
		}, "tree R path"},
		{"missing parent", 0, func(c *c1.SealCommitPhase1Output) {
			r := &c.VanillaProofs.Partitions[0][1].ReplicaColumnProofs
			r.DrgParents = r.DrgParents[:5]
		}, "challenge 1: 5 drg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := clone(t, sealed.C1)
			tc.tamper(c)
			_, _, err := FromC1(c, tc.k)
			if !errors.Is(err, ErrWitness) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want ErrWitness mentioning %q", err, tc.want)
			}
		})
	}
}
