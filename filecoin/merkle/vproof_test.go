package merkle

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/c2flow/c2flow/filecoin/commcid"
	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/c2flow/c2flow/internal/upstreamdata"
)

// The Window PoSt fixtures are curio's lib/proof/testgolden/post.vproof and
// postpub.json (github.com/filecoin-project/curio at commit
// e0294b0f948132d41e8f42f59fa949495d5fd3af; post.vproof last changed in
// 682a1e8d11f95f2c6a1d6a15159159089cb8c481): a real 32GiB Window PoSt
// vanilla proof (one sector, 10 tree-R openings in an 8-8-0 Poseidon tree)
// in bincode, and its public inputs. They are committed, unmodified, under
// testdata/curio (see testdata/PROVENANCE.md) and read, their SHA-256
// checked, through internal/upstreamdata (C2FLOW_UPSTREAM_CURIO may name a
// curio checkout or git directory instead). The layout below follows
// curio's lib/proof/post_vproof_bin_decode.go and
// porep_vproof_bin_decode.go, which mirror rust-fil-proofs'
// FallbackPoStSectorProof, fallback::Proof, SectorProof and MerkleProof.

type postSectorProof struct {
	inclusion []*Proof
	commC     Node
	commRLast Node
}

type fallbackPoStSectorProof struct {
	sectorID uint64
	commR    Node
	sectors  []postSectorProof
}

func decodeFallbackPoStSectorProof(data []byte) (*fallbackPoStSectorProof, error) {
	r := NewBincodeReader(data)
	out := &fallbackPoStSectorProof{}
	var err error
	if out.sectorID, err = r.U64("sector_id"); err != nil {
		return nil, err
	}
	if out.commR, err = r.Node("comm_r"); err != nil {
		return nil, err
	}
	ns, err := r.Len("sectors", 8)
	if err != nil {
		return nil, err
	}
	out.sectors = make([]postSectorProof, ns)
	for i := range out.sectors {
		np, err := r.Len("inclusion_proofs", 4)
		if err != nil {
			return nil, err
		}
		for range np {
			p, err := r.Proof("inclusion proof")
			if err != nil {
				return nil, fmt.Errorf("sector %d: %w", i, err)
			}
			out.sectors[i].inclusion = append(out.sectors[i].inclusion, p)
		}
		if out.sectors[i].commC, err = r.Node("comm_c"); err != nil {
			return nil, err
		}
		if out.sectors[i].commRLast, err = r.Node("comm_r_last"); err != nil {
			return nil, err
		}
	}
	if r.Rest() != 0 {
		return nil, fmt.Errorf("%d trailing bytes", r.Rest())
	}
	return out, nil
}

// postPublic is the part of curio's postpub.json (a lotus
// WindowPoStVerifyInfo) the test uses.
type postPublic struct {
	Randomness        string
	ChallengedSectors []struct {
		SealProof    int
		SectorNumber uint64
		SealedCID    map[string]string
	}
}

// windowPoStChallenge is rust-fil-proofs storage-proofs-post
// fallback/vanilla.rs generate_leaf_challenge: the first 8 bytes, little
// endian, of SHA-256(randomness || sector_id LE || challenge_index LE),
// modulo the sector's node count.
func windowPoStChallenge(randomness [32]byte, sectorID, index, nodes uint64) uint64 {
	var buf [48]byte
	copy(buf[:32], randomness[:])
	binary.LittleEndian.PutUint64(buf[32:], sectorID)
	binary.LittleEndian.PutUint64(buf[40:], index)
	h := sha256.Sum256(buf[:])
	return binary.LittleEndian.Uint64(h[:8]) % nodes
}

