// Package update is Filecoin's SnapDeals empty-sector update outside the
// circuit: the challenges of a partition and the randomness that encodes
// new data into a replica (storage-proofs-update src/challenges.rs and
// vanilla.rs). The circuit is filecoin/circuit's SynthesizeUpdate.
package update

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/hash"
)

// randomness is POSEIDON_CONSTANTS_GEN_RANDOMNESS: arity 2, Standard
// strength, domain tag Custom(Arbitrary(1)).
type randomness struct {
	c   *hash.Constants
	tag fr.Element
}

func newRandomness() (randomness, error) {
	c, err := hash.ConstantsFor(2, hash.Standard)
	if err != nil {
		return randomness{}, err
	}
	tag, err := hash.CustomTag(1)
	if err != nil {
		return randomness{}, err
	}
	return randomness{c: c, tag: tag}, nil
}

func (r randomness) hash(a, b fr.Element) (fr.Element, error) {
	return r.c.HashWithTag(r.tag, []fr.Element{a, b})
}

// Challenges returns partition k's challenges of an update of a sector of
// shape s whose new replica commitment is commRNew (challenges.rs
// Challenges::new): challenge_count node indexes, each the partition's
// index above random low bits, the bits read least significant first from
// digest = H(comm_r_new, digest index), 254/bits challenges a digest, the
// digest index counted across all partitions.
func Challenges(s circuit.UpdateShape, commRNew fr.Element, k int) ([]uint32, error) {
	if k < 0 || k >= s.Partitions() {
		return nil, fmt.Errorf("update challenges: partition %d of %d", k, s.Partitions())
	}
	pb := 0
	for 1<<pb < s.Partitions() {
		pb++
	}
	perChallenge := s.ChallengeBits() - pb
	return challenges(commRNew, s.Challenges(), perChallenge, uint32(k)<<perChallenge, k*digestsPerPartition(s.Challenges(), perChallenge))
}

// PoseidonChallenges are the single partition's challenges of the
// Poseidon variant (challenges.rs Challenges::new_poseidon): every
// partition's count, full-width, from digest index 0.
func PoseidonChallenges(s circuit.UpdateShape, commRNew fr.Element) ([]uint32, error) {
	return challenges(commRNew, s.PoseidonChallenges(), s.ChallengeBits(), 0, 0)
}

func digestsPerPartition(challenges, perChallenge int) int {
	perDigest := fr.Bits - 1 // Fr::CAPACITY
	perDigest /= perChallenge
	return (challenges + perDigest - 1) / perDigest
}

func challenges(commRNew fr.Element, n, perChallenge int, high uint32, digestIndex int) ([]uint32, error) {
	r, err := newRandomness()
	if err != nil {
		return nil, err
	}
	perDigest := (fr.Bits - 1) / perChallenge
	out := make([]uint32, 0, n)
	for len(out) < n {
		var idx fr.Element
		idx.SetUint64(uint64(digestIndex))
		d, err := r.hash(commRNew, idx)
		if err != nil {
			return nil, err
		}
		b := d.Bits() // canonical, little-endian words
		for i := 0; i < perDigest && len(out) < n; i++ {
			var c uint32
			for j := range perChallenge {
				bit := i*perChallenge + j
				if b[bit/64]>>(bit%64)&1 == 1 {
					c |= 1 << j
				}
			}
			out = append(out, c|high)
		}
		digestIndex++
	}
	return out, nil
}
