package proofs

import (
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/internal/upstreamdata"
)

// TestPoStRegistry pins the registered PoSt proofs to api src/registry.rs
// (RegisteredPoStProof's order, version(), typ(), sector_size(),
// sector_count(), as_v1_config) and proofs filecoin-proofs/src/constants.rs
// (WINDOW_POST_SECTOR_COUNT, WINNING_POST_*), parameters.rs
// (winning_post_setup_params: 66 one-challenge sectors) and go-state-types'
// numbering (window 10-14 named V1_1 on chain).
func TestPoStRegistry(t *testing.T) {
	type row struct {
		name, chain string
		typ         PoStType
		size        uint64
		ver         APIVersion
		sectors     int
		tree        TreeShape
	}
	w, d := PoStWinning, PoStWindow
	want := []row{
		{"StackedDrgWinning2KiBV1", "StackedDrgWinning2KiBV1", w, 2 << 10, APIVersion1_0_0, 1, TreeShape{8, 0, 0}},
		{"StackedDrgWinning8MiBV1", "StackedDrgWinning8MiBV1", w, 8 << 20, APIVersion1_0_0, 1, TreeShape{8, 0, 0}},
		{"StackedDrgWinning512MiBV1", "StackedDrgWinning512MiBV1", w, 512 << 20, APIVersion1_0_0, 1, TreeShape{8, 0, 0}},
		{"StackedDrgWinning32GiBV1", "StackedDrgWinning32GiBV1", w, 32 << 30, APIVersion1_0_0, 1, TreeShape{8, 8, 0}},
		{"StackedDrgWinning64GiBV1", "StackedDrgWinning64GiBV1", w, 64 << 30, APIVersion1_0_0, 1, TreeShape{8, 8, 2}},
		{"StackedDrgWindow2KiBV1", "StackedDrgWindow2KiBV1", d, 2 << 10, APIVersion1_0_0, 2, TreeShape{8, 0, 0}},
		{"StackedDrgWindow8MiBV1", "StackedDrgWindow8MiBV1", d, 8 << 20, APIVersion1_0_0, 2, TreeShape{8, 0, 0}},
		{"StackedDrgWindow512MiBV1", "StackedDrgWindow512MiBV1", d, 512 << 20, APIVersion1_0_0, 2, TreeShape{8, 0, 0}},
		{"StackedDrgWindow32GiBV1", "StackedDrgWindow32GiBV1", d, 32 << 30, APIVersion1_0_0, 2349, TreeShape{8, 8, 0}},
		{"StackedDrgWindow64GiBV1", "StackedDrgWindow64GiBV1", d, 64 << 30, APIVersion1_0_0, 2300, TreeShape{8, 8, 2}},
		{"StackedDrgWindow2KiBV1_2", "StackedDrgWindow2KiBV1_1", d, 2 << 10, APIVersion1_2_0, 2, TreeShape{8, 0, 0}},
		{"StackedDrgWindow8MiBV1_2", "StackedDrgWindow8MiBV1_1", d, 8 << 20, APIVersion1_2_0, 2, TreeShape{8, 0, 0}},
		{"StackedDrgWindow512MiBV1_2", "StackedDrgWindow512MiBV1_1", d, 512 << 20, APIVersion1_2_0, 2, TreeShape{8, 0, 0}},
		{"StackedDrgWindow32GiBV1_2", "StackedDrgWindow32GiBV1_1", d, 32 << 30, APIVersion1_2_0, 2349, TreeShape{8, 8, 0}},
		{"StackedDrgWindow64GiBV1_2", "StackedDrgWindow64GiBV1_1", d, 64 << 30, APIVersion1_2_0, 2300, TreeShape{8, 8, 2}},
	}
	all := AllPoSt()
	if len(all) != len(want) {
		t.Fatalf("%d PoSt proofs, want %d", len(all), len(want))
	}
	for id, r := range want {
		p := all[id]
		if int(p.Proof) != id || p.Name != r.name || p.ChainName != r.chain || p.Type != r.typ || p.SectorSize != r.size ||
			p.Nodes != r.size/32 || p.APIVersion != r.ver || p.SectorCount != r.sectors || p.TreeR != r.tree {
			t.Errorf("id %d: %+v, want %+v", id, p, r)
		}
		if RegisteredPoStProof(id).String() != r.name {
			t.Errorf("id %d String %q", id, RegisteredPoStProof(id))
		}
		for _, n := range []string{r.name, r.chain} {
			if q, err := PoStByName(n); err != nil || q.Proof != p.Proof {
				t.Errorf("PoStByName(%q) = %v, %v", n, q.Proof, err)
			}
		}
		switch r.typ {
		case PoStWinning:
			if p.ChallengeCount != 66 || p.CircuitSectors != 66 || p.CircuitChallenges != 1 {
				t.Errorf("%s: challenges %d, circuit %d sectors x %d", r.name, p.ChallengeCount, p.CircuitSectors, p.CircuitChallenges)
			}
		case PoStWindow:
			if p.ChallengeCount != 10 || p.CircuitSectors != r.sectors || p.CircuitChallenges != 10 {
				t.Errorf("%s: challenges %d, circuit %d sectors x %d", r.name, p.ChallengeCount, p.CircuitSectors, p.CircuitChallenges)
			}
		}
		if p.PartitionProofLen() != 192 {
			t.Errorf("%s: partition proof of %d bytes", r.name, p.PartitionProofLen())
		}
	}
	// A PoSt id or name is refused as a PoSt proof, not as a seal proof.
	if _, err := LookupPoSt(15); !errors.Is(err, ErrUnknownPoSt) || strings.Contains(err.Error(), "seal") {
		t.Errorf("id 15: %v", err)
	}
	if _, err := PoStByName("StackedDrgWindow32GiBV1_3"); !errors.Is(err, ErrUnknownPoSt) || !strings.Contains(err.Error(), "StackedDrgWindow32GiBV1_3") {
		t.Errorf("unknown name: %v", err)
	}
	// registry.rs into_winning_post / into_window_post.
	for _, s := range All() {
		win, err := WinningPoStFor(s.Proof)
		if err != nil || win.Type != PoStWinning || win.SectorSize != s.SectorSize {
			t.Errorf("%s: winning %v %v", s.Name, win.Name, err)
		}
		wdw, err := WindowPoStFor(s.Proof)
		if err != nil || wdw.Type != PoStWindow || wdw.SectorSize != s.SectorSize || wdw.APIVersion != APIVersion1_2_0 {
			t.Errorf("%s: window %v %v", s.Name, wdw.Name, err)
		}
	}
	// post_util.rs get_num_partition_for_fallback_post.
	w32, _ := LookupPoSt(StackedDrgWindow32GiBV1_2)
	win32, _ := LookupPoSt(StackedDrgWinning32GiBV1)
	for _, c := range []struct {
		info          PoStProofInfo
		sectors, want int
	}{{w32, 0, 1}, {w32, 1, 1}, {w32, 2349, 1}, {w32, 2350, 2}, {w32, 4698, 2}, {w32, 4699, 3}, {win32, 1, 1}} {
		if got := c.info.Partitions(c.sectors); got != c.want {
			t.Errorf("%s: %d sectors in %d partitions, want %d", c.info.Name, c.sectors, got, c.want)
		}
	}
}