func loadPoSt(t *testing.T) (*fallbackPoStSectorProof, *postPublic) {
	t.Helper()
	raw := upstreamdata.Read(t, upstreamdata.PostVproof)
	vp, err := decodeFallbackPoStSectorProof(raw)
	if err != nil {
		t.Fatalf("decode post.vproof: %v", err)
	}
	pubRaw := upstreamdata.Read(t, upstreamdata.PostPubJSON)
	var pub postPublic
	if err := json.Unmarshal(pubRaw, &pub); err != nil {
		t.Fatal(err)
	}
	return vp, &pub
}

// TestWindowPoStVanillaProof verifies the real 32GiB Window PoSt vanilla
// proof the way rust-fil-proofs' FallbackPoSt::verify_all_partitions does:
// comm_r (from the sector's sealed CID) = Poseidon hash2(comm_c,
// comm_r_last); each of the 10 tree-R openings (shape 8-8-0 over 2^30
// leaves) has comm_r_last as root, the expected path length, and
// validates against its challenged leaf.
func TestWindowPoStVanillaProof(t *testing.T) {
	vp, pub := loadPoSt(t)
	const nodes = (32 << 30) / 32 // 32GiB sector
	shape, err := SectorShape(32 << 30)
	if err != nil {
		t.Fatal(err)
	}
	if len(pub.ChallengedSectors) != 1 || pub.ChallengedSectors[0].SectorNumber != vp.sectorID {
		t.Fatalf("public sectors %+v, proof sector %d", pub.ChallengedSectors, vp.sectorID)
	}
	cr, err := commcid.ParseString(pub.ChallengedSectors[0].SealedCID["/"], commcid.Sealed)
	commR := Node(cr)
	if err != nil {
		t.Fatal(err)
	}
	if commR != vp.commR {
		t.Fatalf("comm_r in CID %s, in proof %s", commR, vp.commR)
	}
	rnd, err := base64.StdEncoding.DecodeString(pub.Randomness)
	if err != nil || len(rnd) != 32 {
		t.Fatalf("randomness %q: %v", pub.Randomness, err)
	}
	if len(vp.sectors) != 1 {
		t.Fatalf("%d sector proofs, want 1", len(vp.sectors))
	}
	sp := vp.sectors[0]
	got, err := hash.Hash2(hash.Domain(sp.commC), hash.Domain(sp.commRLast))
	if err != nil {
		t.Fatal(err)
	}
	if Node(got) != commR {
		t.Fatalf("hash2(comm_c, comm_r_last) = %s, comm_r = %s", Node(got), commR)
	}
	const windowPoStChallengeCount = 10 // filecoin-proofs WINDOW_POST_CHALLENGE_COUNT
	if len(sp.inclusion) != windowPoStChallengeCount {
		t.Fatalf("%d inclusion proofs, want %d", len(sp.inclusion), windowPoStChallengeCount)
	}
	for n, p := range sp.inclusion {
		if p.Kind != KindSub || p.Root != sp.commRLast {
			t.Fatalf("opening %d: kind %s root %s", n, p.Kind, p.Root)
		}
		challenge := windowPoStChallenge([32]byte(rnd), vp.sectorID, uint64(n), nodes)
		if err := p.ValidateInTree(PoseidonHasher{}, shape, nodes, challenge); err != nil {
			t.Errorf("opening %d (challenge %d): %v", n, challenge, err)
		}
		if err := p.Validate(PoseidonHasher{}, shape, challenge^1); !errors.Is(err, ErrChallengeMismatch) {
			t.Errorf("opening %d validated against the wrong node: %v", n, err)
		}
	}
}

