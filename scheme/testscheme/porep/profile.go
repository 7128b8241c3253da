package porep

import (
	"fmt"
	"sort"
	"strings"
)

// DRGParents and ExpanderParents are fixed by the scheme, as in Filecoin's
// Stacked DRG (base degree 6, expansion degree 8).
const (
	DRGParents      = 6
	ExpanderParents = 8
	// NodeBytes is the size of one node (one field element).
	NodeBytes = 32
)

// Profile is one registered proof: the shape of a sector and of its proofs.
type Profile struct {
	// Name is the registered-proof name used in C1 files and on the CLI.
	Name string
	// Depth is log2 of the number of nodes; trees are binary.
	Depth int
	// Layers is the number of labelling layers.
	Layers int
	// Partitions is the number of Groth16 proofs per sector.
	Partitions int
	// Challenges is the number of challenged nodes per partition.
	Challenges int
	// Sparse profiles are sealed as synthetic sparse sectors (see package doc).
	Sparse bool
	// Note says what the profile is for.
	Note string
}

// Nodes is the number of nodes per layer.
func (p Profile) Nodes() uint64 { return 1 << p.Depth }

// SectorBytes is the sector size the profile models.
func (p Profile) SectorBytes() uint64 { return p.Nodes() * NodeBytes }

// MaxC1Bytes bounds the size of a C1 file of this profile: decoding refuses
// anything larger before parsing it.
func (p Profile) MaxC1Bytes() int64 {
	// Field elements are 66-byte JSON strings at most; 4x slack covers
	// indices, keys and whitespace of pretty-printed files.
	perChallenge := (DRGParents+ExpanderParents+1)*(p.Layers+p.Depth) + 2*p.Depth + 1
	return int64(p.Partitions*p.Challenges*perChallenge)*70*4 + 1<<16
}

var profiles = map[string]Profile{
	"2KiB": {Name: "2KiB", Depth: 6, Layers: 2, Partitions: 1, Challenges: 2,
		Note: "tiny: unit tests"},
	"32KiB": {Name: "32KiB", Depth: 10, Layers: 2, Partitions: 4, Challenges: 2,
		Note: "multi-partition tests and demo"},
	"256MiB": {Name: "256MiB", Depth: 23, Layers: 3, Partitions: 10, Challenges: 3, Sparse: true,
		Note: "bench: just under 2^18 constraints per partition, 10 partitions"},
	"32GiB": {Name: "32GiB", Depth: 30, Layers: 11, Partitions: 10, Challenges: 18, Sparse: true,
		Note: "Filecoin 32GiB shape: sizing only (circuit info), not provable here"},
}

// LookupProfile returns the named profile or an error listing the known ones.
func LookupProfile(name string) (Profile, error) {
	p, ok := profiles[name]
	switch {
	case name == "":
		return Profile{}, fmt.Errorf("%w: none given (known: %s)", ErrProfile, strings.Join(ProfileNames(), ", "))
	case !ok:
		return Profile{}, fmt.Errorf("%w %q (known: %s)", ErrProfile, name, strings.Join(ProfileNames(), ", "))
	}
	return p, nil
}

// ProfileNames lists the profiles from the smallest to the largest.
func ProfileNames() []string {
	names := make([]string, 0, len(profiles))
	for n := range profiles {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := profiles[names[i]], profiles[names[j]]
		if a.Depth != b.Depth {
			return a.Depth < b.Depth
		}
		return a.Name < b.Name
	})
	return names
}
