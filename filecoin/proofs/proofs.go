// Package proofs is the table of Filecoin's registered seal proofs that
// c2flow supports: their numeric ids, sector geometry, partition and
// challenge counts, tree shapes, porep_id, API version and features, and
// the key under which a Commit-1 artifact stores their vanilla proofs.
//
// The values come from rust-filecoin-proofs-api src/registry.rs and
// src/seal.rs, rust-fil-proofs filecoin-proofs/src/constants.rs and
// filecoin-proofs/src/parameters.rs, and storage-proofs-core
// src/api_version.rs; the tests pin them to those files.
//
// Supported: StackedDrg{2KiB,8MiB,512MiB,32GiB,64GiB} in versions V1, V1_1
// and V1_1_Feat_SyntheticPoRep (ids 0 to 14). The non-interactive proofs
// (ids 15 to 19) are known but not supported: Lookup, ByID and ByName
// return an error wrapping ErrUnsupported for them, while Describe returns
// their constants for code that only needs the registry's numbers (the SDR
// graph, challenge counts).
//
// This package is the single registry of these values: filecoin/sdr and
// the packages above it take the porep_id, API version and counts from
// here.
package proofs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strings"
)

// RegisteredSealProof is a seal proof's numeric id, numbered as in
// rust-filecoin-proofs-api's REGISTERED_PROOF_IDS (the same numbers as the
// chain's abi.RegisteredSealProof). The numbering is append-only upstream.
type RegisteredSealProof int64

// The registered seal proofs. Ids 15 to 19 are known but unsupported.
const (
	StackedDrg2KiBV1   RegisteredSealProof = 0
	StackedDrg8MiBV1   RegisteredSealProof = 1
	StackedDrg512MiBV1 RegisteredSealProof = 2
	StackedDrg32GiBV1  RegisteredSealProof = 3
	StackedDrg64GiBV1  RegisteredSealProof = 4

	StackedDrg2KiBV1_1   RegisteredSealProof = 5
	StackedDrg8MiBV1_1   RegisteredSealProof = 6
	StackedDrg512MiBV1_1 RegisteredSealProof = 7
	StackedDrg32GiBV1_1  RegisteredSealProof = 8
	StackedDrg64GiBV1_1  RegisteredSealProof = 9

	StackedDrg2KiBV1_1_Feat_SyntheticPoRep   RegisteredSealProof = 10
	StackedDrg8MiBV1_1_Feat_SyntheticPoRep   RegisteredSealProof = 11
	StackedDrg512MiBV1_1_Feat_SyntheticPoRep RegisteredSealProof = 12
	StackedDrg32GiBV1_1_Feat_SyntheticPoRep  RegisteredSealProof = 13
	StackedDrg64GiBV1_1_Feat_SyntheticPoRep  RegisteredSealProof = 14

	StackedDrg2KiBV1_2_Feat_NonInteractivePoRep   RegisteredSealProof = 15
	StackedDrg8MiBV1_2_Feat_NonInteractivePoRep   RegisteredSealProof = 16
	StackedDrg512MiBV1_2_Feat_NonInteractivePoRep RegisteredSealProof = 17
	StackedDrg32GiBV1_2_Feat_NonInteractivePoRep  RegisteredSealProof = 18
	StackedDrg64GiBV1_2_Feat_NonInteractivePoRep  RegisteredSealProof = 19
)

