package merkle

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

func hexNode(t *testing.T, s string) Node {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 32 {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return Node(b)
}

// randomLeaves returns n canonical field elements (valid for both hashers).
func randomLeaves(n int, seed uint64) []Node {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([]Node, n)
	for i := range out {
		for j := range out[i] {
			out[i][j] = byte(rng.Uint32())
		}
		out[i] = Node(hash.Trim(out[i]))
	}
	return out
}

// TestTreeDVectors checks tree-D roots against upstream values.
func TestTreeDVectors(t *testing.T) {
	// rust-fil-proofs filecoin-proofs/tests/pieces.rs test_compute_comm_d_empty
	// (commit 87348a749d80447d00c595af834a8ed73c09e4d9): comm_d of an empty
	// 2KiB sector (64 zero leaves) and of an empty 128-byte one (4 leaves).
	for _, c := range []struct {
		leaves int
		root   string
	}{
		{64, "fc7e928296e516faade986b28f92d44a4f24b935485223376a799027bc18f833"},
		{4, "3731bb99ac689f66eef5973e4a94da188f4ddcae580724fc6f3fd60dfd488333"},
	} {
		tr, err := Build(SHA254Hasher{}, TreeDShape(), make([]Node, c.leaves))
		if err != nil {
			t.Fatal(err)
		}
		if w := hexNode(t, c.root); tr.Root() != w {
			t.Errorf("empty comm_d over %d leaves = %s, want %s", c.leaves, tr.Root(), w)
		}
	}
	// curio lib/proof/treed_build_test.go TestHashChunk2L (commit
	// e0294b0f948132d41e8f42f59fa949495d5fd3af): 128 bytes, first byte 1.
	leaves := make([]Node, 4)
	leaves[0][0] = 1
	tr, err := Build(SHA254Hasher{}, TreeDShape(), leaves)
	if err != nil {
		t.Fatal(err)
	}
	if w := hexNode(t, "0dd6dae41c2f75550129594fb644e4a842cfafb316a2d59321e388fe84a1ec2f"); tr.Root() != w {
		t.Errorf("root = %s, want %s", tr.Root(), w)
	}
}

// TestPoseidonTreeVector checks rust-fil-proofs filecoin-hashers/src/
// poseidon.rs test_poseidon_hasher: the binary Poseidon tree over 1, 0, 0, 1
// and its proof of leaf 0 (path indices [0, 0]).
func TestPoseidonTreeVector(t *testing.T) {
	var one fr.Element
	one.SetOne()
	o := Node(hash.DomainOf(one))
	tr, err := Build(PoseidonHasher{}, Shape{Base: 2}, []Node{o, {}, {}, o})
	if err != nil {
		t.Fatal(err)
	}
	// Limbs 0xefbb8be3e291e671, 0x77cc72b8cb2b5ad2, 0x30eb6385ae6b74ae,
	// 0x1effebb7b26ad9eb, little-endian.
	if w := hexNode(t, "71e691e2e38bbbefd25a2bcbb872cc77ae746bae8563eb30ebd96ab2b7ebff1e"); tr.Root() != w {
		t.Errorf("root = %s, want %s", tr.Root(), w)
	}
	p, err := tr.Prove(0)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Base) != 2 || p.Base[0].Index != 0 || p.Base[1].Index != 0 {
		t.Errorf("path %+v", p.Base)
	}
	if err := p.Validate(PoseidonHasher{}, Shape{Base: 2}, 0); err != nil {
		t.Error(err)
	}
}

// TestProveVerifyShapes builds trees of every shape Filecoin uses and
// checks that every leaf's proof validates for its index, no other, and
// fails once tampered.
func TestProveVerifyShapes(t *testing.T) {
	cases := []struct {
		h      Hasher
		shape  Shape
		leaves int
	}{
		{SHA254Hasher{}, TreeDShape(), 256},
		{PoseidonHasher{}, Shape{Base: 2}, 64},
		{PoseidonHasher{}, Shape{Base: 8}, 64},
		{PoseidonHasher{}, Shape{Base: 8, Sub: 2}, 128},
		{PoseidonHasher{}, Shape{Base: 8, Sub: 4}, 256},
		{PoseidonHasher{}, Shape{Base: 8, Sub: 8}, 512},
		{PoseidonHasher{}, Shape{Base: 8, Sub: 4, Top: 2}, 512},
		{PoseidonHasher{}, Shape{Base: 8, Sub: 8, Top: 2}, 1024},
	}
	for ci, c := range cases {
		leaves := randomLeaves(c.leaves, uint64(ci))
		tr, err := Build(c.h, c.shape, leaves)
		if err != nil {
			t.Fatalf("%s %s: %v", c.h.Name(), c.shape, err)
		}
		// The root is the compound of the base roots, as merkletree builds it.
		nb := c.shape.BaseTrees()
		per := c.leaves / nb
		baseRoots := make([]Node, nb)
		for b := range baseRoots {
			bt, err := Build(c.h, Shape{Base: c.shape.Base}, leaves[b*per:(b+1)*per])
			if err != nil {
				t.Fatal(err)
			}
			baseRoots[b] = bt.Root()
		}
		want := baseRoots[0]
		switch {
		case c.shape.Top > 0:
			var subs []Node
			for s := 0; s < c.shape.Top; s++ {
				r, _ := c.h.Node(baseRoots[s*c.shape.Sub : (s+1)*c.shape.Sub])
				subs = append(subs, r)
			}
			want, _ = c.h.Node(subs)
		case c.shape.Sub > 0:
			want, _ = c.h.Node(baseRoots)
		}
		if tr.Root() != want {
			t.Errorf("%s: root %s, want %s", c.shape, tr.Root(), want)
		}
		for i := uint64(0); i < tr.Leaves(); i++ {
			p, err := tr.Prove(i)
			if err != nil {
				t.Fatal(err)
			}
			if p.Leaf != leaves[i] || p.Root != tr.Root() {
				t.Fatalf("%s leaf %d: proof leaf/root wrong", c.shape, i)
			}
			if err := p.ValidateInTree(c.h, c.shape, tr.Leaves(), i); err != nil {
				t.Fatalf("%s leaf %d: %v", c.shape, i, err)
			}
			if err := p.Validate(c.h, c.shape, (i+1)%tr.Leaves()); !errors.Is(err, ErrChallengeMismatch) {
				t.Fatalf("%s leaf %d validated for leaf %d: %v", c.shape, i, (i+1)%tr.Leaves(), err)
			}
			if n := len(p.Path()); n != len(p.Base)+len(p.Sub)+len(p.Top) {
				t.Fatalf("Path() length %d", n)
			}
		}
		p, _ := tr.Prove(tr.Leaves() - 1)
		p.Leaf[1] ^= 4
		if err := p.Verify(c.h, c.shape); !errors.Is(err, ErrRootMismatch) {
			t.Errorf("%s tampered leaf: %v", c.shape, err)
		}
	}
}

