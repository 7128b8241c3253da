package seal

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/c2flow/c2flow/filecoin/merkle"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/sdr"
)

// ccTreeD are the node values of each level of an all-zero (CC) sector's
// tree D, level 0 being the leaves: supraseal's CC_TREE_D_NODE_VALUES,
// filecoin-project/curio extern/supraseal/c1/tree_d_cc_nodes.h at commit
// e0294b0f948132d41e8f42f59fa949495d5fd3af (levels 0 to 30; its level 31
// is a zero placeholder). Level 6 is the 2KiB CC comm_d, level 18 the
// 8MiB one, level 30 the 32GiB one.
var ccTreeD = []string{
	"0000000000000000000000000000000000000000000000000000000000000000",
	"f5a5fd42d16a20302798ef6ed309979b43003d2320d9f0e8ea9831a92759fb0b",
	"3731bb99ac689f66eef5973e4a94da188f4ddcae580724fc6f3fd60dfd488333",
	"642a607ef886b004bf2c1978463ae1d4693ac0f410eb2d1b7a47fe205e5e750f",
	"57a2381a28652bf47f6bef7aca679be4aede5871ab5cf3eb2c08114488cb8526",
	"1f7ac9595510e09ea41c460b176430bb322cd6fb412ec57cb17d989a4310372f",
	"fc7e928296e516faade986b28f92d44a4f24b935485223376a799027bc18f833",
	"08c47b38ee13bc43f41b915c0eed9911a26086b3ed62401bf9d58b8d19dff624",
	"b2e47bfb11facd941f62af5c750f3ea5cc4df517d5c4f16db2b4d77baec1a32f",
	"f9226160c8f927bfdcc418cdf203493146008eaefb7d02194d5e548189005108",
	"2c1a964bb90b59ebfe0f6da29ad65ae3e417724a8f7c11745a40cac1e5e74011",
	"fee378cef16404b199ede0b13e11b624ff9d784fbbed878d83297e795e024f02",
	"8e9e2403fa884cf6237f60df25f83ee40dca9ed879eb6f6352d15084f5ad0d3f",
	"752d9693fa167524395476e317a98580f00947afb7a30540d625a9291cc12a07",
	"7022f60f7ef6adfa17117a52619e30cea82c68075adf1c667786ec506eef2d19",
	"d99887b973573a96e11393645236c17b1f4c7034d723c7a99f709bb4da61162b",
	"d0b530dbb0b4f25c5d2f2a28dfee808b53412a02931f18c499f5a254086b1326",
	"84c0421ba0685a01bf795a2344064fe424bd52a9d24377b394ff4c4b4568e811",
	"65f29e5d98d246c38b388cfc06db1f6b021303c5a289000bdce832a9c3ec421c",
	"a2247508285850965b7e334b3127b0c042b1d046dc54402137627cd8799ce13a",
	"dafdab6da9364453c26d33726b9fefe343be8f81649ec009aad3faff50617508",
	"d941d5e0d6314a995c33ffbd4fbe69118d73d4e5fd2cd31f0f7c86ebdd14e706",
	"514c435c3d04d349a5365fbd59ffc713629111785991c1a3c53af22079741a2f",
	"ad06853969d37d34ff08e09f56930a4ad19a89def60cbfee7e1d3381c1e71c37",
	"39560e7b13a93b07a243fd2720ffa7cb3e1d2e505ab3629e79f46313512cda06",
	"ccc3c012f5b05e811a2bbfdd0f6833b84275b47bf229c0052a82484f3c1a5b3d",
	"7df29b69773199e8f2b40b77919d048509eed768e2c7297b1f1437034fc3c62c",
	"66ce05a3667552cf45c02bcc4e8392919bdeac35de2ff56271848e9f7b675107",
	"d8610218425ab5e95b1ca6239d29a2e420d706a96f373e2f9c9a91d759d19b01",
	"6d364b1ef846441a5a4a68862314acc0a46f016717e53443e839eedf83c2853c",
	"077e5fde35c50a9303a55009e3498a4ebedff39c42b710b730d8ec7ac7afa63e",
}