// Every PoSt circuit's parameter files, named by cache_identifier from its
// sector size, circuit sector and challenge counts and tree shape, are the
// spacetime files of rust-fil-proofs' parameters.json, with their sector
// size: ten circuits (window and winning at five sizes; window V1 and V1_2
// share one), all of them, no other.
func TestPoStParamsInParametersJSON(t *testing.T) {
	var entries map[string]struct {
		SectorSize uint64 `json:"sector_size"`
	}
	if err := json.Unmarshal(upstreamdata.Read(t, upstreamdata.ParametersJSON), &entries); err != nil {
		t.Fatal(err)
	}
	var upstream []string
	for name := range entries {
		if strings.HasPrefix(name, "v28-proof-of-spacetime-fallback-") {
			upstream = append(upstream, name)
		}
	}
	seen := map[string]bool{}
	var ours []string
	for _, p := range AllPoSt() {
		params, vk := p.ParamsFiles()
		for _, f := range []string{params, vk} {
			e, ok := entries[f]
			if !ok {
				t.Errorf("%s: %s is not in parameters.json", p.Name, f)
				continue
			}
			if e.SectorSize != p.SectorSize {
				t.Errorf("%s: %s has sector_size %d, want %d", p.Name, f, e.SectorSize, p.SectorSize)
			}
			if !seen[f] {
				seen[f] = true
				ours = append(ours, f)
			}
		}
	}
	sort.Strings(upstream)
	sort.Strings(ours)
	if strings.Join(upstream, "\n") != strings.Join(ours, "\n") {
		t.Errorf("parameters.json spacetime files:\n%s\nours:\n%s", strings.Join(upstream, "\n"), strings.Join(ours, "\n"))
	}
	w1, _ := LookupPoSt(StackedDrgWindow32GiBV1)
	w2, _ := LookupPoSt(StackedDrgWindow32GiBV1_2)
	if w1.CacheID != w2.CacheID {
		t.Errorf("window 32GiB V1 %s and V1_2 %s", w1.CacheID, w2.CacheID)
	}
}
