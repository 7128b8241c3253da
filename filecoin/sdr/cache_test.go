package sdr

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/c2flow/c2flow/filecoin/proofs"
)

// upstreamCommit is the rust-fil-proofs commit the expected values in these
// tests were read from.
const upstreamCommit = "87348a749d80447d00c595af834a8ed73c09e4d9"

// parentCacheManifest is storage-proofs-porep/parent_cache.json at
// rust-fil-proofs 87348a749d80447d00c595af834a8ed73c09e4d9: parent cache
// file stem -> {sector size, SHA-256 of the cache file}.
var parentCacheManifest = map[string]struct {
	sectorSize uint64
	digest     string
}{
	"v28-sdr-parent-21981246c370f9d76c7a77ab273d94bde0ceb4e938292334960bce05585dc117": {34359738368, "93deeac5e3052b6927467d4b2641bb782f05491de18d510147c93eeedd8672da"},
	"v28-sdr-parent-2aa9c77c3e58259481351cc4be2079cc71e1c9af39700866545c043bfa30fb42": {536870912, "3adcc092423aa76d6a7184016893406da44dd974b219a89cd3ece25e4e3018f5"},
	"v28-sdr-parent-3f0eef38bb48af1f48ad65e14eb85b4ebfc167cec18cd81764f6d998836c9899": {2048, "3da49221e2ed55371b86d0bf3d6526fcf128af61bed904f966428db1b531750d"},
	"v28-sdr-parent-4905486b7af19558ac3649bc6261411858b6add534438878c4ee3b29d8b9de0b": {68719476736, "2698b74eb2606b55b98d8b095e18b6320b47f46e00075956d48640ccd1641b03"},
	"v28-sdr-parent-494d91dc80f2df5272c4b9e129bc7ade9405225993af9fe34e6542a39a47554b": {2048, "840057702eea7652cf97e04306c30fe57174714d90de156a25eddd6075c25b97"},
	"v28-sdr-parent-5eed212119fd91aa6220a27f31a8966444a9381842bceb3a1ea61525bd47a5b5": {8388608, "03cd13565ded97c240a5f52e54295ad127bd0461b57904cb3a4d79b097bbecab"},
	"v28-sdr-parent-7ba215a1d2345774ab90b8cb1158d296e409d6068819d7b8c7baf0b25d63dc34": {536870912, "b5877d1963793efebc261fd8fde4dd6bc59e6b5c7abf52617a4ee023b8dc173a"},
	"v28-sdr-parent-8a99e8d6b6be7ab87a56b632e6739ff201c23ea14e99737c74690f0e265574d6": {68719476736, "2778a732ad46a7dc18e0564dfdf59fd321dcde74ab476fd6d3c4e6735d7cd89c"},
	"v28-sdr-parent-dcdabb0fbe4364bf0ac28b6a18c66de246409fa1a9020a00f33fb3e3053da6dc": {8388608, "a76604f2f59f2744c7151653bbb1d8596b6b57d295e6fa6c1f0c41d725b502ce"},
	"v28-sdr-parent-e1fa5d5b811ddbd118be3412c4a8c329156b8b8acc72632bca459455b5a05a13": {34359738368, "3c4f9841fcc75aed8c695800e58d08480629f25af3a2aefd81904181d75cc0b6"},
}

// TestParentCacheNames checks that the V1 and V1_1 seal proofs (porep ids
// 0..9) name exactly the ten manifest entries, each with its sector size.
// The name covers the hasher name, the graph identifier, the Feistel keys
// (hence the porep_id) and the node count.
func TestParentCacheNames(t *testing.T) {
	seen := map[string]bool{}
	for p := proofs.StackedDrg2KiBV1; p <= proofs.StackedDrg64GiBV1_1; p++ {
		g := proofGraph(t, p)
		id := g.ParentCacheID()
		e, ok := parentCacheManifest[id]
		if !ok {
			t.Errorf("proof %d: cache id %s not in parent_cache.json", p, id)
			continue
		}
		if e.sectorSize != g.SectorSize() {
			t.Errorf("proof %d: manifest sector size %d, graph %d", p, e.sectorSize, g.SectorSize())
		}
		seen[id] = true
	}
	if len(seen) != len(parentCacheManifest) {
		t.Errorf("matched %d of %d manifest entries", len(seen), len(parentCacheManifest))
	}
	// The synthetic and non-interactive proofs have their own porep ids,
	// hence graphs whose caches are not in the manifest.
	for p := proofs.StackedDrg2KiBV1_1_Feat_SyntheticPoRep; p <= proofs.StackedDrg64GiBV1_2_Feat_NonInteractivePoRep; p++ {
		g := proofGraph(t, p)
		if _, ok := parentCacheManifest[g.ParentCacheID()]; ok {
			t.Errorf("proof %d unexpectedly in the manifest", p)
		}
	}
}

