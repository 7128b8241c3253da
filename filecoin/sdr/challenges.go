package sdr

import (
	"golang.org/x/crypto/blake2b"

	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/c2flow/c2flow/filecoin/proofs"
)

// PoRep challenge derivation (storage-proofs-porep
// stacked/vanilla/challenges.rs). Every challenge is a node index in
// [1, sectorNodes-1]: a 256-bit little-endian integer x becomes
// x mod (sectorNodes-1) + 1 (bigint_to_challenge).

// ChallengeMode selects how PoRep challenges are derived (filecoin-proofs
// parameters.rs select_challenges: by the proof's API feature).
type ChallengeMode uint8

const (
	// Interactive: from replica_id and the interactive seed (randomness).
	Interactive ChallengeMode = iota
	// Synthetic (Feat_SyntheticPoRep): the seed selects challenges from a
	// set of synthetic challenges derived from replica_id and comm_r.
	Synthetic
	// NonInteractive (Feat_NonInteractivePoRep): from replica_id and comm_r.
	NonInteractive
)

// String returns the mode's name.
func (m ChallengeMode) String() string {
	switch m {
	case Interactive:
		return "interactive"
	case Synthetic:
		return "synthetic"
	case NonInteractive:
		return "non-interactive"
	}
	return fmt.Sprintf("ChallengeMode(%d)", uint8(m))
}

// bigintToChallenge reduces the little-endian 256-bit integer x to a node in
// [1, sectorNodes-1]. sectorNodes must be in [2, 2^32].
func bigintToChallenge(x *[32]byte, sectorNodes uint64) uint64 {
	m := sectorNodes - 1
	var r uint64
	for i := 3; i >= 0; i-- {
		r = bits.Rem64(r, binary.LittleEndian.Uint64(x[8*i:]), m)
	}
	return r + 1
}

func checkChallengeArgs(op string, sectorNodes uint64, perPartition int, k int) error {
	if sectorNodes < 2 || sectorNodes > 1<<32 {
		return fmt.Errorf("%s: sector nodes %d out of range [2, 2^32]", op, sectorNodes)
	}
	if perPartition < 0 {
		return fmt.Errorf("%s: negative challenge count %d", op, perPartition)
	}
	// Upstream passes the partition index as u8.
	if k < 0 || k > 255 {
		return fmt.Errorf("%s: partition %d out of range [0, 255]", op, k)
	}
	return nil
}

// InteractiveChallenges returns the perPartition challenges of partition k
// (InteractiveChallenges::derive): challenge i is SHA-256(replica_id || seed
// || j (u32 LE)) with j = perPartition*k + i (truncated to 32 bits as
// upstream does), reduced to a node. k is a u8 upstream: 0 <= k <= 255.
func InteractiveChallenges(sectorNodes uint64, replicaID, seed [32]byte, perPartition, k int) ([]uint64, error) {
	if err := checkChallengeArgs("sdr interactive challenges", sectorNodes, perPartition, k); err != nil {
		return nil, err
	}
	var buf [32 + 32 + 4]byte
	copy(buf[0:], replicaID[:])
	copy(buf[32:], seed[:])
	out := make([]uint64, perPartition)
	for i := range out {
		binary.LittleEndian.PutUint32(buf[64:], uint32(perPartition*k+i))
		h := sha256.Sum256(buf[:])
		out[i] = bigintToChallenge(&h, sectorNodes)
	}
	return out, nil
}

// niTag is the NonInteractive challenge domain tag.
const niTag = "filecoin.io|PoRep|1|NonInteractive|1"

// NonInteractiveChallenges returns the perPartition challenges of partition
// k for non-interactive PoRep (NiChallenges::derive): challenge i is
// SHA-256(tag || replica_id || comm_r || j (u32 LE)), j = perPartition*k+i.
func NonInteractiveChallenges(sectorNodes uint64, replicaID, commR [32]byte, perPartition, k int) ([]uint64, error) {
	if err := checkChallengeArgs("sdr non-interactive challenges", sectorNodes, perPartition, k); err != nil {
		return nil, err
	}
	buf := make([]byte, 0, len(niTag)+32+32+4)
	buf = append(buf, niTag...)
	buf = append(buf, replicaID[:]...)
	buf = append(buf, commR[:]...)
	buf = append(buf, 0, 0, 0, 0)
	jOff := len(buf) - 4
	out := make([]uint64, perPartition)
	for i := range out {
		binary.LittleEndian.PutUint32(buf[jOff:], uint32(perPartition*k+i))
		h := sha256.Sum256(buf)
		out[i] = bigintToChallenge(&h, sectorNodes)
	}
	return out, nil
}

