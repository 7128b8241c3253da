package r1cs

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/prover/packed"
)

// WitnessOptions configures a [Witness].
type WitnessOptions struct {
	// ABC keeps the evaluations a, b, c of every constraint (bellperson's
	// ProvingAssignment a, b, c: what the prover's H computation consumes).
	// Without it the builder computes only the assignment, for the compiled
	// path that evaluates a, b, c later from a recorded [Shape].
	ABC bool
	// Check verifies every constraint as it is enforced and records the
	// first unsatisfied one (see [Witness.Err]); it also tracks namespaces.
	Check bool
	// Pack, if set, takes the aux values instead of Aux, packed as they
	// are allocated (the synthesis of a partition that waits for a device:
	// never a dense assignment). Neither ABC nor Check can be set with it:
	// they evaluate LCs over a dense assignment.
	Pack *packed.Builder
	// Checkpoint, if set, is called every CheckpointEvery constraints (a
	// long synthesis's pause points: cancellation, urgent work first); its
	// first error stops the calls and is the witness's Err.
	Checkpoint func() error
	// InputsHint, AuxHint and ConstraintsHint preallocate capacity. For
	// large circuits pass the exact sizes (a [Counter]'s or [Shape]'s
	// Stats): growing multi-GiB slices by append copies them and briefly
	// needs up to twice their memory.
	InputsHint, AuxHint, ConstraintsHint int
}

// Witness is the witness builder: a [System] that computes the assignment
// (inputs, then aux, in allocation order) and, optionally, the evaluations
// of each constraint's LCs. It is bellperson's ProvingAssignment.
type Witness struct {
	// Inputs holds the input assignment; Inputs[0] is one.
	Inputs []fr.Element
	// Aux holds the auxiliary assignment.
	Aux []fr.Element
	// A, B, C hold each constraint's LC evaluations when WitnessOptions.ABC
	// is set; otherwise they stay empty.
	A, B, C []fr.Element

	n          int // constraints enforced
	abc, check bool
	pack       *packed.Builder
	nAux       int // aux allocated into pack
	misuse     error
	path       nsPath
	failure    *UnsatisfiedError
	overflow   error
	scr        scratch
	checkpoint func() error
	stopped    error // the checkpoint's error
}

// CheckpointEvery is how many constraints a witness builds between
// checkpoints (WitnessOptions.Checkpoint): about 30 ms of a Filecoin
// synthesis on one core, so a pause comes soon and costs nothing.
const CheckpointEvery = 1 << 16

var _ System = (*Witness)(nil)

// NewWitness returns an empty witness builder with One allocated.
func NewWitness(opts WitnessOptions) *Witness {
	w := &Witness{
		Inputs: make([]fr.Element, 0, max(opts.InputsHint, 1)),
		abc:    opts.ABC,
		check:  opts.Check,
		pack:   opts.Pack,

		checkpoint: opts.Checkpoint,
	}
	if w.pack == nil {
		w.Aux = make([]fr.Element, 0, opts.AuxHint)
	} else if opts.ABC || opts.Check {
		w.misuse = fmt.Errorf("witness: a packed witness cannot keep a, b, c or check constraints: %w", ErrWrongAssignment)
		w.abc, w.check = false, false
	}
	if opts.ABC {
		w.A = make([]fr.Element, 0, opts.ConstraintsHint)
		w.B = make([]fr.Element, 0, opts.ConstraintsHint)
		w.C = make([]fr.Element, 0, opts.ConstraintsHint)
	}
	w.Inputs = append(w.Inputs, fr.One())
	return w
}

// Alloc implements [System].
func (w *Witness) Alloc(value fr.Element) Variable {
	if w.pack != nil {
		if w.nAux >= MaxVariables {
			w.setOverflow("aux")
			return Aux(MaxVariables - 1)
		}
		w.pack.Append(&value)
		w.nAux++
		return Aux(w.nAux - 1)
	}
	if len(w.Aux) >= MaxVariables {
		w.setOverflow("aux")
		return Aux(MaxVariables - 1)
	}
	w.Aux = append(w.Aux, value)
	return Aux(len(w.Aux) - 1)
}

// AllocInput implements [System].
func (w *Witness) AllocInput(value fr.Element) Variable {
	if len(w.Inputs) >= MaxVariables {
		w.setOverflow("input")
		return Input(MaxVariables - 1)
	}
	w.Inputs = append(w.Inputs, value)
	return Input(len(w.Inputs) - 1)
}

func (w *Witness) setOverflow(kind string) {
	if w.overflow == nil {
		w.overflow = fmt.Errorf("witness: allocating %s variable: %w", kind, ErrTooManyVariables)
	}
}

// Enforce implements [System].
func (w *Witness) Enforce(name string, a, b, c LC) {
	idx := w.n
	w.n++
	if w.checkpoint != nil && w.n%CheckpointEvery == 0 && w.stopped == nil {
		w.stopped = w.checkpoint()
	}
	if !w.abc && !w.check {
		return
	}
	av := a.Eval(w.Inputs, w.Aux)
	bv := b.Eval(w.Inputs, w.Aux)
	cv := c.Eval(w.Inputs, w.Aux)
	if w.abc {
		w.A = append(w.A, av)
		w.B = append(w.B, bv)
		w.C = append(w.C, cv)
	}
	if w.check && w.failure == nil {
		var p fr.Element
		p.Mul(&av, &bv)
		if !p.Equal(&cv) {
			w.failure = &UnsatisfiedError{Index: idx, Path: w.path.path(name), A: av, B: bv, C: cv}
		}
	}
}

// Push implements [System].
func (w *Witness) Push(name string) {
	if w.check {
		w.path.push(name, -1)
	}
}

// PushIndexed implements [System].
func (w *Witness) PushIndexed(name string, i int) {
	if w.check {
		w.path.push(name, i)
	}
}

// Pop implements [System].
func (w *Witness) Pop() {
	if w.check {
		w.path.pop()
	}
}

// Scratch implements [System].
func (w *Witness) Scratch() (a, b, c LC) { return w.scr.get() }

// WantsValues implements [System]; it is true.
func (w *Witness) WantsValues() bool { return true }

func (w *Witness) nsPathString() string { return w.path.path("") }

// NumConstraints returns the number of constraints enforced so far.
func (w *Witness) NumConstraints() int { return w.n }

// AppendInputConstraints enforces bellperson's per-input constraints
// input_i · 0 = 0 for every input, One included, as bellperson's prover
// does after synthesis. Call it once, after the circuit.
func (w *Witness) AppendInputConstraints() {
	for i := range w.Inputs {
		a, b, c := w.Scratch()
		w.Enforce("", a.Add(Input(i)), b, c)
	}
}

// NumAux returns the number of aux variables allocated (into Aux, or
// packed).
func (w *Witness) NumAux() int {
	if w.pack != nil {
		return w.nAux
	}
	return len(w.Aux)
}

// Err returns the first problem met: a packed witness asked to check or
// keep a, b, c, running out of variable indices, or,
// in check mode, an *[UnsatisfiedError] (wrapping [ErrUnsatisfied]) naming
// the first unsatisfied constraint. It returns nil if there is none.
func (w *Witness) Err() error {
	if w.stopped != nil {
		return w.stopped
	}
	if w.misuse != nil {
		return w.misuse
	}
	if w.overflow != nil {
		return w.overflow
	}
	if w.failure != nil {
		return fmt.Errorf("witness check: %w", w.failure)
	}
	return nil
}