func ccLevel(t *testing.T, l int) [32]byte {
	t.Helper()
	b, err := hex.DecodeString(ccTreeD[l])
	if err != nil || len(b) != 32 {
		t.Fatalf("ccTreeD[%d]: %v", l, err)
	}
	return [32]byte(b)
}

var testProver = [32]byte{0xc2, 0xf1, 0x0f}

// sealed2KiB seals a 2KiB sector of proof p (memoised per test binary
// would save little: 2KiB seals in milliseconds).
func mustSeal(t *testing.T, p proofs.RegisteredSealProof, sector uint64) *Sealed {
	t.Helper()
	s, err := Seal(context.Background(), TestParams(p, testProver, sector))
	if err != nil {
		t.Fatalf("seal %s: %v", p, err)
	}
	return s
}

// roundTrip encodes, decodes, verifies and re-encodes a sealed sector.
func roundTrip(t *testing.T, s *Sealed) *c1.SealCommitPhase1Output {
	t.Helper()
	b, err := c1.Marshal(s.C1)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	a, err := c1.DecodeBytes(b, c1.WithProof(s.Public.Proof))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if err := Verify(context.Background(), a.C1, s.Public); err != nil {
		t.Fatalf("verify decoded: %v", err)
	}
	b2, err := c1.Marshal(a.C1)
	if err != nil {
		t.Fatalf("re-marshal: %v", err)
	}
	if !bytes.Equal(b, b2) {
		t.Fatalf("re-encoding differs: %d vs %d bytes", len(b), len(b2))
	}
	// The Commit2In wrapper decodes to the same artifact.
	w, err := c1.MarshalCommit2In(int64(s.Public.SectorID), s.C1)
	if err != nil {
		t.Fatalf("marshal Commit2In: %v", err)
	}
	aw, err := c1.DecodeBytes(w)
	if err != nil {
		t.Fatalf("decode Commit2In: %v", err)
	}
	if !aw.Wrapped || aw.SectorNum != int64(s.Public.SectorID) {
		t.Fatalf("Commit2In: wrapped %v sector %d", aw.Wrapped, aw.SectorNum)
	}
	if err := Verify(context.Background(), aw.C1, s.Public); err != nil {
		t.Fatalf("verify Commit2In: %v", err)
	}
	return a.C1
}

func TestSealVerify2KiBAllVariants(t *testing.T) {
	for _, info := range proofs.All() {
		if info.SectorSize != 2<<10 {
			continue
		}
		t.Run(info.Name, func(t *testing.T) {
			s := mustSeal(t, info.Proof, 11)
			roundTrip(t, s)
			if err := VerifyCarried(context.Background(), s.C1); err != nil {
				t.Fatalf("verify carried: %v", err)
			}
			// Deterministic: a second seal gives the same bytes.
			a, _ := c1.Marshal(s.C1)
			b, _ := c1.Marshal(mustSeal(t, info.Proof, 11).C1)
			if !bytes.Equal(a, b) {
				t.Fatal("two seals of one sector differ")
			}
			c, _ := c1.Marshal(mustSeal(t, info.Proof, 12).C1)
			if bytes.Equal(a, c) {
				t.Fatal("two sectors seal to one C1")
			}
		})
	}
}

func TestSealVerify8MiB(t *testing.T) {
	if testing.Short() {
		t.Skip("8MiB seal takes seconds")
	}
	s := mustSeal(t, proofs.StackedDrg8MiBV1_1, 3)
	roundTrip(t, s)
}