// Synthetic PoRep (challenges.rs, mod synthetic).
const (
	// DefaultSynthChallengeCount is the number of synthetic challenges for
	// production sector sizes (capped at the sector's node count); the
	// registry's value.
	DefaultSynthChallengeCount = proofs.DefaultSynthChallengeCount
	synthChallengeSize         = 32
	synthIndexSize             = 4
	synthGenerationKey         = "filecoin.io|PoRep|1|Synthetic|1|Generation"
	synthSelectionKey          = "filecoin.io|PoRep|1|Synthetic|1|Selection"
)

var synthNonce = [12]byte{'s', 'y', 'n', 't', 'h', '-', 'p', 'o', 'r', 'e', 'p', 0}

// synthChaCha20 keys ChaCha20 with BLAKE2b-256 keyed by key over a || b.
func synthChaCha20(key string, a, b *[32]byte) *chacha20IETF {
	h, err := blake2b.New(32, []byte(key))
	if err != nil { // the keys are constants of at most 64 bytes
		panic(fmt.Sprintf("sdr: blake2b key %q: %v", key, err))
	}
	h.Write(a[:])
	h.Write(b[:])
	var k [32]byte
	h.Sum(k[:0])
	return newChaCha20IETF(&k, &synthNonce)
}

// SynthGenerator derives synthetic challenges (SynthChallengeGenerator). It
// is cheap to create; it is not safe for concurrent use.
type SynthGenerator struct {
	sectorNodes uint64
	replicaID   [32]byte
	numSynth    uint64
	gen         *chacha20IETF
}

// NewSynthGenerator returns a generator of numSynth synthetic challenges for
// the sector. replicaID and commR are little-endian field elements and must
// be canonical (upstream converts them to Fr and back). numSynth must be in
// [1, 2^32); upstream uses DefaultSynthChallenges(sectorNodes).
func NewSynthGenerator(sectorNodes uint64, replicaID, commR [32]byte, numSynth uint64) (*SynthGenerator, error) {
	const op = "new sdr synthetic challenge generator"
	if sectorNodes < 2 || sectorNodes > 1<<32 {
		return nil, fmt.Errorf("%s: sector nodes %d out of range [2, 2^32]", op, sectorNodes)
	}
	if numSynth == 0 || numSynth >= 1<<32 {
		return nil, fmt.Errorf("%s: synthetic challenge count %d out of range [1, 2^32)", op, numSynth)
	}
	if _, err := frFromLE(op, "replica id", &replicaID); err != nil {
		return nil, err
	}
	if _, err := frFromLE(op, "comm_r", &commR); err != nil {
		return nil, err
	}
	return &SynthGenerator{
		sectorNodes: sectorNodes,
		replicaID:   replicaID,
		numSynth:    numSynth,
		gen:         synthChaCha20(synthGenerationKey, &replicaID, &commR),
	}, nil
}

// DefaultSynthChallenges returns min(sectorNodes, DefaultSynthChallengeCount),
// the synthetic challenge count upstream uses for a sector.
func DefaultSynthChallenges(sectorNodes uint64) uint64 {
	return min(sectorNodes, DefaultSynthChallengeCount)
}

// NewDefaultSynthGenerator is NewSynthGenerator with the default count
// (SynthChallengeGenerator::default).
func NewDefaultSynthGenerator(sectorNodes uint64, replicaID, commR [32]byte) (*SynthGenerator, error) {
	return NewSynthGenerator(sectorNodes, replicaID, commR, DefaultSynthChallenges(sectorNodes))
}

// NumSynth returns the number of synthetic challenges.
func (s *SynthGenerator) NumSynth() uint64 { return s.numSynth }

