package scheme

import "io"

// SealRequest asks a scheme for test sectors (c2flow seal, the demo, the
// benchmarks): sectors First .. First+N-1 of Prover, sealed with fixed
// randomness (a second seal of an id writes the same C1) and written to
// Dir as <id>.c1.json, as the scheme's users write C1s, with a
// sectors.json of their public data beside them.
type SealRequest struct {
	Proof  string
	Prover [32]byte
	First  uint64
	N      int
	Dir    string
	// Sparse asks for committed-capacity sectors whose unopened nodes are
	// not computed (a scheme that cannot ignores it; one may seal so
	// above a size regardless, and says so on Progress).
	Sparse bool
	// Progress, when set, gets a line per sector sealed.
	Progress io.Writer
}

// TestProver is the prover id of c2flow's test sectors, of every scheme:
// the bytes of "c2flow test prover", zero-padded.
func TestProver() [32]byte {
	var id [32]byte
	copy(id[:], "c2flow test prover")
	return id
}