// Graph and tree constants shared by every supported proof.
const (
	// NodeSize is the size in bytes of one sector node.
	NodeSize = 32
	// DRGParents is the base (DRG) degree of the stacked graph
	// (storage-proofs-core drgraph.rs BASE_DEGREE).
	DRGParents = 6
	// ExpParents is the expander degree (stacked/vanilla/graph.rs EXP_DEGREE).
	ExpParents = 8
	// TotalParents is the number of parent labels hashed into a label,
	// the parents repeated to fill it (stacked/vanilla/proof.rs TOTAL_PARENTS).
	TotalParents = 37
	// MaxLegacyID is the highest id whose graph uses the legacy (V1)
	// parent derivation (storage-proofs-core lib.rs
	// MAX_LEGACY_POREP_REGISTERED_PROOF_ID).
	MaxLegacyID = 4
	// SinglePartitionProofLen is the size of one Groth16 partition proof.
	SinglePartitionProofLen = 192
	// DefaultSynthChallengeCount is the number of synthetic challenges of
	// a production sector (storage-proofs-porep challenges.rs
	// DEFAULT_SYNTH_CHALLENGE_COUNT); a sector with fewer nodes has one per
	// node.
	DefaultSynthChallengeCount = 1 << 18
	// maxChallengesPerPartition is constants.rs MAX_CHALLENGES_PER_PARTITION.
	maxChallengesPerPartition = 18
)

// Errors returned (wrapped) by the lookups.
var (
	// ErrUnknown: the name or id is not a registered seal proof.
	ErrUnknown = errors.New("unknown registered seal proof")
	// ErrUnknownPoSt: the name or id is not a registered PoSt proof.
	ErrUnknownPoSt = errors.New("unknown registered PoSt proof")
	// ErrUnsupported: a registered seal proof that c2flow does not prove.
	ErrUnsupported = errors.New("registered seal proof not supported")
)

// APIVersion is a proofs API version (storage-proofs-core ApiVersion).
type APIVersion uint8

// The API versions.
const (
	APIVersion1_0_0 APIVersion = iota
	APIVersion1_1_0
	APIVersion1_2_0
)

// Semver returns the version's major, minor and patch numbers.
func (v APIVersion) Semver() (major, minor, patch int) {
	switch v {
	case APIVersion1_0_0:
		return 1, 0, 0
	case APIVersion1_1_0:
		return 1, 1, 0
	case APIVersion1_2_0:
		return 1, 2, 0
	}
	return 0, 0, 0
}

// Valid reports whether v is a known API version.
func (v APIVersion) Valid() bool { return v <= APIVersion1_2_0 }

// String returns the version as upstream displays it, e.g. "1.1.0".
func (v APIVersion) String() string {
	if !v.Valid() {
		return fmt.Sprintf("APIVersion(%d)", uint8(v))
	}
	a, b, c := v.Semver()
	return fmt.Sprintf("%d.%d.%d", a, b, c)
}

// ParseAPIVersion parses a version as upstream displays it ("1.0.0",
// "1.1.0", "1.2.0") or as serde names it ("V1_0_0", "V1_1_0", "V1_2_0").
func ParseAPIVersion(s string) (APIVersion, error) {
	switch s {
	case "1.0.0", "V1_0_0":
		return APIVersion1_0_0, nil
	case "1.1.0", "V1_1_0":
		return APIVersion1_1_0, nil
	case "1.2.0", "V1_2_0":
		return APIVersion1_2_0, nil
	}
	return 0, fmt.Errorf("parse api version %q: unknown version (valid: 1.0.0, 1.1.0, 1.2.0)", s)
}

// PoRepID is the 32-byte proof-of-replication identifier that seeds the SDR
// graph and enters the replica id: the registered proof id as u64
// little-endian, a nonce as u64 little-endian, then 16 zero bytes
// (rust-filecoin-proofs-api src/registry.rs porep_id).
type PoRepID [32]byte

// NewPoRepID returns the porep_id of a registered proof id and nonce (the
// nonce is 0 for every registered seal proof).
func NewPoRepID(registeredProofID, nonce uint64) PoRepID {
	var id PoRepID
	binary.LittleEndian.PutUint64(id[0:8], registeredProofID)
	binary.LittleEndian.PutUint64(id[8:16], nonce)
	return id
}