func testParentCacheDigest(t *testing.T, p proofs.RegisteredSealProof) {
	g := proofGraph(t, p)
	e, ok := parentCacheManifest[g.ParentCacheID()]
	if !ok {
		t.Fatalf("proof %d: cache id %s not in the manifest", p, g.ParentCacheID())
	}
	start := time.Now()
	d, err := g.ParentCacheDigest(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("proof %d (%d nodes, api %v): %s digest %x in %v", p, g.Nodes(), g.APIVersion(), g.ParentCacheID(), d, time.Since(start))
	if got := hex.EncodeToString(d[:]); got != e.digest {
		t.Errorf("proof %d: parent cache digest %s, parent_cache.json (rust-fil-proofs %s) has %s", p, got, upstreamCommit, e.digest)
	}
}

// TestParentCacheDigest pins DRG sampling (ChaCha8, both parent orders),
// the Feistel expander (both index widths) and the cache layout against
// parent_cache.json, for the 2KiB, 8MiB and 512MiB graphs of API 1.0.0
// (porep ids 0-2) and 1.1.0 (porep ids 5-7).
func TestParentCacheDigest(t *testing.T) {
	for _, p := range []proofs.RegisteredSealProof{proofs.StackedDrg2KiBV1, proofs.StackedDrg2KiBV1_1, proofs.StackedDrg8MiBV1, proofs.StackedDrg8MiBV1_1} {
		testParentCacheDigest(t, p)
	}
}

// TestParentCacheDigest512MiB covers the 2^24-node graphs (3.5-7 s each on
// two shared cores).
func TestParentCacheDigest512MiB(t *testing.T) {
	for _, p := range []proofs.RegisteredSealProof{proofs.StackedDrg512MiBV1, proofs.StackedDrg512MiBV1_1} {
		testParentCacheDigest(t, p)
	}
}

// TestParentCacheForms checks that the streamed cache, the in-memory cache
// and per-node Parents agree, with any worker count.
func TestParentCacheForms(t *testing.T) {
	for _, v := range []proofs.APIVersion{proofs.APIVersion1_0_0, proofs.APIVersion1_1_0} {
		g, err := NewGraph(3*cacheChunkNodes+17, proofs.NewPoRepID(3, 0), v)
		if err != nil {
			t.Fatal(err)
		}
		var s1, s3 bytes.Buffer
		if err := g.WriteParentCache(context.Background(), &s1, 1); err != nil {
			t.Fatal(err)
		}
		if err := g.WriteParentCache(context.Background(), &s3, 3); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(s1.Bytes(), s3.Bytes()) || uint64(s1.Len()) != g.ParentCacheSize() {
			t.Fatalf("streamed caches differ or have the wrong size (%d, %d, want %d)", s1.Len(), s3.Len(), g.ParentCacheSize())
		}
		pc, err := g.BuildParentCache(context.Background(), 2)
		if err != nil {
			t.Fatal(err)
		}
		var m bytes.Buffer
		if _, err := pc.WriteTo(&m); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(m.Bytes(), s1.Bytes()) {
			t.Fatal("in-memory cache differs from the streamed cache")
		}
		d, err := g.ParentCacheDigest(context.Background(), 2)
		if err != nil {
			t.Fatal(err)
		}
		if d != sha256.Sum256(s1.Bytes()) {
			t.Fatal("digest differs from SHA-256 of the stream")
		}
		// Per-node queries, with and without the Feistel table.
		fresh, _ := NewGraph(g.Nodes(), g.PoRepID(), v)
		for _, n := range []uint64{0, 1, 2, 3, 1000, cacheChunkNodes, g.Nodes() - 1} {
			var a, b [Degree]uint32
			if err := fresh.Parents(n, a[:]); err != nil {
				t.Fatal(err)
			}
			if err := g.Parents(n, b[:]); err != nil {
				t.Fatal(err)
			}
			if a != b || !equalU32(a[:], pc.Parents(n)) {
				t.Fatalf("node %d: parents %v / %v / %v disagree", n, a, b, pc.Parents(n))
			}
		}
	}
}

func equalU32(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestParentCacheCancel(t *testing.T) {
	g, err := NewGraph(1<<20, proofs.NewPoRepID(7, 0), proofs.APIVersion1_1_0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.WriteParentCache(ctx, &bytes.Buffer{}, 2); err == nil {
		t.Error("WriteParentCache: no error with a cancelled context")
	}
	if _, err := g.BuildParentCache(ctx, 2); err == nil {
		t.Error("BuildParentCache: no error with a cancelled context")
	}
}