// TestCCCommD checks tree D against supraseal's CC tree D values: the full
// seal of an all-zero 2KiB sector, the sparse filler levels up to 32GiB,
// and the comm_d SealSparse gives for 2KiB, 8MiB and 32GiB.
func TestCCCommD(t *testing.T) {
	p := TestParams(proofs.StackedDrg2KiBV1_1, testProver, 1)
	p.CC = true
	s, err := Seal(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if want := ccLevel(t, 6); s.Public.CommD != want {
		t.Fatalf("2KiB CC comm_d %x, want %x", s.Public.CommD, want)
	}
	tr, err := BuildSparse(merkle.SHA254Hasher{}, merkle.TreeDShape(), 1<<30, merkle.Node{}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	for l := range ccTreeD {
		if got, want := [32]byte(tr.filler[l]), ccLevel(t, l); got != want {
			t.Fatalf("level %d: %x, want %x", l, got, want)
		}
	}
	for _, c := range []struct {
		p     proofs.RegisteredSealProof
		level int
	}{{proofs.StackedDrg2KiBV1_1, 6}, {proofs.StackedDrg8MiBV1_1, 18}, {proofs.StackedDrg32GiBV1_1, 30}} {
		s, err := SealSparse(context.Background(), TestParams(c.p, testProver, 1))
		if err != nil {
			t.Fatalf("%s: %v", c.p, err)
		}
		if want := ccLevel(t, c.level); s.Public.CommD != want {
			t.Fatalf("%s CC comm_d %x, want %x", c.p, s.Public.CommD, want)
		}
	}
}

// TestSparseTreeMatchesBuild checks the sparse tree against merkle.Build
// over the same leaves, for every tree shape in use.
func TestSparseTreeMatchesBuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	randNode := func() merkle.Node {
		var n merkle.Node
		for i := range n {
			n[i] = byte(rng.IntN(256))
		}
		n[31] &= 0x3f
		return n
	}
	for _, c := range []struct {
		h      merkle.Hasher
		shape  merkle.Shape
		leaves uint64
	}{
		{merkle.SHA254Hasher{}, merkle.TreeDShape(), 64},
		{merkle.PoseidonHasher{}, merkle.Shape{Base: 8}, 64},
		{merkle.PoseidonHasher{}, merkle.Shape{Base: 8, Sub: 2}, 128},
		{merkle.PoseidonHasher{}, merkle.Shape{Base: 8, Sub: 8}, 512},
		{merkle.PoseidonHasher{}, merkle.Shape{Base: 8, Sub: 8, Top: 2}, 1024},
	} {
		filler := randNode()
		set := map[uint64]merkle.Node{}
		all := make([]merkle.Node, c.leaves)
		for i := range all {
			all[i] = filler
			if rng.IntN(5) == 0 || i == len(all)-1 {
				all[i] = randNode()
				set[uint64(i)] = all[i]
			}
		}
		full, err := merkle.Build(c.h, c.shape, all)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := BuildSparse(c.h, c.shape, c.leaves, filler, set, 3)
		if err != nil {
			t.Fatal(err)
		}
		if sp.Root() != full.Root() {
			t.Fatalf("%s %s: sparse root %s, full %s", c.h.Name(), c.shape, sp.Root(), full.Root())
		}
		for _, i := range []uint64{0, 1, 7, 8, c.leaves / 2, c.leaves - 1} {
			a, _ := full.Prove(i)
			b, err := sp.Prove(i)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("%s %s leaf %d: proofs differ", c.h.Name(), c.shape, i)
			}
			if err := b.ValidateInTree(c.h, c.shape, c.leaves, i); err != nil {
				t.Fatalf("%s %s leaf %d: %v", c.h.Name(), c.shape, i, err)
			}
		}
		// Node: each level's nodes hash to the next's, the leaves are the
		// leaf list and the last level holds the base trees' roots.
		arity := uint64(c.shape.Base)
		for l, n := 0, c.leaves; l <= sp.height; l, n = l+1, n/arity {
			for _, i := range []uint64{0, n / 2, n - 1} {
				v, err := sp.Node(l, i)
				if err != nil {
					t.Fatalf("%s %s level %d node %d: %v", c.h.Name(), c.shape, l, i, err)
				}
				want := all[i]
				if l > 0 {
					kids := make([]merkle.Node, arity)
					for k := range kids {
						kids[k], _ = sp.Node(l-1, i*arity+uint64(k))
					}
					want, _ = c.h.Node(kids)
				}
				if v != want {
					t.Fatalf("%s %s level %d node %d: %s, want %s", c.h.Name(), c.shape, l, i, v, want)
				}
			}
			if _, err := sp.Node(l, n); err == nil {
				t.Fatalf("%s %s level %d: node %d of %d given", c.h.Name(), c.shape, l, n, n)
			}
		}
		if _, err := sp.Node(sp.height+1, 0); err == nil {
			t.Fatalf("%s %s: a level above the base trees given", c.h.Name(), c.shape)
		}
	}
}