// IsLegacy reports whether the registered proof id in the first 8 bytes is
// at most MaxLegacyID, i.e. a V1 (API 1.0.0) seal proof
// (storage-proofs-core is_legacy_porep_id).
func (id PoRepID) IsLegacy() bool {
	return binary.LittleEndian.Uint64(id[:8]) <= MaxLegacyID
}

// Features is a set of optional proof features (storage-proofs-core
// ApiFeature).
type Features uint8

// The features.
const (
	FeatureSyntheticPoRep      Features = 1 << 0
	FeatureNonInteractivePoRep Features = 1 << 1
)

// Has reports whether every feature in f is in s.
func (s Features) Has(f Features) bool { return s&f == f }

// Names returns the features' names as upstream displays them
// ("synthetic-porep", "non-interactive-porep"), in that order.
func (s Features) Names() []string {
	var out []string
	if s.Has(FeatureSyntheticPoRep) {
		out = append(out, "synthetic-porep")
	}
	if s.Has(FeatureNonInteractivePoRep) {
		out = append(out, "non-interactive-porep")
	}
	return out
}

// String returns the feature names joined by ",", or "" for none.
func (s Features) String() string { return strings.Join(s.Names(), ",") }

// TreeShape is the arity of a Merkle tree's levels: the base trees' arity,
// and the arity of the sub-tree and top-tree levels joining them (0 when
// absent), as in rust-fil-proofs' LCTree<Hasher, Base, Sub, Top>.
type TreeShape struct {
	Base, Sub, Top int
}

// String returns the shape as "base-sub-top", e.g. "8-8-0".
func (t TreeShape) String() string { return fmt.Sprintf("%d-%d-%d", t.Base, t.Sub, t.Top) }

// BaseTreeCount is the number of base trees the shape joins.
func (t TreeShape) BaseTreeCount() int {
	n := 1
	if t.Sub > 0 {
		n *= t.Sub
	}
	if t.Top > 0 {
		n *= t.Top
	}
	return n
}

// SealProofInfo describes one registered seal proof. It is plain data; the
// lookups return copies.
type SealProofInfo struct {
	// Proof is the proof's numeric id.
	Proof RegisteredSealProof
	// Name is the upstream enum variant name, e.g. "StackedDrg32GiBV1_1";
	// it is also the proof's JSON form in a C1 artifact's registered_proof.
	Name string
	// SectorSize is the padded sector size in bytes.
	SectorSize uint64
	// Nodes is the number of 32-byte nodes in a sector.
	Nodes uint64
	// Partitions is the number of partition proofs (Groth16 circuits).
	Partitions int
	// MinimumChallenges is the minimum total number of PoRep challenges.
	// Interactive and synthetic proofs: 2, or 176 for 32GiB and 64GiB;
	// non-interactive proofs (Describe only): 26, or 2253.
	MinimumChallenges int
	// ChallengesPerPartition is ceil(MinimumChallenges / Partitions): the
	// number of challenges each partition proves, in every mode (2, or 18
	// for 32GiB and 64GiB).
	ChallengesPerPartition int
	// SyntheticChallenges is the size of the synthetic challenge set that
	// the porep challenges are drawn from (min(Nodes, 2^18)); 0 unless the
	// proof has FeatureSyntheticPoRep.
	SyntheticChallenges int
	// Layers is the number of SDR layers.
	Layers int
	// TreeR is the shape of tree R (comm_r_last) and tree C (comm_c). Tree D
	// (comm_d) is always a binary SHA-256 tree over all nodes.
	TreeR TreeShape
	// PoRepID is the proof's porep_id: NewPoRepID(id, 0).
	PoRepID PoRepID
	// APIVersion is the proofs API version the proof uses.
	APIVersion APIVersion
	// Features is the set of enabled API features.
	Features Features
	// VanillaProofsKey is the VanillaSealProof variant name that keys the
	// vanilla proofs in a C1 artifact (one per sector size, e.g.
	// "StackedDrg2KiBV1" for every 2KiB proof).
	VanillaProofsKey string
}

