package proofs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// RegisteredPoStProof is filecoin-proofs-api's RegisteredPoStProof
// (src/registry.rs, append-only), numbered in the enum's order, which is
// go-state-types' abi.RegisteredPoStProof numbering: 0-4 winning, 5-9
// window V1, 10-14 window V1_2 (go-state-types calls these
// StackedDrgWindow*V1_1; filecoin-ffi maps them to the api's V1_2).
type RegisteredPoStProof int64

// The registered PoSt proofs.
const (
	StackedDrgWinning2KiBV1 RegisteredPoStProof = iota
	StackedDrgWinning8MiBV1
	StackedDrgWinning512MiBV1
	StackedDrgWinning32GiBV1
	StackedDrgWinning64GiBV1

	StackedDrgWindow2KiBV1
	StackedDrgWindow8MiBV1
	StackedDrgWindow512MiBV1
	StackedDrgWindow32GiBV1
	StackedDrgWindow64GiBV1

	StackedDrgWindow2KiBV1_2
	StackedDrgWindow8MiBV1_2
	StackedDrgWindow512MiBV1_2
	StackedDrgWindow32GiBV1_2
	StackedDrgWindow64GiBV1_2
)

// PoStType is filecoin-proofs' PoStType.
type PoStType uint8

// The PoSt types.
const (
	PoStWinning PoStType = iota
	PoStWindow
)

// String names the type as cuzk's proof kinds do ("winning", "window").
func (t PoStType) String() string {
	switch t {
	case PoStWinning:
		return "winning"
	case PoStWindow:
		return "window"
	}
	return fmt.Sprintf("PoStType(%d)", uint8(t))
}

// PoSt constants (filecoin-proofs constants.rs).
const (
	// WinningPoStChallengeCount is WINNING_POST_CHALLENGE_COUNT: the
	// openings of the one sector a winning proof proves.
	WinningPoStChallengeCount = 66
	// WinningPoStSectorCount is WINNING_POST_SECTOR_COUNT.
	WinningPoStSectorCount = 1
	// WindowPoStChallengeCount is WINDOW_POST_CHALLENGE_COUNT: openings a
	// sector.
	WindowPoStChallengeCount = 10
	// ParamsVersion prefixes every published Groth16 parameter file
	// (filecoin-proofs' VERSION).
	ParamsVersion = "v28"
)

// PoStProofInfo is what c2flow needs of a registered PoSt proof.
type PoStProofInfo struct {
	Proof RegisteredPoStProof
	// Name is filecoin-proofs-api's name, e.g. "StackedDrgWindow32GiBV1_2".
	Name string
	// ChainName is go-state-types' name of the same number, e.g.
	// "StackedDrgWindow32GiBV1_1" (Curio's and Lotus's).
	ChainName  string
	Type       PoStType
	SectorSize uint64
	Nodes      uint64
	// APIVersion is registry.rs version(): 1.0.0, or 1.2.0 for window V1_2.
	APIVersion APIVersion
	// ChallengeCount and SectorCount are the PoStConfig's (as_v1_config):
	// openings a sector (window 10, winning 66) and sectors a partition
	// (window WINDOW_POST_SECTOR_COUNT, winning 1).
	ChallengeCount, SectorCount int
	// CircuitSectors and CircuitChallenges are the circuit's
	// fallback::PublicParams (parameters.rs window_post_setup_params,
	// winning_post_setup_params): the window circuit is its PoStConfig;
	// the winning circuit proves 66 one-challenge sectors.
	CircuitSectors, CircuitChallenges int
	// TreeR is the shape of tree R (comm_r_last), the tree PoSt opens.
	TreeR TreeShape
	// CacheID is the circuit's parameter cache identifier
	// (CacheableParameters::cache_identifier of FallbackPoStCompound):
	// "proof-of-spacetime-fallback-merkletree-poseidon_hasher-B-S-T-" and
	// the hex SHA-256 of the public parameters' identifier. V1 and V1_2
	// window proofs of one size share it: the circuit is the same.
	CacheID string
}

// PartitionProofLen is the size of one partition's Groth16 proof.
func (i PoStProofInfo) PartitionProofLen() int { return SinglePartitionProofLen }

// ParamsFiles are the names of the published .params and .vk files
// (parameters.json keys).
func (i PoStProofInfo) ParamsFiles() (params, vk string) {
	base := ParamsVersion + "-" + i.CacheID
	return base + ".params", base + ".vk"
}

// Partitions is the number of partitions that prove sectors sectors
// (post_util.rs get_num_partition_for_fallback_post): winning 1, window
// ceil(sectors / SectorCount), at least 1.
func (i PoStProofInfo) Partitions(sectors int) int {
	if i.Type == PoStWinning || sectors <= i.SectorCount {
		return 1
	}
	return (sectors + i.SectorCount - 1) / i.SectorCount
}

// windowPoStSectorCount is constants.rs WINDOW_POST_SECTOR_COUNT for the
// published sector sizes.
var windowPoStSectorCount = map[uint64]int{
	2 << 10: 2, 8 << 20: 2, 512 << 20: 2,
	32 << 30: 2349, // 125,279,217 constraints, one partition
	64 << 30: 2300, // 129,887,900 constraints
}

