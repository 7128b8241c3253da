package r1cs

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// System is a rank-1 constraint system in the shape of bellpepper's
// ConstraintSystem<Scalar>: circuits allocate variables and enforce
// constraints a·b = c over linear combinations, and the implementation
// decides what to keep (a witness, the matrices, or only counts).
//
// Variables are numbered in allocation order, inputs and aux separately,
// exactly as bellperson's prover and parameter generator number them; input
// 0 is [One], allocated by the constructor. Constraints are numbered in
// [System.Enforce] order. A circuit written against System therefore yields
// the R1CS bellperson would build from the same sequence of calls.
//
// Values are always supplied: a circuit synthesized only for its shape may
// pass any values (zero, say); [System.WantsValues] tells whether they
// matter. Implementations are not safe for concurrent use.
type System interface {
	// Alloc allocates the next auxiliary variable with the given value.
	Alloc(value fr.Element) Variable
	// AllocInput allocates the next input (public) variable.
	AllocInput(value fr.Element) Variable
	// Enforce adds the constraint a·b = c. name labels it in error messages
	// (relative to the current namespace); pass a constant string, it is
	// not copied. Enforce does not retain a, b or c: the caller may reuse
	// their memory once it returns.
	Enforce(name string, a, b, c LC)
	// Push enters the namespace name (bellpepper's cs.namespace). Namespaces
	// do not change the constraint system; checking implementations use them
	// to name the failing constraint.
	Push(name string)
	// PushIndexed enters the namespace "name i" without formatting it unless
	// it is needed (a loop's namespace: "round 3").
	PushIndexed(name string, i int)
	// Pop leaves the innermost namespace.
	Pop()
	// Scratch returns three empty LCs backed by buffers the System owns, for
	// building the arguments of the next Enforce without allocating. They are
	// valid until the next call to any method of the System, so build them
	// and call Enforce with no other System call in between.
	Scratch() (a, b, c LC)
	// WantsValues reports whether the System uses the values given to Alloc
	// and AllocInput; circuits may skip costly native computations when it
	// is false (the shape recorder, the counter).
	WantsValues() bool
}

// Stats are the sizes of a constraint system.
type Stats struct {
	// Constraints counts enforced constraints (bellperson's per-input
	// constraints included only if they were appended).
	Constraints int
	// Inputs counts input variables, One included; Aux the aux variables.
	Inputs, Aux int
	// ANNZ, BNNZ and CNNZ count the nonzero entries of A, B and C: the terms
	// of each constraint's LC after merging repeated variables and dropping
	// zero coefficients.
	ANNZ, BNNZ, CNNZ int
	// AAuxDensity counts aux variables with a nonzero A entry somewhere;
	// BInputDensity and BAuxDensity count inputs and aux variables with a
	// nonzero B entry: bellperson's prover DensityTrackers (the A query's
	// input part is full density).
	AAuxDensity, BInputDensity, BAuxDensity int
}

// String formats s as one line of key=value pairs.
func (s Stats) String() string {
	return fmt.Sprintf("constraints=%d inputs=%d aux=%d a_nnz=%d b_nnz=%d c_nnz=%d a_aux_density=%d b_input_density=%d b_aux_density=%d",
		s.Constraints, s.Inputs, s.Aux, s.ANNZ, s.BNNZ, s.CNNZ, s.AAuxDensity, s.BInputDensity, s.BAuxDensity)
}

// ErrTooManyVariables is returned (wrapped) when a System runs out of
// variable indices ([MaxVariables]).
var ErrTooManyVariables = errors.New("too many variables")

// ErrWrongAssignment is returned (wrapped) when an assignment does not fit
// a shape, or a shape is misused.
var ErrWrongAssignment = errors.New("assignment does not fit the shape")

// ErrUnsatisfied is wrapped by the [UnsatisfiedError] a checking witness
// reports.
var ErrUnsatisfied = errors.New("constraint not satisfied")

// UnsatisfiedError names the first constraint a witness does not satisfy.
type UnsatisfiedError struct {
	// Index is the constraint's number (0-based, in Enforce order).
	Index int
	// Path is the namespace path and constraint name, "/"-separated, as
	// bellpepper's TestConstraintSystem::which_is_unsatisfied prints it.
	Path string
	// A, B, C are the evaluations of the constraint's three LCs.
	A, B, C fr.Element
}

func (e *UnsatisfiedError) Error() string {
	return fmt.Sprintf("constraint %d %q: %v", e.Index, e.Path, ErrUnsatisfied)
}

// Unwrap returns ErrUnsatisfied.
func (e *UnsatisfiedError) Unwrap() error { return ErrUnsatisfied }

// nsPath is the namespace stack of the checking implementations. Entries
// are formatted only when a path is requested.
type nsPath struct {
	names []string
	idx   []int // -1: not indexed
}

func (p *nsPath) push(name string, i int) {
	p.names = append(p.names, name)
	p.idx = append(p.idx, i)
}

func (p *nsPath) pop() {
	if n := len(p.names); n > 0 {
		p.names = p.names[:n-1]
		p.idx = p.idx[:n-1]
	}
}

// path formats the stack followed by leaf.
func (p *nsPath) path(leaf string) string {
	var sb strings.Builder
	for k, n := range p.names {
		if k > 0 {
			sb.WriteByte('/')
		}
		sb.WriteString(n)
		if p.idx[k] >= 0 {
			sb.WriteByte(' ')
			sb.WriteString(strconv.Itoa(p.idx[k]))
		}
	}
	if leaf != "" {
		if sb.Len() > 0 {
			sb.WriteByte('/')
		}
		sb.WriteString(leaf)
	}
	return sb.String()
}

// Path returns the current namespace path of s formatted as in
// [UnsatisfiedError], or "" if s does not track namespaces.
func Path(s System) string {
	if p, ok := s.(interface{ nsPathString() string }); ok {
		return p.nsPathString()
	}
	return ""
}

// scratchCap is the capacity of each scratch LC buffer.
const scratchCap = 256

type scratch struct {
	a, b, c [scratchCap]Term
}

func (s *scratch) get() (a, b, c LC) { return s.a[:0], s.b[:0], s.c[:0] }
