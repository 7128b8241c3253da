package seal

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/c2flow/c2flow/filecoin/merkle"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/sdr"
)

// The kinds of verification failure, wrapped by a *VerifyError's Err.
var (
	// ErrMalformed: the C1 does not have the structure its registered
	// proof prescribes (c1.Validate fails).
	ErrMalformed = errors.New("malformed C1")
	// ErrPublicMismatch: a field the C1 carries (registered_proof,
	// comm_d, comm_r, ticket, seed) differs from the sector's public data.
	ErrPublicMismatch = errors.New("C1 disagrees with the sector's public data")
	// ErrPublicInput: a public value filecoin-proofs refuses (an all-zero
	// comm_d, comm_r or seed).
	ErrPublicInput = errors.New("invalid public input")
	// ErrReplicaID: the C1's replica_id is not the one the public data
	// derive.
	ErrReplicaID = errors.New("replica id mismatch")
	// ErrCommR: Poseidon(comm_c, comm_r_last) of a partition is not comm_r.
	ErrCommR = errors.New("comm_r mismatch")
	// ErrChallenge: a partition does not prove the challenges derived for
	// it (wrong count, or a proof opens or names another node).
	ErrChallenge = errors.New("challenge mismatch")
	// ErrCommD: a tree D opening does not lead from its leaf to comm_d.
	ErrCommD = errors.New("invalid tree D (comm_d) opening")
	// ErrTreeC: a column opening does not lead from the column's hash to
	// comm_c at the node it should open.
	ErrTreeC = errors.New("invalid tree C (comm_c) opening")
	// ErrTreeR: a tree R opening does not lead from its leaf to comm_r_last.
	ErrTreeR = errors.New("invalid tree R (comm_r_last) opening")
	// ErrLabel: a label of the challenged node's column is not the label
	// its parents' columns give.
	ErrLabel = errors.New("label mismatch")
	// ErrEncoding: the replica node (tree R leaf) is not the data node
	// (tree D leaf) encoded with the last layer's label.
	ErrEncoding = errors.New("encoding mismatch")
	// ErrLabelingProof: a labeling or encoding proof's layer or parent
	// labels differ from what the column openings determine.
	ErrLabelingProof = errors.New("inconsistent labeling proof")
)

// VerifyError is the first failure Verify finds. Partition and Challenge
// are -1 when the failure is not specific to one.
type VerifyError struct {
	// Partition is the partition index, or -1.
	Partition int
	// Challenge is the challenge's index within its partition, or -1.
	Challenge int
	// Node is the challenged node (meaningful when Challenge >= 0).
	Node uint64
	// What names the check, e.g. "tree C opening of expander parent 3
	// (node 17)" or "label of layer 2".
	What string
	// Err wraps one of the Err* kinds above.
	Err error
}

func (e *VerifyError) Error() string {
	var b strings.Builder
	b.WriteString("seal: verify: ")
	if e.Partition >= 0 {
		fmt.Fprintf(&b, "partition %d: ", e.Partition)
	}
	if e.Challenge >= 0 {
		fmt.Fprintf(&b, "challenge %d (node %d): ", e.Challenge, e.Node)
	}
	b.WriteString(e.What)
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *VerifyError) Unwrap() error { return e.Err }

// Option configures Verify.
type Option func(*options)

type options struct{ workers int }

// WithWorkers sets how many goroutines check challenges (<= 0:
// GOMAXPROCS). The failure reported does not depend on it.
func WithWorkers(n int) Option { return func(o *options) { o.workers = n } }

func newOptions(opts []Option) options {
	var o options
	for _, f := range opts {
		f(&o)
	}
	if o.workers <= 0 {
		o.workers = runtime.GOMAXPROCS(0)
	}
	return o
}

func publicFail(kind error, what, format string, args ...any) *VerifyError {
	return &VerifyError{Partition: -1, Challenge: -1, What: what, Err: fmt.Errorf("%w: "+format, append([]any{kind}, args...)...)}
}

