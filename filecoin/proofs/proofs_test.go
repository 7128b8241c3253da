package proofs

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// Upstream sources the expected values below are read from:
//
//	api:    filecoin-project/rust-filecoin-proofs-api @ 0e64ce8d9cf87d4039075c101de833290096745b
//	proofs: filecoin-project/rust-fil-proofs          @ 87348a749d80447d00c595af834a8ed73c09e4d9

// TestPoRepID checks every supported proof's porep_id against
// api src/registry.rs tests::test_porep_id_aux (the hex strings there).
func TestPoRepID(t *testing.T) {
	want := map[string]string{
		"StackedDrg2KiBV1":                         "0000000000000000000000000000000000000000000000000000000000000000",
		"StackedDrg8MiBV1":                         "0100000000000000000000000000000000000000000000000000000000000000",
		"StackedDrg512MiBV1":                       "0200000000000000000000000000000000000000000000000000000000000000",
		"StackedDrg32GiBV1":                        "0300000000000000000000000000000000000000000000000000000000000000",
		"StackedDrg64GiBV1":                        "0400000000000000000000000000000000000000000000000000000000000000",
		"StackedDrg2KiBV1_1":                       "0500000000000000000000000000000000000000000000000000000000000000",
		"StackedDrg8MiBV1_1":                       "0600000000000000000000000000000000000000000000000000000000000000",
		"StackedDrg512MiBV1_1":                     "0700000000000000000000000000000000000000000000000000000000000000",
		"StackedDrg32GiBV1_1":                      "0800000000000000000000000000000000000000000000000000000000000000",
		"StackedDrg64GiBV1_1":                      "0900000000000000000000000000000000000000000000000000000000000000",
		"StackedDrg2KiBV1_1_Feat_SyntheticPoRep":   "0a00000000000000000000000000000000000000000000000000000000000000",
		"StackedDrg8MiBV1_1_Feat_SyntheticPoRep":   "0b00000000000000000000000000000000000000000000000000000000000000",
		"StackedDrg512MiBV1_1_Feat_SyntheticPoRep": "0c00000000000000000000000000000000000000000000000000000000000000",
		"StackedDrg32GiBV1_1_Feat_SyntheticPoRep":  "0d00000000000000000000000000000000000000000000000000000000000000",
		"StackedDrg64GiBV1_1_Feat_SyntheticPoRep":  "0e00000000000000000000000000000000000000000000000000000000000000",
	}
	all := All()
	if len(all) != len(want) {
		t.Fatalf("All() has %d proofs, want %d", len(all), len(want))
	}
	for _, info := range all {
		if got := hex.EncodeToString(info.PoRepID[:]); got != want[info.Name] {
			t.Errorf("%s porep_id = %s, want %s", info.Name, got, want[info.Name])
		}
	}
}

// TestIDs checks the numbering against api src/registry.rs
// REGISTERED_PROOF_IDS, and the legacy split against proofs
// storage-proofs-core/src/lib.rs MAX_LEGACY_POREP_REGISTERED_PROOF_ID = 4
// (registry.rs tests::test_max_initial_porep_id).
func TestIDs(t *testing.T) {
	ids := map[string]int64{
		"StackedDrg2KiBV1": 0, "StackedDrg8MiBV1": 1, "StackedDrg512MiBV1": 2, "StackedDrg32GiBV1": 3, "StackedDrg64GiBV1": 4,
		"StackedDrg2KiBV1_1": 5, "StackedDrg8MiBV1_1": 6, "StackedDrg512MiBV1_1": 7, "StackedDrg32GiBV1_1": 8, "StackedDrg64GiBV1_1": 9,
		"StackedDrg2KiBV1_1_Feat_SyntheticPoRep": 10, "StackedDrg8MiBV1_1_Feat_SyntheticPoRep": 11,
		"StackedDrg512MiBV1_1_Feat_SyntheticPoRep": 12, "StackedDrg32GiBV1_1_Feat_SyntheticPoRep": 13,
		"StackedDrg64GiBV1_1_Feat_SyntheticPoRep": 14,
	}
	for name, id := range ids {
		info, err := ByName(name)
		if err != nil {
			t.Fatalf("ByName(%q): %v", name, err)
		}
		if info.ID() != id || info.Proof.String() != name {
			t.Errorf("%s: id %d (%s), want %d", name, info.ID(), info.Proof, id)
		}
		byID, err := ByID(id)
		if err != nil || byID != info {
			t.Errorf("ByID(%d) = %+v, %v; want %+v", id, byID, err, info)
		}
		if info.IsLegacy() != (id <= 4) {
			t.Errorf("%s: IsLegacy = %v", name, info.IsLegacy())
		}
	}
	if StackedDrg64GiBV1_1_Feat_SyntheticPoRep != 14 || StackedDrg2KiBV1_2_Feat_NonInteractivePoRep != 15 {
		t.Fatal("constant numbering drifted from registry.rs")
	}
}

