package groth

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/consensys/gnark-crypto/ecc"
	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"
)

// ProofSize is the size of one partition's proof in Filecoin's format.
const ProofSize = 2*G1Compressed + G2Compressed // 192

// Proof is one Groth16 proof (one partition's), bellperson's Proof<Bls12>.
type Proof struct {
	A bls.G1Affine
	B bls.G2Affine
	C bls.G1Affine
}

// Bytes returns the proof in Filecoin's format: A | B | C, each in the
// zcash compressed encoding (gnark-crypto's Bytes).
func (p *Proof) Bytes() [ProofSize]byte {
	var out [ProofSize]byte
	a, b, c := p.A.Bytes(), p.B.Bytes(), p.C.Bytes()
	copy(out[:], a[:])
	copy(out[G1Compressed:], b[:])
	copy(out[G1Compressed+G2Compressed:], c[:])
	return out
}

// DecodeProof decodes one 192-byte proof as bellperson's Proof::read does:
// each point on the curve and in the subgroup, none at infinity.
func DecodeProof(b []byte) (Proof, error) {
	var p Proof
	if len(b) != ProofSize {
		return p, fmt.Errorf("decoding proof: %d bytes, want %d: %w", len(b), ProofSize, ErrFormat)
	}
	if err := decodeG1Compressed(b[:G1Compressed], &p.A); err != nil {
		return p, fmt.Errorf("decoding proof: A: %w", err)
	}
	if err := decodeG2Compressed(b[G1Compressed:G1Compressed+G2Compressed], &p.B); err != nil {
		return p, fmt.Errorf("decoding proof: B: %w", err)
	}
	if err := decodeG1Compressed(b[G1Compressed+G2Compressed:], &p.C); err != nil {
		return p, fmt.Errorf("decoding proof: C: %w", err)
	}
	if p.A.IsInfinity() || p.B.IsInfinity() || p.C.IsInfinity() {
		return p, fmt.Errorf("decoding proof: point at infinity: %w", ErrPoint)
	}
	return p, nil
}

// DecodeProofs decodes n concatenated proofs (Filecoin's multi-partition
// proof bytes, bellperson's Proof::read_many), in parallel.
func DecodeProofs(b []byte, n int) ([]Proof, error) {
	if n < 1 || len(b) != n*ProofSize {
		return nil, fmt.Errorf("decoding proofs: %d bytes for %d partitions, want %d: %w", len(b), n, n*ProofSize, ErrFormat)
	}
	out := make([]Proof, n)
	errs := make([]error, n)
	parallel(n, func(k int) {
		p, err := DecodeProof(b[k*ProofSize : (k+1)*ProofSize])
		if err != nil {
			errs[k] = fmt.Errorf("partition %d: %w", k, err)
			return
		}
		out[k] = p
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// EncodeProofs concatenates the proofs' bytes, partitions in order.
func EncodeProofs(ps []Proof) []byte {
	out := make([]byte, 0, len(ps)*ProofSize)
	for i := range ps {
		b := ps[i].Bytes()
		out = append(out, b[:]...)
	}
	return out
}

// ProofFromGnark returns the bellperson proof of a gnark proof without
// commitments (gnark's Ar, Bs, Krs are A, B, C).
func ProofFromGnark(g *groth16bls.Proof) (Proof, error) {
	if len(g.Commitments) != 0 {
		return Proof{}, fmt.Errorf("converting gnark proof: commitments have no bellperson form: %w", ErrMismatch)
	}
	return Proof{A: g.Ar, B: g.Bs, C: g.Krs}, nil
}

// Gnark returns the gnark form of p, for gnark's verifier.
func (p *Proof) Gnark() *groth16bls.Proof {
	return &groth16bls.Proof{Ar: p.A, Bs: p.B, Krs: p.C}
}

// PreparedVerifyingKey is a verifying key ready to verify proofs (the
// negations of alpha, gamma and delta computed once). It is safe for
// concurrent use.
type PreparedVerifyingKey struct {
	VK                 *VerifyingKey
	alphaNeg           bls.G1Affine
	gammaNeg, deltaNeg bls.G2Affine
}

// Prepare returns vk prepared for verification. vk must not change
// afterwards.
func (vk *VerifyingKey) Prepare() *PreparedVerifyingKey {
	p := &PreparedVerifyingKey{VK: vk}
	p.alphaNeg.Neg(&vk.AlphaG1)
	p.gammaNeg.Neg(&vk.GammaG2)
	p.deltaNeg.Neg(&vk.DeltaG2)
	return p
}

// Verify checks one proof against its public inputs (without ONE):
// e(A, B) = e(alpha, beta) e(IC_0 + sum x_i IC_i, gamma) e(C, delta),
// bellperson's verify_proof. It returns nil for a valid proof, an error
// wrapping ErrInvalidProof for one that does not verify, and ErrMismatch
// for an input count that does not fit the key.
func (p *PreparedVerifyingKey) Verify(proof *Proof, public []fr.Element) error {
	vk := p.VK
	if len(public)+1 != len(vk.IC) {
		return fmt.Errorf("verifying proof: %d public inputs, the verifying key takes %d: %w", len(public), len(vk.IC)-1, ErrMismatch)
	}
	// Points built in memory (not decoded) are checked too: the pairing is
	// meaningless outside the subgroups.
	if !proof.A.IsInSubGroup() || !proof.B.IsInSubGroup() || !proof.C.IsInSubGroup() {
		return fmt.Errorf("verifying proof: point not in the subgroup: %w", ErrInvalidProof)
	}
	var acc bls.G1Jac
	if len(public) > 0 {
		if _, err := acc.MultiExp(vk.IC[1:], public, ecc.MultiExpConfig{}); err != nil {
			return fmt.Errorf("verifying proof: input accumulation: %w", err)
		}
	}
	acc.AddMixed(&vk.IC[0])
	var accAff bls.G1Affine
	accAff.FromJacobian(&acc)
	ok, err := bls.PairingCheck(
		[]bls.G1Affine{proof.A, accAff, proof.C, p.alphaNeg},
		[]bls.G2Affine{proof.B, p.gammaNeg, p.deltaNeg, vk.BetaG2})
	if err != nil {
		return fmt.Errorf("verifying proof: pairing: %w", err)
	}
	if !ok {
		return fmt.Errorf("verifying proof: pairing check failed: %w", ErrInvalidProof)
	}
	return nil
}

// VerifyPartitions verifies the proofs of every partition of a sector
// against their public inputs (inputs[k] for proofs[k]), in parallel. It
// returns the error of the first partition (by index) that does not
// verify.
func (p *PreparedVerifyingKey) VerifyPartitions(proofs []Proof, inputs [][]fr.Element) error {
	if len(proofs) != len(inputs) {
		return fmt.Errorf("verifying partitions: %d proofs, %d input vectors: %w", len(proofs), len(inputs), ErrMismatch)
	}
	errs := make([]error, len(proofs))
	parallel(len(proofs), func(k int) {
		if err := p.Verify(&proofs[k], inputs[k]); err != nil {
			errs[k] = fmt.Errorf("partition %d: %w", k, err)
		}
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// parallel calls f(0..n-1) from at most GOMAXPROCS goroutines.
func parallel(n int, f func(int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