// Verify checks c against the sector's public data pub: c's structure
// (c1.Validate), that c carries pub's registered proof, comm_d, comm_r,
// ticket and seed, that c's replica_id is the one pub derives, and then
// every partition's vanilla proofs (see the package documentation). It
// returns nil, a *VerifyError describing the first failure (in the order:
// whole-artifact checks, then per partition its comm_r and challenge
// derivation followed by its challenges in order), or the context's error.
func Verify(ctx context.Context, c *c1.SealCommitPhase1Output, pub SectorPublic, opts ...Option) error {
	if err := c1.Validate(c); err != nil {
		return publicFail(ErrMalformed, "structure", "%v", err)
	}
	if c.RegisteredProof != pub.Proof {
		return publicFail(ErrPublicMismatch, "registered_proof", "C1 is %s, the sector's proof is %s", c.RegisteredProof, pub.Proof)
	}
	for _, f := range []struct {
		name      string
		got, want [32]byte
	}{
		{"comm_d", c.CommD, pub.CommD},
		{"comm_r", c.CommR, pub.CommR},
		{"ticket", c.Ticket, pub.Ticket},
		{"seed", c.Seed, pub.Seed},
	} {
		if f.got != f.want {
			return publicFail(ErrPublicMismatch, f.name, "C1 carries %x, the sector's is %x", f.got, f.want)
		}
	}
	want, err := pub.ReplicaID()
	if err != nil {
		return publicFail(ErrPublicInput, "replica_id", "%v", err)
	}
	if want != c.ReplicaID {
		return publicFail(ErrReplicaID, "replica_id", "C1 carries %x, prover %x sector %d ticket %x comm_d %x give %x",
			c.ReplicaID, pub.ProverID, pub.SectorID, pub.Ticket, pub.CommD, want)
	}
	return verifyProofs(ctx, c, opts)
}

// VerifyCarried checks c against the public data it carries itself:
// everything Verify checks except that c's registered proof, comm_d,
// comm_r, ticket and seed are the sector's, and that its replica_id is the
// one the prover and sector ids derive (a C1 does not carry those ids).
func VerifyCarried(ctx context.Context, c *c1.SealCommitPhase1Output, opts ...Option) error {
	if err := c1.Validate(c); err != nil {
		return publicFail(ErrMalformed, "structure", "%v", err)
	}
	return verifyProofs(ctx, c, opts)
}

// verifier holds what checking one C1's challenges needs; it is read-only
// once built.
type verifier struct {
	info      proofs.SealProofInfo
	graph     *sdr.Graph
	shape     merkle.Shape
	replicaID [32]byte
	commD     [32]byte
	commR     [32]byte
}

// unit is one step of verification, in report order: a partition's
// comm_r and challenge derivation (challenge -1), or one challenge.
type unit struct {
	k, i int
	node uint64
}