// TestWindowPoStTampered checks that any flipped byte in an opening fails.
func TestWindowPoStTampered(t *testing.T) {
	vp, _ := loadPoSt(t)
	shape := Shape{Base: 8, Sub: 8}
	p := vp.sectors[0].inclusion[0]
	clone := func() *Proof {
		q := *p
		q.Base = append([]PathElement(nil), p.Base...)
		for i := range q.Base {
			q.Base[i].Hashes = append([]Node(nil), p.Base[i].Hashes...)
		}
		q.Sub = append([]PathElement(nil), p.Sub...)
		q.Sub[0].Hashes = append([]Node(nil), p.Sub[0].Hashes...)
		return &q
	}
	if err := clone().Verify(PoseidonHasher{}, shape); err != nil {
		t.Fatalf("untampered clone: %v", err)
	}
	cases := map[string]func(q *Proof){
		"leaf":          func(q *Proof) { q.Leaf[0] ^= 1 },
		"root":          func(q *Proof) { q.Root[5] ^= 0x10 },
		"base sibling":  func(q *Proof) { q.Base[3].Hashes[2][7] ^= 0x80 },
		"sub sibling":   func(q *Proof) { q.Sub[0].Hashes[6][0] ^= 1 },
		"last base row": func(q *Proof) { q.Base[8].Hashes[0][31] ^= 0x01 },
		"base index":    func(q *Proof) { q.Base[0].Index = (q.Base[0].Index + 1) % 8 },
		"sub index":     func(q *Proof) { q.Sub[0].Index = (q.Sub[0].Index + 1) % 8 },
		"non-canonical": func(q *Proof) { q.Base[1].Hashes[0][31] = 0xff },
	}
	for name, mutate := range cases {
		q := clone()
		mutate(q)
		if err := q.Verify(PoseidonHasher{}, shape); err == nil {
			t.Errorf("%s tampered: verified", name)
		}
	}
	// Structural mismatches.
	q := clone()
	q.Kind = KindSingle
	if err := q.Verify(PoseidonHasher{}, shape); !errors.Is(err, ErrMalformed) {
		t.Errorf("wrong kind: %v", err)
	}
	q = clone()
	q.Base[2].Hashes = q.Base[2].Hashes[:6]
	if err := q.Verify(PoseidonHasher{}, shape); !errors.Is(err, ErrMalformed) {
		t.Errorf("short element: %v", err)
	}
	q = clone()
	q.Base[2].Index = 8
	if err := q.Verify(PoseidonHasher{}, shape); !errors.Is(err, ErrMalformed) {
		t.Errorf("index out of range: %v", err)
	}
	if err := clone().ValidateInTree(PoseidonHasher{}, shape, 1<<27, 0); !errors.Is(err, ErrPathLength) {
		t.Errorf("wrong tree size: %v", err)
	}
}

// AppendBincode writes the bytes rust-fil-proofs wrote: curio's
// post.vproof, decoded and written again (its 10 Sub proofs through
// AppendBincode), is the same bytes; cut anywhere, it is refused.
func TestBincodeRoundTrip(t *testing.T) {
	raw := upstreamdata.Read(t, upstreamdata.PostVproof)
	vp, err := decodeFallbackPoStSectorProof(raw)
	if err != nil {
		t.Fatal(err)
	}
	b := binary.LittleEndian.AppendUint64(nil, vp.sectorID)
	b = append(b, vp.commR[:]...)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(vp.sectors)))
	for _, s := range vp.sectors {
		b = binary.LittleEndian.AppendUint64(b, uint64(len(s.inclusion)))
		for _, p := range s.inclusion {
			b = p.AppendBincode(b)
		}
		b = append(b, s.commC[:]...)
		b = append(b, s.commRLast[:]...)
	}
	if !bytes.Equal(b, raw) {
		t.Fatalf("re-encoded %d bytes differ from upstream's %d", len(b), len(raw))
	}
	for _, cut := range []int{0, 7, 100, len(raw) / 2, len(raw) - 1} {
		if _, err := decodeFallbackPoStSectorProof(raw[:cut]); err == nil {
			t.Errorf("a vproof cut at %d bytes decoded", cut)
		}
	}
	// A length that the bytes cannot hold is refused before allocating.
	huge := bytes.Clone(raw)
	binary.LittleEndian.PutUint64(huge[40:], 1<<60)
	if _, err := decodeFallbackPoStSectorProof(huge); !errors.Is(err, ErrBincode) {
		t.Errorf("a 2^60 sector count: %v", err)
	}
}