// TestGeometry checks sizes, partitions, challenges, layers and tree shapes
// against proofs filecoin-proofs/src/constants.rs (SECTOR_SIZE_*,
// POREP_PARTITIONS, LAYERS, get_porep_interactive_minimum_challenges,
// SectorShape* aliases) and filecoin-proofs/src/parameters.rs
// select_challenges (div_ceil(minimum, partitions)).
func TestGeometry(t *testing.T) {
	type geo struct {
		size                         uint64
		partitions, minimum, perPart int
		layers                       int
		tree                         string
		nodes                        uint64
		commD, base, sub, top        int
		key                          string
	}
	want := map[uint64]geo{
		2048:      {2048, 1, 2, 2, 2, "8-0-0", 64, 6, 2, 0, 0, "StackedDrg2KiBV1"},
		8 << 20:   {8 << 20, 1, 2, 2, 2, "8-0-0", 1 << 18, 18, 6, 0, 0, "StackedDrg8MiBV1"},
		512 << 20: {512 << 20, 1, 2, 2, 2, "8-0-0", 1 << 24, 24, 8, 0, 0, "StackedDrg512MiBV1"},
		// 176 / 10 partitions rounds up to 18 challenges per partition.
		32 << 30: {32 << 30, 10, 176, 18, 11, "8-8-0", 1 << 30, 30, 9, 1, 0, "StackedDrg32GiBV1"},
		64 << 30: {64 << 30, 10, 176, 18, 11, "8-8-2", 1 << 31, 31, 9, 1, 1, "StackedDrg64GiBV1"},
	}
	for _, info := range All() {
		w, ok := want[info.SectorSize]
		if !ok {
			t.Fatalf("%s: unexpected sector size %d", info.Name, info.SectorSize)
		}
		base, sub, top := info.TreeRPathLens()
		got := geo{info.SectorSize, info.Partitions, info.MinimumChallenges, info.ChallengesPerPartition,
			info.Layers, info.TreeR.String(), info.Nodes, info.CommDPathLen(), base, sub, top, info.VanillaProofsKey}
		if got != w {
			t.Errorf("%s:\n got %+v\nwant %+v", info.Name, got, w)
		}
		if info.TotalChallenges() < info.MinimumChallenges {
			t.Errorf("%s: %d challenges < minimum %d", info.Name, info.TotalChallenges(), info.MinimumChallenges)
		}
		if info.ChallengesPerPartition > maxChallengesPerPartition {
			t.Errorf("%s: %d challenges per partition > MAX_CHALLENGES_PER_PARTITION", info.Name, info.ChallengesPerPartition)
		}
	}
	// Base tree counts: 32GiB (LCTree<_, U8, U8, U0>) joins 8 base trees,
	// 64GiB (LCTree<_, U8, U8, U2>) 16 (constants.rs SectorShape32GiB/64GiB).
	if n := table[StackedDrg32GiBV1_1].TreeR.BaseTreeCount(); n != 8 {
		t.Errorf("32GiB base tree count %d, want 8", n)
	}
	if n := table[StackedDrg64GiBV1_1].TreeR.BaseTreeCount(); n != 16 {
		t.Errorf("64GiB base tree count %d, want 16", n)
	}
}

