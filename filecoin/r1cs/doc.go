// Package r1cs is c2flow's rank-1 constraint system in the shape of
// bellpepper's ConstraintSystem, so that circuits written against it (the
// gadgets in filecoin/gadgets, Filecoin's StackedCircuit) produce exactly
// the R1CS bellperson produces: the same variables in the same order (inputs,
// then aux, each in allocation order, input 0 being the constant one) and
// the same constraints in the same order, to which bellperson's parameter
// generator and prover append one constraint input_i · 0 = 0 per input.
// Filecoin's Groth16 parameters fit only that system.
//
// [System] is the interface circuits use. Three implementations:
//
//   - [Witness], the witness builder (bellperson's ProvingAssignment): the
//     assignment and the evaluations a, b, c of every constraint, with a
//     check mode that names the first unsatisfied constraint by its
//     namespace path;
//   - [Shape], the shape recorder (bellperson's KeypairAssembly): sparse A,
//     B, C, convertible to gnark's R1CS over BLS12-381 ([Shape.Gnark]),
//     serialized deterministically and cached on disk under its digest
//     ([ShapeCache]), and able to evaluate a, b, c from an assignment
//     ([Shape.EvalABC], the compiled synthesis path);
//   - [Counter], which counts constraints, variables, nonzeros and densities
//     in memory independent of the number of constraints (one bit per
//     variable).
//
// Constraint names and namespaces cost nothing outside the checking
// witness: pass constant strings, and [System.PushIndexed] for loops.
package r1cs
