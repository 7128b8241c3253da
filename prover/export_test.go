package prover

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
		pt.wireB[len(pt.wireB)/2].SetUint64(3)
	}
}