// Challenge returns synthetic challenge i (i < NumSynth()): 32 keystream
// bytes at offset 32*i, as a little-endian integer reduced to a node.
func (s *SynthGenerator) Challenge(i uint64) (uint64, error) {
	if i >= s.numSynth {
		return 0, fmt.Errorf("sdr synthetic challenge %d: out of range (%d synthetic challenges)", i, s.numSynth)
	}
	return s.challenge(i), nil
}

func (s *SynthGenerator) challenge(i uint64) uint64 {
	var b [synthChallengeSize]byte
	// Upstream seeks to the byte offset cast to u32.
	s.gen.seek(uint64(uint32(i * synthChallengeSize)))
	s.gen.keystream(b[:])
	return bigintToChallenge(&b, s.sectorNodes)
}

// All returns every synthetic challenge in order (the set for which
// synthetic vanilla proofs are generated).
func (s *SynthGenerator) All() []uint64 {
	out := make([]uint64, s.numSynth)
	var b [synthChallengeSize]byte
	s.gen.seek(0)
	for i := range out {
		s.gen.keystream(b[:])
		out[i] = bigintToChallenge(&b, s.sectorNodes)
	}
	return out
}

// PartitionIndexes returns which synthetic challenges (indexes in
// [0, NumSynth())) are partition k's perPartition PoRep challenges for the
// interactive seed (gen_partition_synth_indexes): u32 LE words of a ChaCha20
// keystream keyed by replica_id and seed, starting at word perPartition*k,
// each reduced mod NumSynth().
func (s *SynthGenerator) PartitionIndexes(seed [32]byte, perPartition, k int) ([]uint64, error) {
	if err := checkChallengeArgs("sdr synthetic challenge indexes", s.sectorNodes, perPartition, k); err != nil {
		return nil, err
	}
	sel := synthChaCha20(synthSelectionKey, &s.replicaID, &seed)
	// Upstream seeks to the byte offset cast to u32.
	sel.seek(uint64(uint32(k * perPartition * synthIndexSize)))
	b := make([]byte, perPartition*synthIndexSize)
	sel.keystream(b)
	out := make([]uint64, perPartition)
	for i := range out {
		out[i] = uint64(binary.LittleEndian.Uint32(b[i*synthIndexSize:])) % s.numSynth
	}
	return out, nil
}

// PoRepChallenges returns partition k's perPartition PoRep challenges
// selected from the synthetic challenges by seed
// (gen_porep_partition_challenges).
func (s *SynthGenerator) PoRepChallenges(seed [32]byte, perPartition, k int) ([]uint64, error) {
	idx, err := s.PartitionIndexes(seed, perPartition, k)
	if err != nil {
		return nil, err
	}
	for i, j := range idx {
		idx[i] = s.challenge(j)
	}
	return idx, nil
}

// ChallengeParams gathers what Challenges needs. CommR is used by the
// Synthetic and NonInteractive modes, Seed by Interactive and Synthetic.
type ChallengeParams struct {
	Mode                   ChallengeMode
	SectorNodes            uint64
	ChallengesPerPartition int
	ReplicaID              [32]byte
	CommR                  [32]byte
	Seed                   [32]byte
}

// Challenges returns the PoRep challenges of partition k, as
// PublicInputs::challenges does when the seed is set (for Synthetic: the
// synthetic challenges selected by the seed, with the default synthetic
// challenge count).
func Challenges(p ChallengeParams, k int) ([]uint64, error) {
	switch p.Mode {
	case Interactive:
		return InteractiveChallenges(p.SectorNodes, p.ReplicaID, p.Seed, p.ChallengesPerPartition, k)
	case Synthetic:
		s, err := NewDefaultSynthGenerator(p.SectorNodes, p.ReplicaID, p.CommR)
		if err != nil {
			return nil, err
		}
		return s.PoRepChallenges(p.Seed, p.ChallengesPerPartition, k)
	case NonInteractive:
		return NonInteractiveChallenges(p.SectorNodes, p.ReplicaID, p.CommR, p.ChallengesPerPartition, k)
	}
	return nil, fmt.Errorf("sdr challenges: unknown mode %d", p.Mode)
}
