package prover

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/prover/packed"
)

// TamperPartial corrupts one field of a partial (tests only).
func TamperPartial(pt *Partial, field string) {
	switch field {
	case "ar":
		pt.ar.Double(&pt.ar)
	case "h":
		pt.h.Double(&pt.h)
	case "krs":
		pt.krs.Double(&pt.krs)
	case "wireB":
		// The assignment the B-in-G2 MSM reads, changed at wires spread
		// over it (some of them have B points).
		w := make([]fr.Element, pt.w.Len())
		pt.w.Expand(w, 0)
		for i := len(w) / 2; i < len(w); i += 997 {
			w[i].SetUint64(3)
		}
		pt.w = packed.Pack(w)
	}
}