// ID returns the proof's numeric id.
func (i SealProofInfo) ID() int64 { return int64(i.Proof) }

// IsLegacy reports whether the proof uses the legacy (V1) graph.
func (i SealProofInfo) IsLegacy() bool { return i.Proof <= MaxLegacyID }

// TotalChallenges is Partitions * ChallengesPerPartition.
func (i SealProofInfo) TotalChallenges() int { return i.Partitions * i.ChallengesPerPartition }

// CommDPathLen is the number of path elements in a tree D (comm_d)
// inclusion proof: log2(Nodes); each element has one sibling hash.
func (i SealProofInfo) CommDPathLen() int { return bits.Len64(i.Nodes) - 1 }

// TreeRPathLens returns the number of path elements in a tree R or tree C
// inclusion proof at each level: base (within one base tree, each element
// with TreeR.Base-1 hashes), sub (1 if the shape has a sub level, else 0)
// and top (1 if it has a top level, else 0). This is storage-proofs-core
// merkle/proof.rs base_path_length / compound_path_length.
func (i SealProofInfo) TreeRPathLens() (base, sub, top int) {
	leaves := i.Nodes / uint64(i.TreeR.BaseTreeCount())
	// log_{arity}(leaves) for a power-of-two arity and leaf count.
	base = (bits.Len64(leaves) - 1) / (bits.Len64(uint64(i.TreeR.Base)) - 1)
	if i.TreeR.Sub > 0 {
		sub = 1
	}
	if i.TreeR.Top > 0 {
		top = 1
	}
	return base, sub, top
}

// String returns the proof's name, or "RegisteredSealProof(N)" when the
// id is not registered.
func (p RegisteredSealProof) String() string {
	if p >= 0 && int(p) < len(allNames) {
		return allNames[p]
	}
	return fmt.Sprintf("RegisteredSealProof(%d)", int64(p))
}

// Info returns the proof's description; see Lookup.
func (p RegisteredSealProof) Info() (SealProofInfo, error) { return Lookup(p) }

// allNames are the registered seal proof names, indexed by id
// (rust-filecoin-proofs-api src/registry.rs RegisteredSealProof).
var allNames = [...]string{
	"StackedDrg2KiBV1",
	"StackedDrg8MiBV1",
	"StackedDrg512MiBV1",
	"StackedDrg32GiBV1",
	"StackedDrg64GiBV1",
	"StackedDrg2KiBV1_1",
	"StackedDrg8MiBV1_1",
	"StackedDrg512MiBV1_1",
	"StackedDrg32GiBV1_1",
	"StackedDrg64GiBV1_1",
	"StackedDrg2KiBV1_1_Feat_SyntheticPoRep",
	"StackedDrg8MiBV1_1_Feat_SyntheticPoRep",
	"StackedDrg512MiBV1_1_Feat_SyntheticPoRep",
	"StackedDrg32GiBV1_1_Feat_SyntheticPoRep",
	"StackedDrg64GiBV1_1_Feat_SyntheticPoRep",
	"StackedDrg2KiBV1_2_Feat_NonInteractivePoRep",
	"StackedDrg8MiBV1_2_Feat_NonInteractivePoRep",
	"StackedDrg512MiBV1_2_Feat_NonInteractivePoRep",
	"StackedDrg32GiBV1_2_Feat_NonInteractivePoRep",
	"StackedDrg64GiBV1_2_Feat_NonInteractivePoRep",
}

// numSupported is the number of supported proofs: ids 0 to numSupported-1.
const numSupported = 15