// TestVersionsAndFeatures checks api src/registry.rs version() and
// as_v1_config() (features), and challenges.rs
// DEFAULT_SYNTH_CHALLENGE_COUNT = 1 << 18, min(sector_nodes, 2^18).
func TestVersionsAndFeatures(t *testing.T) {
	for _, info := range All() {
		var wantV string
		var wantF Features
		wantSynth := 0
		switch {
		case strings.HasSuffix(info.Name, "V1"):
			wantV = "1.0.0"
		case strings.HasSuffix(info.Name, "V1_1"):
			wantV = "1.1.0"
		case strings.HasSuffix(info.Name, "V1_1_Feat_SyntheticPoRep"):
			wantV, wantF = "1.2.0", FeatureSyntheticPoRep
			wantSynth = int(min(info.Nodes, 1<<18))
		default:
			t.Fatalf("unexpected name %s", info.Name)
		}
		if info.APIVersion.String() != wantV || info.Features != wantF || info.SyntheticChallenges != wantSynth {
			t.Errorf("%s: version %s features %q synth %d; want %s %q %d", info.Name,
				info.APIVersion, info.Features, info.SyntheticChallenges, wantV, wantF, wantSynth)
		}
	}
	if got := table[StackedDrg2KiBV1_1_Feat_SyntheticPoRep].SyntheticChallenges; got != 64 {
		t.Errorf("2KiB synthetic challenges %d, want 64 (all nodes)", got)
	}
	if got := FeatureSyntheticPoRep.String(); got != "synthetic-porep" {
		t.Errorf("feature name %q", got)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		want    error
		mention []string
	}{
		{"StackedDrg32GiBV1_2_Feat_NonInteractivePoRep", ErrUnsupported, []string{"non-interactive", "StackedDrg32GiBV1_1"}},
		{"StackedDrgWindow32GiBV1_2", ErrUnknown, []string{"PoSt"}},
		{"stackeddrg32gibv1_1", ErrUnknown, []string{`"stackeddrg32gibv1_1"`, "StackedDrg2KiBV1, StackedDrg8MiBV1"}},
		{"", ErrUnknown, []string{`""`, "StackedDrg64GiBV1_1_Feat_SyntheticPoRep"}},
	} {
		_, err := ByName(tc.name)
		if !errors.Is(err, tc.want) {
			t.Errorf("ByName(%q) = %v, want %v", tc.name, err, tc.want)
			continue
		}
		for _, m := range tc.mention {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("ByName(%q) error %q does not mention %q", tc.name, err, m)
			}
		}
	}
	for id := int64(15); id <= 19; id++ {
		if _, err := ByID(id); !errors.Is(err, ErrUnsupported) {
			t.Errorf("ByID(%d) = %v, want ErrUnsupported", id, err)
		}
	}
	for _, id := range []int64{-1, 20, 1 << 40} {
		if _, err := ByID(id); !errors.Is(err, ErrUnknown) {
			t.Errorf("ByID(%d) = %v, want ErrUnknown", id, err)
		}
	}
	if _, err := ByVanillaKey("StackedDrg2KiBV1_1"); !errors.Is(err, ErrUnknown) {
		t.Errorf("ByVanillaKey(StackedDrg2KiBV1_1) = %v, want ErrUnknown", err)
	}
}

// TestVanillaKeys checks api src/seal.rs VanillaSealProof::from_raw: every
// version of one sector size stores its proofs under the V1 variant.
func TestVanillaKeys(t *testing.T) {
	for _, key := range []string{"StackedDrg2KiBV1", "StackedDrg8MiBV1", "StackedDrg512MiBV1", "StackedDrg32GiBV1", "StackedDrg64GiBV1"} {
		infos, err := ByVanillaKey(key)
		if err != nil || len(infos) != 3 {
			t.Fatalf("ByVanillaKey(%s) = %d proofs, %v", key, len(infos), err)
		}
		for _, info := range infos {
			if !strings.HasPrefix(info.Name, key) {
				t.Errorf("%s stored under %s", info.Name, key)
			}
			// Every proof sharing a key shares the C1 shape.
			f := infos[0]
			if info.Partitions != f.Partitions || info.ChallengesPerPartition != f.ChallengesPerPartition ||
				info.Layers != f.Layers || info.TreeR != f.TreeR || info.Nodes != f.Nodes {
				t.Errorf("%s and %s share key %s but not shape", info.Name, f.Name, key)
			}
		}
	}
}