func verifyProofs(ctx context.Context, c *c1.SealCommitPhase1Output, opts []Option) error {
	o := newOptions(opts)
	info, err := proofs.Lookup(c.RegisteredProof) // c1.Validate checked it
	if err != nil {
		return publicFail(ErrMalformed, "registered_proof", "%v", err)
	}
	for _, f := range []struct {
		name string
		d    [32]byte
	}{{"comm_d", c.CommD}, {"comm_r", c.CommR}, {"seed", c.Seed}} {
		if f.d == ([32]byte{}) {
			return publicFail(ErrPublicInput, f.name, "all zero (filecoin-proofs refuses it)")
		}
	}
	g, err := sdr.GraphFor(info)
	if err != nil {
		return publicFail(ErrPublicInput, "graph", "%v", err)
	}
	v := &verifier{info: info, graph: g, shape: treeShape(info.TreeR), replicaID: c.ReplicaID, commD: c.CommD, commR: c.CommR}
	cp := sdr.ChallengeParamsFor(info, c.ReplicaID, c.CommR, c.Seed)

	// Partition-level checks, serially; they are cheap.
	parts := c.VanillaProofs.Partitions
	var units []unit
	var failed []*VerifyError // indexed like units
	roots := make([][2][32]byte, len(parts))
	for k, part := range parts {
		units = append(units, unit{k: k, i: -1})
		chs, f := v.partition(k, part, cp, &roots[k])
		failed = append(failed, f)
		if f != nil {
			break // nothing after it can be reported first
		}
		for i := range part {
			units = append(units, unit{k: k, i: i, node: chs[i]})
			failed = append(failed, nil)
		}
	}

	// Challenges, in parallel; the earliest failure wins.
	var next atomic.Int64
	var firstFail atomic.Int64
	firstFail.Store(int64(len(units)))
	for j, f := range failed {
		if f != nil {
			firstFail.Store(int64(j))
			break
		}
	}
	var ctxErr atomic.Pointer[error]
	var wg sync.WaitGroup
	for range min(o.workers, max(len(units), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				j := next.Add(1) - 1
				if j >= int64(len(units)) || j > firstFail.Load() {
					return
				}
				u := units[j]
				if u.i < 0 {
					continue
				}
				if err := ctx.Err(); err != nil {
					ctxErr.CompareAndSwap(nil, &err)
					return
				}
				if e := v.challenge(u, &parts[u.k][u.i], roots[u.k]); e != nil {
					failed[j] = e
					for {
						cur := firstFail.Load()
						if j >= cur || firstFail.CompareAndSwap(cur, j) {
							break
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	if j := firstFail.Load(); j < int64(len(units)) {
		return failed[j]
	}
	if p := ctxErr.Load(); p != nil {
		return fmt.Errorf("seal: verify: %w", *p)
	}
	return nil
}

// partition checks partition k's comm_r and derives its challenges,
// storing its comm_c and comm_r_last (those of its first proof) in roots.
func (v *verifier) partition(k int, part []c1.Proof, cp sdr.ChallengeParams, roots *[2][32]byte) ([]uint64, *VerifyError) {
	fail := func(kind error, what, format string, args ...any) *VerifyError {
		return &VerifyError{Partition: k, Challenge: -1, What: what, Err: fmt.Errorf("%w: "+format, append([]any{kind}, args...)...)}
	}
	if len(part) == 0 {
		return nil, fail(ErrMalformed, "proofs", "no challenge proofs")
	}
	commC := part[0].ReplicaColumnProofs.CX.InclusionProof.Root()
	commRLast := part[0].CommRLastProof.Root()
	d, err := hash.Hash2(commC, commRLast)
	if err != nil {
		return nil, fail(ErrCommR, "comm_r", "Poseidon(comm_c, comm_r_last): %v", err)
	}
	if got := [32]byte(d); got != v.commR {
		return nil, fail(ErrCommR, "comm_r", "Poseidon(comm_c %x, comm_r_last %x) = %x, comm_r is %x", commC, commRLast, got, v.commR)
	}
	*roots = [2][32]byte{commC, commRLast}
	chs, err := sdr.Challenges(cp, k)
	if err != nil {
		return nil, fail(ErrChallenge, "challenges", "derive: %v", err)
	}
	if len(chs) != len(part) {
		return nil, fail(ErrChallenge, "challenges", "%d challenge proofs, %d challenges derived", len(part), len(chs))
	}
	return chs, nil
}

// challenge checks one challenge's proof (Proof::verify and what the
// circuit enforces). roots are the partition's comm_c and comm_r_last.
func (v *verifier) challenge(u unit, p *c1.Proof, roots [2][32]byte) *VerifyError {
	node := u.node
	fail := func(kind error, what, format string, args ...any) *VerifyError {
		return &VerifyError{Partition: u.k, Challenge: u.i, Node: node, What: what, Err: fmt.Errorf("%w: "+format, append([]any{kind}, args...)...)}
	}
	layers := v.info.Layers
	commC, commRLast := roots[0], roots[1]

	// The node the proof claims to prove: the circuit takes the challenge
	// from labeling_proofs[0].node.
	for l := range p.LabelingProofs {
		lp := &p.LabelingProofs[l]
		if lp.Node != node {
			return fail(ErrChallenge, fmt.Sprintf("labeling proof of layer %d", l+1), "names node %d", lp.Node)
		}
		if lp.LayerIndex != uint32(l+1) {
			return fail(ErrLabelingProof, fmt.Sprintf("labeling proof %d", l), "names layer %d, want %d", lp.LayerIndex, l+1)
		}
	}
	if p.EncodingProof.Node != node {
		return fail(ErrChallenge, "encoding proof", "names node %d", p.EncodingProof.Node)
	}
	if p.EncodingProof.LayerIndex != uint32(layers) {
		return fail(ErrLabelingProof, "encoding proof", "names layer %d, want the last layer %d", p.EncodingProof.LayerIndex, layers)
	}
	if idx := p.ReplicaColumnProofs.CX.Column.Index; uint64(idx) != node {
		return fail(ErrChallenge, "c_x column", "has index %d", idx)
	}

	// Tree D.
	if r := p.CommDProofs.Root(); r != v.commD {
		return fail(ErrCommD, "comm_d opening", "root %x, comm_d is %x", r, v.commD)
	}
	if err := toMerkle(&p.CommDProofs).ValidateInTree(merkle.SHA254Hasher{}, merkle.TreeDShape(), v.info.Nodes, node); err != nil {
		kind := ErrCommD
		if errors.Is(err, merkle.ErrChallengeMismatch) {
			kind = ErrChallenge
		}
		return fail(kind, "comm_d opening", "%v", err)
	}

	// Tree C: the challenge's column, then its parents' columns.
	var parents [sdr.Degree]uint32
	if err := v.graph.Parents(node, parents[:]); err != nil {
		return fail(ErrChallenge, "parents", "%v", err)
	}
	rcp := &p.ReplicaColumnProofs
	if f := v.column(&rcp.CX, node, commC); f != nil {
		kind := ErrTreeC
		if errors.Is(f.err, merkle.ErrChallengeMismatch) {
			kind = ErrChallenge
		}
		return fail(kind, "tree C opening of the challenge's column"+f.what, "%v", f.err)
	}
	for j := range rcp.DrgParents {
		if f := v.column(&rcp.DrgParents[j], uint64(parents[j]), commC); f != nil {
			return fail(ErrTreeC, fmt.Sprintf("tree C opening of DRG parent %d (node %d)%s", j, parents[j], f.what), "%v", f.err)
		}
	}
	for j := range rcp.ExpParents {
		pn := parents[sdr.BaseDegree+j]
		if f := v.column(&rcp.ExpParents[j], uint64(pn), commC); f != nil {
			return fail(ErrTreeC, fmt.Sprintf("tree C opening of expander parent %d (node %d)%s", j, pn, f.what), "%v", f.err)
		}
	}

	// Tree R.
	if r := p.CommRLastProof.Root(); r != commRLast {
		return fail(ErrTreeR, "comm_r_last opening", "root %x, the partition's comm_r_last (challenge 0's) is %x", r, commRLast)
	}
	if err := toMerkle(&p.CommRLastProof).ValidateInTree(merkle.PoseidonHasher{}, v.shape, v.info.Nodes, node); err != nil {
		kind := ErrTreeR
		if errors.Is(err, merkle.ErrChallengeMismatch) {
			kind = ErrChallenge
		}
		return fail(kind, "comm_r_last opening", "%v", err)
	}

	// Labels, from the parents' columns: layer 1 hashes the DRG parents'
	// layer-1 labels, layer l > 1 the DRG parents' layer-l labels and the
	// expander parents' layer-(l-1) labels.
	base := make([][32]byte, sdr.BaseDegree)
	exp := make([][32]byte, sdr.ExpDegree)
	var key [32]byte
	for l := 1; l <= layers; l++ {
		for j := range base {
			base[j] = rcp.DrgParents[j].Column.Rows[l-1]
		}
		var e [][32]byte
		if l > 1 {
			for j := range exp {
				exp[j] = rcp.ExpParents[j].Column.Rows[l-2]
			}
			e = exp
		}
		label, err := sdr.NodeLabel(v.replicaID, uint32(l), node, base, e)
		if err != nil {
			return fail(ErrLabel, fmt.Sprintf("label of layer %d", l), "%v", err)
		}
		if have := rcp.CX.Column.Rows[l-1]; have != label {
			return fail(ErrLabel, fmt.Sprintf("label of layer %d", l), "the parents' columns give %x, the column has %x", label, have)
		}
		all := append(append(make([][32]byte, 0, sdr.Degree), base...), e...)
		want := sdr.RepeatParents(all)
		if j := firstDiff(p.LabelingProofs[l-1].Parents, want); j >= 0 {
			return fail(ErrLabelingProof, fmt.Sprintf("labeling proof of layer %d, parent label %d", l, j),
				"%x, the parents' columns give %x", p.LabelingProofs[l-1].Parents[j], want[j])
		}
		key = label
	}

	// Encoding: replica node = data node + key (the last layer's label).
	data := p.CommDProofs.Leaf()
	enc, err := sdr.Encode(key, data)
	if err != nil {
		return fail(ErrEncoding, "encoding", "%v", err)
	}
	if leaf := p.CommRLastProof.Leaf(); leaf != enc {
		return fail(ErrEncoding, "encoding", "data %x encoded with key %x is %x, the tree R leaf is %x", data, key, enc, leaf)
	}
	if j := firstDiff(p.EncodingProof.Parents, p.LabelingProofs[layers-1].Parents); j >= 0 {
		return fail(ErrLabelingProof, fmt.Sprintf("encoding proof, parent label %d", j),
			"%x, the last layer's labeling proof has %x", p.EncodingProof.Parents[j], p.LabelingProofs[layers-1].Parents[j])
	}
	return nil
}

// columnFailure is a failed column opening: a suffix for the check's
// name and the failure.
type columnFailure struct {
	what string
	err  error
}

// column checks one column opening (ColumnProof::verify): the column's
// index is node, its hash is the opening's leaf, and the opening leads to
// comm_c at node.
func (v *verifier) column(cp *c1.ColumnProof, node uint64, commC [32]byte) *columnFailure {
	if idx := cp.Column.Index; uint64(idx) != node {
		return &columnFailure{" (column index)", fmt.Errorf("column has index %d, want %d", idx, node)}
	}
	if r := cp.InclusionProof.Root(); r != commC {
		return &columnFailure{"", fmt.Errorf("root %x, comm_c (challenge 0's) is %x", r, commC)}
	}
	h, err := columnHash(cp.Column.Rows)
	if err != nil {
		return &columnFailure{" (column hash)", err}
	}
	if leaf := cp.InclusionProof.Leaf(); leaf != h {
		return &columnFailure{" (column hash)", fmt.Errorf("column hashes to %x, the opening's leaf is %x", h, leaf)}
	}
	if err := toMerkle(&cp.InclusionProof).ValidateInTree(merkle.PoseidonHasher{}, v.shape, v.info.Nodes, node); err != nil {
		return &columnFailure{"", err}
	}
	return nil
}

// columnHash is hash_single_column over a column's labels.
func columnHash(rows [][32]byte) ([32]byte, error) {
	var buf [16]fr.Element
	es := buf[:0]
	for i := range rows {
		e, err := hash.ElementFromLE(rows[i])
		if err != nil {
			return [32]byte{}, fmt.Errorf("column row %d: %w", i, err)
		}
		es = append(es, e)
	}
	h, err := hash.ColumnHash(es)
	if err != nil {
		return [32]byte{}, err
	}
	return hash.ElementToLE(h), nil
}

// firstDiff returns the first index where a and b differ (including a
// length difference), or -1.
func firstDiff(a, b [][32]byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}
