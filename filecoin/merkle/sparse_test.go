package merkle

import (
	"reflect"
	"testing"
)

// A sparse tree has the root and the proofs Build gives over the same
// leaves, for every shape tree R takes (8-0-0, 8-2-0, 8-8-0, 8-8-2).
func TestSparseMatchesBuild(t *testing.T) {
	for _, c := range []struct {
		shape  Shape
		leaves uint64
	}{
		{Shape{Base: 8}, 64},
		{Shape{Base: 8, Sub: 2}, 128},
		{Shape{Base: 8, Sub: 8}, 512},
		{Shape{Base: 8, Sub: 8, Top: 2}, 1024},
	} {
		set := map[uint64]Node{}
		leaves := make([]Node, c.leaves)
		for _, i := range []uint64{0, 3, 9, c.leaves / 2, c.leaves - 1} {
			n := Node{byte(i), byte(i >> 8), 7}
			set[i], leaves[i] = n, n
		}
		h := PoseidonHasher{}
		full, err := Build(h, c.shape, leaves)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := NewSparse(h, c.shape, c.leaves, set)
		if err != nil {
			t.Fatal(err)
		}
		if sp.Root() != full.Root() {
			t.Fatalf("%s: sparse root %v, built %v", c.shape, sp.Root(), full.Root())
		}
		for _, i := range []uint64{0, 1, 3, 9, 17, c.leaves / 2, c.leaves - 1} {
			want, err := full.Prove(i)
			if err != nil {
				t.Fatal(err)
			}
			got, err := sp.Prove(i)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: leaf %d: sparse proof differs from the built tree's", c.shape, i)
			}
			if err := got.Validate(h, c.shape, i); err != nil {
				t.Fatalf("%s: leaf %d: %v", c.shape, i, err)
			}
		}
	}
	if _, err := NewSparse(PoseidonHasher{}, Shape{Base: 8}, 64, map[uint64]Node{64: {}}); err == nil {
		t.Error("a set leaf out of range was accepted")
	}
}

// A 32GiB tree R (2^30 leaves, 8-8-0) is built sparse in well under a
// second: only the paths above its set leaves are hashed.
func TestSparse32GiB(t *testing.T) {
	set := map[uint64]Node{5: {1}, 1<<30 - 1: {2}, 123_456_789: {3}}
	sp, err := NewSparse(PoseidonHasher{}, Shape{Base: 8, Sub: 8}, 1<<30, set)
	if err != nil {
		t.Fatal(err)
	}
	for i := range set {
		p, err := sp.Prove(i)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Validate(PoseidonHasher{}, Shape{Base: 8, Sub: 8}, i); err != nil {
			t.Fatalf("leaf %d: %v", i, err)
		}
		if p.Leaf != set[i] {
			t.Fatalf("leaf %d: %v", i, p.Leaf)
		}
	}
}