// postNames are the registered PoSt proof names, recognised only to give
// a clearer error when one is passed where a seal proof is expected.
var postNames = [...]string{
	"StackedDrgWinning2KiBV1", "StackedDrgWinning8MiBV1", "StackedDrgWinning512MiBV1",
	"StackedDrgWinning32GiBV1", "StackedDrgWinning64GiBV1",
	"StackedDrgWindow2KiBV1", "StackedDrgWindow8MiBV1", "StackedDrgWindow512MiBV1",
	"StackedDrgWindow32GiBV1", "StackedDrgWindow64GiBV1",
	"StackedDrgWindow2KiBV1_2", "StackedDrgWindow8MiBV1_2", "StackedDrgWindow512MiBV1_2",
	"StackedDrgWindow32GiBV1_2", "StackedDrgWindow64GiBV1_2",
}

// sectorClass is what every version of one sector size shares.
type sectorClass struct {
	size         uint64
	partitions   int
	minChallenge int
	// niPartitions and niMinChallenge replace partitions and minChallenge
	// for the non-interactive proofs.
	niPartitions   int
	niMinChallenge int
	layers         int
	tree           TreeShape
	key            string
}

// classes, indexed by id%5: filecoin-proofs constants.rs POREP_PARTITIONS,
// LAYERS, get_porep_interactive_minimum_challenges,
// get_porep_non_interactive_partitions,
// get_porep_non_interactive_minimum_challenges and the SectorShape*
// aliases; seal.rs VanillaSealProof variants.
var classes = [5]sectorClass{
	{size: 2 << 10, partitions: 1, minChallenge: 2, niPartitions: 13, niMinChallenge: 26, layers: 2, tree: TreeShape{8, 0, 0}, key: "StackedDrg2KiBV1"},
	{size: 8 << 20, partitions: 1, minChallenge: 2, niPartitions: 13, niMinChallenge: 26, layers: 2, tree: TreeShape{8, 0, 0}, key: "StackedDrg8MiBV1"},
	{size: 512 << 20, partitions: 1, minChallenge: 2, niPartitions: 13, niMinChallenge: 26, layers: 2, tree: TreeShape{8, 0, 0}, key: "StackedDrg512MiBV1"},
	{size: 32 << 30, partitions: 10, minChallenge: 176, niPartitions: 126, niMinChallenge: 2253, layers: 11, tree: TreeShape{8, 8, 0}, key: "StackedDrg32GiBV1"},
	{size: 64 << 30, partitions: 10, minChallenge: 176, niPartitions: 126, niMinChallenge: 2253, layers: 11, tree: TreeShape{8, 8, 2}, key: "StackedDrg64GiBV1"},
}

// table holds every registered seal proof, indexed by id; the supported
// ones are table[:numSupported]. It is built once at package
// initialisation and never modified.
var table = buildTable()

func buildTable() [len(allNames)]SealProofInfo {
	var t [len(allNames)]SealProofInfo
	for id := range t {
		c := classes[id%5]
		info := SealProofInfo{
			Proof:             RegisteredSealProof(id),
			Name:              allNames[id],
			SectorSize:        c.size,
			Nodes:             c.size / NodeSize,
			Partitions:        c.partitions,
			MinimumChallenges: c.minChallenge,
			Layers:            c.layers,
			TreeR:             c.tree,
			PoRepID:           NewPoRepID(uint64(id), 0),
			VanillaProofsKey:  c.key,
		}
		switch id / 5 {
		case 0:
			info.APIVersion = APIVersion1_0_0
		case 1:
			info.APIVersion = APIVersion1_1_0
		case 2:
			info.APIVersion = APIVersion1_2_0
			info.Features = FeatureSyntheticPoRep
			info.SyntheticChallenges = int(min(info.Nodes, DefaultSynthChallengeCount))
		case 3:
			info.APIVersion = APIVersion1_2_0
			info.Features = FeatureNonInteractivePoRep
			info.Partitions = c.niPartitions
			info.MinimumChallenges = c.niMinChallenge
		}
		info.ChallengesPerPartition = (info.MinimumChallenges + info.Partitions - 1) / info.Partitions
		t[id] = info
	}
	return t
}