func TestLookupReturnsCopies(t *testing.T) {
	a := All()
	a[0].Name = "mutated"
	a[0].PoRepID[0] = 0xff
	if info, _ := Lookup(StackedDrg2KiBV1); info.Name != "StackedDrg2KiBV1" || info.PoRepID[0] != 0 {
		t.Fatal("All() exposed the table")
	}
	if s := RegisteredSealProof(99).String(); s != "RegisteredSealProof(99)" {
		t.Errorf("String() = %q", s)
	}
}

// TestDescribe checks every registered proof's constants, the unsupported
// non-interactive ones included, against proofs filecoin-proofs/src/
// constants.rs (SECTOR_SIZE_*, LAYERS, POREP_PARTITIONS,
// get_porep_interactive_minimum_challenges,
// get_porep_non_interactive_partitions: 13 or 126,
// get_porep_non_interactive_minimum_challenges: 26 or 2253),
// parameters.rs select_challenges (div_ceil) and api src/registry.rs
// version() and as_v1_config() (features).
func TestDescribe(t *testing.T) {
	type row struct {
		size                                      uint64
		v                                         APIVersion
		features                                  Features
		layers, partitions, minimum, perPartition int
	}
	small, large := uint64(2048), uint64(32<<30)
	for _, c := range []struct {
		p RegisteredSealProof
		r row
	}{
		{StackedDrg2KiBV1, row{small, APIVersion1_0_0, 0, 2, 1, 2, 2}},
		{StackedDrg32GiBV1, row{large, APIVersion1_0_0, 0, 11, 10, 176, 18}},
		{StackedDrg2KiBV1_1, row{small, APIVersion1_1_0, 0, 2, 1, 2, 2}},
		{StackedDrg32GiBV1_1, row{large, APIVersion1_1_0, 0, 11, 10, 176, 18}},
		{StackedDrg64GiBV1_1, row{64 << 30, APIVersion1_1_0, 0, 11, 10, 176, 18}},
		{StackedDrg512MiBV1_1_Feat_SyntheticPoRep, row{512 << 20, APIVersion1_2_0, FeatureSyntheticPoRep, 2, 1, 2, 2}},
		{StackedDrg32GiBV1_1_Feat_SyntheticPoRep, row{large, APIVersion1_2_0, FeatureSyntheticPoRep, 11, 10, 176, 18}},
		{StackedDrg2KiBV1_2_Feat_NonInteractivePoRep, row{small, APIVersion1_2_0, FeatureNonInteractivePoRep, 2, 13, 26, 2}},
		{StackedDrg8MiBV1_2_Feat_NonInteractivePoRep, row{8 << 20, APIVersion1_2_0, FeatureNonInteractivePoRep, 2, 13, 26, 2}},
		{StackedDrg32GiBV1_2_Feat_NonInteractivePoRep, row{large, APIVersion1_2_0, FeatureNonInteractivePoRep, 11, 126, 2253, 18}},
		{StackedDrg64GiBV1_2_Feat_NonInteractivePoRep, row{64 << 30, APIVersion1_2_0, FeatureNonInteractivePoRep, 11, 126, 2253, 18}},
	} {
		info, err := Describe(c.p)
		if err != nil {
			t.Fatalf("Describe(%s): %v", c.p, err)
		}
		got := row{info.SectorSize, info.APIVersion, info.Features, info.Layers, info.Partitions, info.MinimumChallenges, info.ChallengesPerPartition}
		if got != c.r {
			t.Errorf("%s: %+v, want %+v", c.p, got, c.r)
		}
		if info.Proof != c.p || info.Name != c.p.String() || info.PoRepID != NewPoRepID(uint64(c.p), 0) ||
			info.PoRepID.IsLegacy() != (c.p <= StackedDrg64GiBV1) || info.IsLegacy() != info.PoRepID.IsLegacy() {
			t.Errorf("%s: id %d name %s porep id %x", c.p, info.Proof, info.Name, info.PoRepID)
		}
		if info.TotalChallenges() < info.MinimumChallenges || info.ChallengesPerPartition > maxChallengesPerPartition {
			t.Errorf("%s: %d x %d challenges for minimum %d", c.p, info.Partitions, info.ChallengesPerPartition, info.MinimumChallenges)
		}
	}
	// Describe agrees with Lookup where Lookup answers.
	for id := range RegisteredSealProof(len(allNames)) {
		d, err := Describe(id)
		if err != nil {
			t.Fatalf("Describe(%d): %v", id, err)
		}
		l, err := Lookup(id)
		if supported := id < numSupported; supported != (err == nil) || supported && l != d {
			t.Errorf("%s: Lookup = %+v, %v; Describe = %+v", id, l, err, d)
		}
		if d.Features.Has(FeatureNonInteractivePoRep) && (d.SyntheticChallenges != 0 || d.VanillaProofsKey != classes[id%5].key) {
			t.Errorf("%s: synthetic challenges %d, vanilla key %s", id, d.SyntheticChallenges, d.VanillaProofsKey)
		}
	}
	for _, id := range []RegisteredSealProof{-1, 20, 1 << 40} {
		if _, err := Describe(id); !errors.Is(err, ErrUnknown) {
			t.Errorf("Describe(%d) = %v, want ErrUnknown", id, err)
		}
	}
}