var postTable = buildPoStTable()

func buildPoStTable() [15]PoStProofInfo {
	var t [15]PoStProofInfo
	for id := range t {
		c := classes[id%5]
		size := sizeName(c.size)
		info := PoStProofInfo{
			Proof:      RegisteredPoStProof(id),
			SectorSize: c.size,
			Nodes:      c.size / NodeSize,
			TreeR:      c.tree,
		}
		switch id / 5 {
		case 0:
			info.Name = "StackedDrgWinning" + size + "V1"
			info.ChainName = info.Name
			info.Type = PoStWinning
			info.APIVersion = APIVersion1_0_0
			info.ChallengeCount, info.SectorCount = WinningPoStChallengeCount, WinningPoStSectorCount
			// winning_post_setup_params: sector_count = challenges /
			// sectors, challenge_count = challenges / that.
			info.CircuitSectors = WinningPoStChallengeCount / WinningPoStSectorCount
			info.CircuitChallenges = WinningPoStChallengeCount / info.CircuitSectors
		case 1, 2:
			info.Name = "StackedDrgWindow" + size + "V1"
			info.ChainName = info.Name
			info.APIVersion = APIVersion1_0_0
			if id/5 == 2 {
				info.Name += "_2"
				info.ChainName += "_1"
				info.APIVersion = APIVersion1_2_0
			}
			info.Type = PoStWindow
			info.ChallengeCount, info.SectorCount = WindowPoStChallengeCount, windowPoStSectorCount[c.size]
			info.CircuitSectors, info.CircuitChallenges = info.SectorCount, info.ChallengeCount
		}
		info.CacheID = postCacheID(info)
		t[id] = info
	}
	return t
}

func sizeName(b uint64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%dGiB", b>>30)
	case b >= 1<<20:
		return fmt.Sprintf("%dMiB", b>>20)
	}
	return fmt.Sprintf("%dKiB", b>>10)
}

// postCacheID is cache_identifier: the cache prefix
// ("proof-of-spacetime-fallback-" and the tree's display) and the hex
// SHA-256 of fallback::PublicParams::identifier (which leaves the API
// version out).
func postCacheID(i PoStProofInfo) string {
	id := fmt.Sprintf("FallbackPoSt::PublicParams{sector_size: %d, challenge_count: %d, sector_count: %d}",
		i.SectorSize, i.CircuitChallenges, i.CircuitSectors)
	h := sha256.Sum256([]byte(id))
	return fmt.Sprintf("proof-of-spacetime-fallback-merkletree-poseidon_hasher-%d-%d-%d-%s",
		i.TreeR.Base, i.TreeR.Sub, i.TreeR.Top, hex.EncodeToString(h[:]))
}

// String is the proof's filecoin-proofs-api name.
func (p RegisteredPoStProof) String() string {
	if p >= 0 && int(p) < len(postTable) {
		return postTable[p].Name
	}
	return fmt.Sprintf("RegisteredPoStProof(%d)", int64(p))
}

// LookupPoSt returns the info of a registered PoSt proof by its number
// (the api's and go-state-types').
func LookupPoSt(p RegisteredPoStProof) (PoStProofInfo, error) {
	if p < 0 || int(p) >= len(postTable) {
		return PoStProofInfo{}, fmt.Errorf("registered PoSt proof %d: %w (0 to %d: %s)", int64(p), ErrUnknownPoSt, len(postTable)-1, strings.Join(PoStNames(), ", "))
	}
	return postTable[p], nil
}

// PoStByName returns the registered PoSt proof named name, by
// filecoin-proofs-api's name or go-state-types' (StackedDrgWindow*V1_1 is
// the api's StackedDrgWindow*V1_2).
func PoStByName(name string) (PoStProofInfo, error) {
	for _, p := range postTable {
		if p.Name == name || p.ChainName == name {
			return p, nil
		}
	}
	return PoStProofInfo{}, fmt.Errorf("registered PoSt proof %q: %w (valid: %s)", name, ErrUnknownPoSt, strings.Join(PoStNames(), ", "))
}

// PoStNames lists the registered PoSt proofs by the api's names, in
// number order.
func PoStNames() []string {
	out := make([]string, len(postTable))
	for i, p := range postTable {
		out[i] = p.Name
	}
	return out
}

// AllPoSt returns every registered PoSt proof, in number order.
func AllPoSt() []PoStProofInfo {
	out := make([]PoStProofInfo, len(postTable))
	copy(out, postTable[:])
	return out
}

// WinningPoStFor is registry.rs into_winning_post: the winning PoSt proof
// of a seal proof's sector size.
func WinningPoStFor(p RegisteredSealProof) (PoStProofInfo, error) {
	if _, err := Describe(p); err != nil {
		return PoStProofInfo{}, err
	}
	return postTable[p%5], nil
}

// WindowPoStFor is registry.rs into_window_post: the window PoSt proof
// (V1_2) of a seal proof's sector size.
func WindowPoStFor(p RegisteredSealProof) (PoStProofInfo, error) {
	if _, err := Describe(p); err != nil {
		return PoStProofInfo{}, err
	}
	return postTable[10+p%5], nil
}