// A sparsely sealed sector opens tree R at every node (Sealed.ProveR):
// the leaves it opens build, as a full tree, its comm_r_last, and each
// opening is that tree's; a sector sealed in full does not.
func TestSealSparseProveR(t *testing.T) {
	s, err := SealSparse(context.Background(), TestParams(proofs.StackedDrg2KiBV1_1, testProver, 3))
	if err != nil {
		t.Fatal(err)
	}
	info, _ := proofs.Lookup(proofs.StackedDrg2KiBV1_1)
	var opened []*merkle.Proof
	leaves := make([]merkle.Node, info.Nodes)
	for i := range leaves {
		p, err := s.ProveR(uint64(i))
		if err != nil {
			t.Fatal(err)
		}
		leaves[i] = p.Leaf
		opened = append(opened, p)
	}
	full, err := merkle.Build(merkle.PoseidonHasher{}, treeShape(info.TreeR), leaves)
	if err != nil {
		t.Fatal(err)
	}
	if [32]byte(full.Root()) != s.CommRLast {
		t.Fatalf("tree R over the opened leaves: root %s, comm_r_last %x", full.Root(), s.CommRLast)
	}
	for i, p := range opened {
		if want, _ := full.Prove(uint64(i)); !reflect.DeepEqual(p, want) {
			t.Fatalf("node %d: the sparse opening is not the full tree's", i)
		}
	}
	if _, err := s.ProveR(info.Nodes); err == nil {
		t.Fatalf("node %d of %d opened", info.Nodes, info.Nodes)
	}
	if _, err := mustSeal(t, proofs.StackedDrg2KiBV1_1, 3).ProveR(0); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("a fully sealed sector's tree R: %v, want ErrUnsupported", err)
	}
}

func TestSealSparseVerifies(t *testing.T) {
	for _, p := range []proofs.RegisteredSealProof{proofs.StackedDrg2KiBV1, proofs.StackedDrg8MiBV1_1, proofs.StackedDrg32GiBV1_1} {
		if testing.Short() && p == proofs.StackedDrg32GiBV1_1 {
			continue
		}
		s, err := SealSparse(context.Background(), TestParams(p, testProver, 5))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		roundTrip(t, s)
	}
	_, err := SealSparse(context.Background(), TestParams(proofs.StackedDrg2KiBV1_1_Feat_SyntheticPoRep, testProver, 5))
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("synthetic sparse seal: %v, want ErrUnsupported", err)
	}
}

// clone returns a deep copy of a C1 through its encoding.
func clone(t *testing.T, c *c1.SealCommitPhase1Output) *c1.SealCommitPhase1Output {
	t.Helper()
	b, err := c1.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	out, err := c1.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func wantVerifyErr(t *testing.T, err error, kind error, partition, challenge int) *VerifyError {
	t.Helper()
	var ve *VerifyError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v (%T), want a *VerifyError", err, err)
	}
	if !errors.Is(err, kind) || ve.Partition != partition || ve.Challenge != challenge {
		t.Fatalf("error %q: want kind %q at partition %d challenge %d", err, kind, partition, challenge)
	}
	t.Logf("%v", err)
	return ve
}