// TestPoRepIDLayout checks api src/registry.rs porep_id with a nonzero
// nonce: id u64 LE, nonce u64 LE, 16 zero bytes; and the legacy split at
// proofs storage-proofs-core/src/lib.rs MAX_LEGACY_POREP_REGISTERED_PROOF_ID.
func TestPoRepIDLayout(t *testing.T) {
	id := NewPoRepID(8, 0x1122)
	if want := "08000000000000002211000000000000" + strings.Repeat("00", 16); hex.EncodeToString(id[:]) != want {
		t.Errorf("porep id layout %x, want %s", id, want)
	}
	if id.IsLegacy() || !NewPoRepID(MaxLegacyID, 0).IsLegacy() || NewPoRepID(MaxLegacyID+1, 0).IsLegacy() {
		t.Error("IsLegacy does not split at MAX_LEGACY_POREP_REGISTERED_PROOF_ID")
	}
}

// TestAPIVersion checks the display and serde names of proofs
// storage-proofs-core/src/api_version.rs (Display, FromStr, and the
// variant names V1_0_0, V1_1_0, V1_2_0).
func TestAPIVersion(t *testing.T) {
	for _, c := range []struct {
		s string
		v APIVersion
	}{
		{"1.0.0", APIVersion1_0_0}, {"V1_0_0", APIVersion1_0_0},
		{"1.1.0", APIVersion1_1_0}, {"V1_1_0", APIVersion1_1_0},
		{"1.2.0", APIVersion1_2_0}, {"V1_2_0", APIVersion1_2_0},
	} {
		v, err := ParseAPIVersion(c.s)
		if err != nil || v != c.v || !v.Valid() {
			t.Errorf("ParseAPIVersion(%q) = %v, %v; want %v", c.s, v, err, c.v)
		}
	}
	if v, err := ParseAPIVersion("1.3.0"); err == nil {
		t.Errorf("ParseAPIVersion(1.3.0) = %v, no error", v)
	}
	if v := APIVersion(3); v.Valid() || v.String() != "APIVersion(3)" {
		t.Errorf("APIVersion(3): valid %v, %q", v.Valid(), v.String())
	}
}
