// Package gadgets ports the circuit gadgets Filecoin's PoRep circuit is
// built from, for c2flow's [r1cs.System]: bellpepper-core's Boolean,
// AllocatedBit, AllocatedNum and Num (bellpepper-core 0.2.1, which
// bellperson 0.27 re-exports), bellperson 0.27's UInt32, MultiEq, SHA-256
// and multipack, and neptune 11's Poseidon circuit (circuit.rs, the one
// storage-proofs calls). Each gadget allocates the same variables and
// enforces the same constraints, in the same order, as its upstream
// original, so a circuit built from them has bellperson's R1CS. Namespaces
// follow upstream's names where they help locate a failing constraint.
//
// Values are always computed (a shape synthesis may feed zeros); gadgets
// never panic on bad input but return errors wrapping [ErrInput] or
// [ErrUnsatisfiable].
package gadgets