func TestTamper(t *testing.T) {
	ctx := context.Background()
	s := mustSeal(t, proofs.StackedDrg2KiBV1_1, 21)
	pub := s.Public
	proof := func(c *c1.SealCommitPhase1Output, i int) *c1.Proof { return &c.VanillaProofs.Partitions[0][i] }
	cases := []struct {
		name      string
		tamper    func(c *c1.SealCommitPhase1Output, pub *SectorPublic)
		kind      error
		challenge int
		otherNode bool // the failing node is not the proof's original node
	}{
		{"c_x label", func(c *c1.SealCommitPhase1Output, _ *SectorPublic) {
			proof(c, 1).ReplicaColumnProofs.CX.Column.Rows[1][0] ^= 1
		}, ErrTreeC, 1, false},
		{"parent label", func(c *c1.SealCommitPhase1Output, _ *SectorPublic) {
			proof(c, 0).ReplicaColumnProofs.ExpParents[3].Column.Rows[0][5] ^= 1
		}, ErrTreeC, 0, false},
		{"labeling proof parent", func(c *c1.SealCommitPhase1Output, _ *SectorPublic) {
			proof(c, 1).LabelingProofs[1].Parents[20][3] ^= 1
		}, ErrLabelingProof, 1, false},
		{"encoding proof parent", func(c *c1.SealCommitPhase1Output, _ *SectorPublic) {
			proof(c, 0).EncodingProof.Parents[36][3] ^= 1
		}, ErrLabelingProof, 0, false},
		{"comm_d path hash", func(c *c1.SealCommitPhase1Output, _ *SectorPublic) {
			proof(c, 1).CommDProofs.Data.Single.Path.Path[2].Hashes[0][0] ^= 1
		}, ErrCommD, 1, false},
		{"comm_d leaf", func(c *c1.SealCommitPhase1Output, _ *SectorPublic) {
			proof(c, 0).CommDProofs.Data.Single.Leaf[0] ^= 1
		}, ErrCommD, 0, false},
		{"tree C path hash", func(c *c1.SealCommitPhase1Output, _ *SectorPublic) {
			proof(c, 0).ReplicaColumnProofs.DrgParents[2].InclusionProof.Data.Single.Path.Path[1].Hashes[6][0] ^= 1
		}, ErrTreeC, 0, false},
		{"tree R path hash", func(c *c1.SealCommitPhase1Output, _ *SectorPublic) {
			proof(c, 1).CommRLastProof.Data.Single.Path.Path[0].Hashes[3][0] ^= 1
		}, ErrTreeR, 1, false},
		{"tree R path index", func(c *c1.SealCommitPhase1Output, _ *SectorPublic) {
			el := &proof(c, 1).CommRLastProof.Data.Single.Path.Path[0]
			el.Index = (el.Index + 1) % 8
		}, ErrTreeR, 1, false},
		{"tree R leaf", func(c *c1.SealCommitPhase1Output, _ *SectorPublic) {
			proof(c, 1).CommRLastProof.Data.Single.Leaf[0] ^= 1
		}, ErrTreeR, 1, false},
		{"labeling node", func(c *c1.SealCommitPhase1Output, _ *SectorPublic) {
			proof(c, 0).LabelingProofs[0].Node ^= 1
		}, ErrChallenge, 0, false},
		{"swap challenges", func(c *c1.SealCommitPhase1Output, _ *SectorPublic) {
			ps := c.VanillaProofs.Partitions[0]
			ps[0], ps[1] = ps[1], ps[0]
		}, ErrChallenge, 0, false},
		{"seed in C1 and public data", func(c *c1.SealCommitPhase1Output, pub *SectorPublic) {
			c.Seed[0] ^= 1
			pub.Seed[0] ^= 1
		}, ErrChallenge, 0, true},
		{"seed", func(c *c1.SealCommitPhase1Output, _ *SectorPublic) { c.Seed[0] ^= 1 }, ErrPublicMismatch, -1, false},
		{"comm_r", func(_ *c1.SealCommitPhase1Output, pub *SectorPublic) { pub.CommR[0] ^= 1 }, ErrPublicMismatch, -1, false},
		{"comm_r in C1 and public data", func(c *c1.SealCommitPhase1Output, pub *SectorPublic) {
			c.CommR[0] ^= 1
			pub.CommR[0] ^= 1
		}, ErrCommR, -1, false},
		{"comm_d", func(c *c1.SealCommitPhase1Output, _ *SectorPublic) { c.CommD[0] ^= 1 }, ErrPublicMismatch, -1, false},
		{"ticket", func(_ *c1.SealCommitPhase1Output, pub *SectorPublic) { pub.Ticket[0] ^= 1 }, ErrPublicMismatch, -1, false},
		{"sector id", func(_ *c1.SealCommitPhase1Output, pub *SectorPublic) { pub.SectorID++ }, ErrReplicaID, -1, false},
		{"prover id", func(_ *c1.SealCommitPhase1Output, pub *SectorPublic) { pub.ProverID[0] ^= 1 }, ErrReplicaID, -1, false},
		{"replica id", func(c *c1.SealCommitPhase1Output, _ *SectorPublic) { c.ReplicaID[0] ^= 1 }, ErrReplicaID, -1, false},
		{"registered proof", func(_ *c1.SealCommitPhase1Output, pub *SectorPublic) { pub.Proof = proofs.StackedDrg2KiBV1 }, ErrPublicMismatch, -1, false},
		{"non-canonical row", func(c *c1.SealCommitPhase1Output, _ *SectorPublic) {
			proof(c, 0).ReplicaColumnProofs.CX.Column.Rows[0] = [32]byte{31: 0xff}
		}, ErrMalformed, -1, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, p := clone(t, s.C1), pub
			tc.tamper(c, &p)
			err := Verify(ctx, c, p)
			partition := 0
			if tc.challenge < 0 {
				partition = -1
				if errors.Is(tc.kind, ErrCommR) {
					partition = 0
				}
			}
			ve := wantVerifyErr(t, err, tc.kind, partition, tc.challenge)
			if tc.challenge >= 0 && !tc.otherNode {
				want := s.C1.VanillaProofs.Partitions[0][tc.challenge].LabelingProofs[0].Node
				if ve.Node != want {
					t.Fatalf("node %d, want %d", ve.Node, want)
				}
			}
		})
	}
	// Carried public data: a consistent seed change is caught by the
	// challenges, a replica id change by the labels.
	c := clone(t, s.C1)
	c.Seed[0] ^= 1
	wantVerifyErr(t, VerifyCarried(ctx, c), ErrChallenge, 0, 0)
	c = clone(t, s.C1)
	c.ReplicaID[0] ^= 1
	wantVerifyErr(t, VerifyCarried(ctx, c), ErrChallenge, 0, 0) // challenges derive from replica_id too
}