func TestExpectedPathLength(t *testing.T) {
	for _, c := range []struct {
		size   uint64
		shape  Shape
		length int
	}{
		{2 << 10, Shape{Base: 8}, 2},                  // 64 nodes
		{4 << 10, Shape{Base: 8, Sub: 2}, 3},          // 2 x 64
		{16 << 10, Shape{Base: 8, Sub: 8}, 3},         // 8 x 64
		{32 << 10, Shape{Base: 8, Sub: 8, Top: 2}, 4}, // 2 x 8 x 64
		{8 << 20, Shape{Base: 8}, 6},                  // 8^6
		{512 << 20, Shape{Base: 8}, 8},                // 8^8
		{32 << 30, Shape{Base: 8, Sub: 8}, 10},        // 8 x 8^9
		{64 << 30, Shape{Base: 8, Sub: 8, Top: 2}, 11},
	} {
		s, err := SectorShape(c.size)
		if err != nil || s != c.shape {
			t.Errorf("SectorShape(%d) = %s, %v; want %s", c.size, s, err, c.shape)
		}
		n, err := ExpectedPathLength(s, c.size/32)
		if err != nil || n != c.length {
			t.Errorf("ExpectedPathLength(%s, %d) = %d, %v; want %d", s, c.size/32, n, err, c.length)
		}
	}
	// Tree D of a 32GiB sector: binary over 2^30 nodes.
	if n, _ := ExpectedPathLength(TreeDShape(), 1<<30); n != 30 {
		t.Errorf("tree D path length %d, want 30", n)
	}
}

func TestBuildErrors(t *testing.T) {
	for _, c := range []struct {
		h      Hasher
		shape  Shape
		leaves int
	}{
		{PoseidonHasher{}, Shape{Base: 8}, 63},
		{PoseidonHasher{}, Shape{Base: 8}, 1},
		{PoseidonHasher{}, Shape{Base: 8}, 0},
		{PoseidonHasher{}, Shape{Base: 3}, 9},
		{PoseidonHasher{}, Shape{Base: 8, Top: 2}, 128},
		{PoseidonHasher{}, Shape{Base: 8, Sub: 8}, 32},
		{SHA254Hasher{}, Shape{Base: 1}, 4},
	} {
		if _, err := Build(c.h, c.shape, make([]Node, c.leaves)); err == nil {
			t.Errorf("%s %s over %d leaves accepted", c.h.Name(), c.shape, c.leaves)
		}
	}
	bad := make([]Node, 8)
	bad[3][31] = 0xff // not a canonical field element
	if _, err := Build(PoseidonHasher{}, Shape{Base: 8}, bad); !errors.Is(err, hash.ErrNonCanonical) {
		t.Errorf("non-canonical leaf: %v", err)
	}
	tr, _ := Build(SHA254Hasher{}, TreeDShape(), make([]Node, 4))
	if _, err := tr.Prove(4); err == nil {
		t.Error("Prove(4) of a 4-leaf tree accepted")
	}
}

// TestBuildLarge builds the tree R of an 8MiB sector (2^18 leaves, 8-0-0)
// and its binary SHA254 tree D, checking that both take seconds.
func TestBuildLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 2^18-leaf trees")
	}
	leaves := randomLeaves(1<<18, 99)
	for _, c := range []struct {
		h     Hasher
		shape Shape
	}{{PoseidonHasher{}, Shape{Base: 8}}, {SHA254Hasher{}, TreeDShape()}} {
		start := time.Now()
		tr, err := Build(c.h, c.shape, leaves)
		if err != nil {
			t.Fatal(err)
		}
		el := time.Since(start)
		t.Logf("%s %s tree over 2^18 leaves: %v", c.h.Name(), c.shape, el)
		if el > 30*time.Second {
			t.Errorf("build took %v", el)
		}
		p, err := tr.Prove(123456)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.ValidateInTree(c.h, c.shape, 1<<18, 123456); err != nil {
			t.Error(err)
		}
	}
}

// TestNodeFormat checks that %x prints a Node's bytes, not the hex of its
// String text.
func TestNodeFormat(t *testing.T) {
	n := Node{0xab, 1}
	h := hex.EncodeToString(n[:])
	if got := fmt.Sprintf("%x|%s|%v", n, n, n); got != h+"|"+h+"|"+h {
		t.Errorf("Sprintf(%%x|%%s|%%v, n) = %q, want %s three times", got, h)
	}
}