// All returns every supported proof, in id order.
func All() []SealProofInfo {
	out := make([]SealProofInfo, numSupported)
	copy(out, table[:numSupported])
	return out
}

// Names returns the names of the supported proofs, in id order.
func Names() []string {
	out := make([]string, numSupported)
	copy(out, allNames[:numSupported])
	return out
}

// Lookup returns the description of proof p. An id that is registered but
// not supported yields an error wrapping ErrUnsupported; any other id one
// wrapping ErrUnknown.
func Lookup(p RegisteredSealProof) (SealProofInfo, error) {
	switch {
	case p >= 0 && p < numSupported:
		return table[p], nil
	case p >= numSupported && int(p) < len(allNames):
		return SealProofInfo{}, fmt.Errorf("look up seal proof id %d (%s): %w: non-interactive PoRep is not supported", int64(p), allNames[p], ErrUnsupported)
	}
	return SealProofInfo{}, fmt.Errorf("look up seal proof id %d: %w (supported ids are 0 to %d)", int64(p), ErrUnknown, numSupported-1)
}

// Describe returns the description of any registered seal proof,
// supported or not: unlike Lookup it also describes the non-interactive
// proofs (ids 15 to 19), for code that needs only their registry values
// (porep_id, API version, graph size, partition and challenge counts). An
// id that is not registered yields an error wrapping ErrUnknown.
func Describe(p RegisteredSealProof) (SealProofInfo, error) {
	if p < 0 || int(p) >= len(table) {
		return SealProofInfo{}, fmt.Errorf("describe seal proof id %d: %w (registered ids are 0 to %d)", int64(p), ErrUnknown, len(table)-1)
	}
	return table[p], nil
}

// ByID is Lookup by the numeric id.
func ByID(id int64) (SealProofInfo, error) { return Lookup(RegisteredSealProof(id)) }

// ByName returns the description of the proof with the given upstream
// name (exact, case-sensitive). The error names the bad value and lists
// the valid names; it wraps ErrUnsupported for a registered but
// unsupported proof, ErrUnknown otherwise.
func ByName(name string) (SealProofInfo, error) {
	p, err := Parse(name)
	if err != nil {
		return SealProofInfo{}, err
	}
	return table[p], nil
}

// Parse returns the supported proof with the given upstream name; errors
// as ByName.
func Parse(name string) (RegisteredSealProof, error) {
	for id, n := range allNames {
		if n != name {
			continue
		}
		if id < numSupported {
			return RegisteredSealProof(id), nil
		}
		return 0, fmt.Errorf("parse seal proof %q (id %d): %w: non-interactive PoRep is not supported (supported: %s)",
			name, id, ErrUnsupported, strings.Join(allNames[:numSupported], ", "))
	}
	for _, n := range postNames {
		if n == name {
			return 0, fmt.Errorf("parse seal proof %q: %w: it is a registered PoSt proof, not a seal proof (valid: %s)",
				name, ErrUnknown, strings.Join(allNames[:numSupported], ", "))
		}
	}
	return 0, fmt.Errorf("parse seal proof %q: %w (valid: %s)", name, ErrUnknown, strings.Join(allNames[:numSupported], ", "))
}

// ByVanillaKey returns the supported proofs whose C1 vanilla proofs are
// stored under key (e.g. "StackedDrg2KiBV1": the V1, V1_1 and synthetic
// proofs of that sector size, which share every C1 shape parameter), in id
// order.
func ByVanillaKey(key string) ([]SealProofInfo, error) {
	var out []SealProofInfo
	for _, info := range table[:numSupported] {
		if info.VanillaProofsKey == key {
			out = append(out, info)
		}
	}
	if len(out) == 0 {
		keys := make([]string, len(classes))
		for i, c := range classes {
			keys[i] = c.key
		}
		return nil, fmt.Errorf("look up vanilla proofs key %q: %w (valid: %s)", key, ErrUnknown, strings.Join(keys, ", "))
	}
	return out, nil
}