// TestSealedCorruption seals sectors whose trees commit to a wrong label
// or replica node, so that only the label or encoding check can catch it.
func TestSealedCorruption(t *testing.T) {
	ctx := context.Background()
	p := TestParams(proofs.StackedDrg2KiBV1_1, testProver, 33)
	info, _ := proofs.Lookup(p.Proof)
	challenges := func(replicaID [32]byte) []uint64 {
		chs, err := sdr.Challenges(sdr.ChallengeParams{Mode: sdr.Interactive, SectorNodes: info.Nodes,
			ChallengesPerPartition: info.ChallengesPerPartition, ReplicaID: replicaID, Seed: p.Seed}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return chs
	}
	g, err := sdr.GraphFor(info)
	if err != nil {
		t.Fatal(err)
	}
	for layer := 1; layer <= info.Layers; layer++ {
		for ci := range info.ChallengesPerPartition {
			var tampered uint64
			s, err := seal(ctx, p, sealHooks{labels: func(replicaID [32]byte, layers [][]byte) {
				tampered = challenges(replicaID)[ci]
				layers[layer-1][tampered*32] ^= 1
			}})
			if err != nil {
				t.Fatal(err)
			}
			err = Verify(ctx, s.C1, s.Public)
			var ve *VerifyError
			if !errors.As(err, &ve) || !errors.Is(err, ErrLabel) {
				t.Fatalf("layer %d challenge %d: %v, want a label mismatch", layer, ci, err)
			}
			t.Logf("%v", err)
			// The challenged node itself, or a challenge one of whose
			// parents' columns holds the corrupted label.
			if ve.Node != tampered {
				var ps [sdr.Degree]uint32
				if err := g.Parents(ve.Node, ps[:]); err != nil {
					t.Fatal(err)
				}
				if !slices.Contains(ps[:], uint32(tampered)) {
					t.Fatalf("layer %d: failure at node %d, which does not depend on node %d", layer, ve.Node, tampered)
				}
			} else if want := fmt.Sprintf("label of layer %d", layer); ve.What != want {
				t.Fatalf("what %q, want %q", ve.What, want)
			}
		}
	}
	s, err := seal(ctx, p, sealHooks{replica: func(replicaID [32]byte, replica []merkle.Node) {
		replica[challenges(replicaID)[0]][0] ^= 1
	}})
	if err != nil {
		t.Fatal(err)
	}
	wantVerifyErr(t, Verify(ctx, s.C1, s.Public), ErrEncoding, 0, 0)
}

// TestFirstFailureDeterministic: with failures in several challenges the
// earliest is reported whatever the parallelism.
func TestFirstFailureDeterministic(t *testing.T) {
	s, err := SealSparse(context.Background(), TestParams(proofs.StackedDrg32GiBV1_1, testProver, 2))
	if err != nil {
		t.Fatal(err)
	}
	c := s.C1
	c.VanillaProofs.Partitions[3][7].CommRLastProof.Data.Sub.Leaf[0] ^= 1
	c.VanillaProofs.Partitions[3][2].ReplicaColumnProofs.ExpParents[7].Column.Rows[10][0] ^= 1
	c.VanillaProofs.Partitions[8][0].CommDProofs.Data.Single.Leaf[0] ^= 1
	for _, w := range []int{1, 2, 7} {
		ve := wantVerifyErr(t, Verify(context.Background(), c, s.Public, WithWorkers(w)), ErrTreeC, 3, 2)
		if ve.Node != c.VanillaProofs.Partitions[3][2].LabelingProofs[0].Node {
			t.Fatalf("node %d", ve.Node)
		}
	}
	// A partition's comm_r failure precedes its challenges' failures but
	// follows earlier partitions'.
	c.VanillaProofs.Partitions[2][0].ReplicaColumnProofs.CX.InclusionProof.Data.Sub.Root[0] ^= 1
	wantVerifyErr(t, Verify(context.Background(), c, s.Public, WithWorkers(3)), ErrCommR, 2, -1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	clean := mustSeal(t, proofs.StackedDrg2KiBV1_1, 2)
	if err := Verify(ctx, clean.C1, clean.Public); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled verify: %v", err)
	}
}

func TestManifest(t *testing.T) {
	s := mustSeal(t, proofs.StackedDrg2KiBV1_1, 4)
	m := &Manifest{Proof: proofs.StackedDrg2KiBV1_1.String(), Sectors: []ManifestEntry{EntryOf(s.Public, "4.c1.json")}}
	path := filepath.Join(t.TempDir(), "sectors.json")
	if err := WriteManifest(path, m); err != nil {
		t.Fatal(err)
	}
	m2, err := ReadManifest(path)
	if err != nil {
		t.Fatal(err)
	}
	e := m2.Find("4.c1.json")
	if e == nil || m2.Find("5.c1.json") != nil {
		t.Fatal("find")
	}
	pub, err := m2.Public(e)
	if err != nil {
		t.Fatal(err)
	}
	if pub != s.Public {
		t.Fatalf("public data %+v, want %+v", pub, s.Public)
	}
	if r, _ := pub.ReplicaID(); r != s.ReplicaID {
		t.Fatal("replica id")
	}
}

func TestSealRefuses(t *testing.T) {
	ctx := context.Background()
	p := TestParams(proofs.StackedDrg32GiBV1_1, testProver, 1)
	if _, err := Seal(ctx, p); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("32GiB full seal: %v", err)
	}
	p = TestParams(proofs.StackedDrg2KiBV1_1, testProver, 1)
	p.Seed = [32]byte{}
	if _, err := Seal(ctx, p); !errors.Is(err, ErrPublicInput) {
		t.Fatalf("zero seed: %v", err)
	}
	if _, err := SealSparse(ctx, p); !errors.Is(err, ErrPublicInput) {
		t.Fatalf("zero seed: %v", err)
	}
	p = TestParams(proofs.StackedDrg2KiBV1_1, testProver, 1)
	p.Proof = 99
	if _, err := Seal(ctx, p); !errors.Is(err, proofs.ErrUnknown) {
		t.Fatalf("unknown proof: %v", err)
	}
}

// TestCommRIsPoseidonOfRoots pins comm_r to Poseidon(comm_c, comm_r_last).
func TestCommRIsPoseidonOfRoots(t *testing.T) {
	s := mustSeal(t, proofs.StackedDrg2KiBV1, 8)
	want, err := hash.Hash2(s.CommC, s.CommRLast)
	if err != nil {
		t.Fatal(err)
	}
	if [32]byte(want) != s.Public.CommR || s.C1.CommR != s.Public.CommR {
		t.Fatal("comm_r")
	}
}
