package post

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/internal/upstreamdata"
)

// curio's lib/proof/testgolden/post.vproof and postpub.json (commit
// e0294b0f948132d41e8f42f59fa949495d5fd3af, testdata/PROVENANCE.md): a
// real 32GiB Window PoSt vanilla proof of sector 1 of miner 1000, zero
// randomness, and its lotus WindowPoStVerifyInfo.
type golden struct {
	raw        []byte
	vp         *VanillaProof
	info       proofs.PoStProofInfo
	randomness [32]byte
	proverID   [32]byte
	sector     PublicSector
}

func loadGolden(t *testing.T) *golden {
	t.Helper()
	g := &golden{raw: upstreamdata.Read(t, upstreamdata.PostVproof)}
	var err error
	if g.vp, err = DecodeVanilla(g.raw); err != nil {
		t.Fatalf("decode post.vproof: %v", err)
	}
	pub, err := ParseVerifyInfo(upstreamdata.Read(t, upstreamdata.PostPubJSON))
	if err != nil {
		t.Fatal(err)
	}
	if len(pub.Sectors) != 1 {
		t.Fatalf("postpub.json: %d sectors", len(pub.Sectors))
	}
	g.info, g.randomness, g.proverID, g.sector = pub.Info, pub.Randomness, pub.ProverID, pub.Sectors[0]
	return g
}

// post.vproof is proof 8 of go-state-types, the api's
// StackedDrgWindow32GiBV1, of sector 1 whose comm_r is the sealed CID's;
// decoded and written again it is the same bytes.
func TestVanillaRoundTrip(t *testing.T) {
	g := loadGolden(t)
	if g.info.Name != "StackedDrgWindow32GiBV1" {
		t.Fatalf("post.vproof's proof is %s", g.info.Name)
	}
	if g.vp.SectorID != g.sector.ID || g.vp.CommR != g.sector.CommR {
		t.Fatalf("vproof sector %d comm_r %x; postpub sector %d comm_r %x", g.vp.SectorID, g.vp.CommR, g.sector.ID, g.sector.CommR)
	}
	if len(g.vp.Sectors) != 1 || len(g.vp.Sectors[0].Openings) != 10 {
		t.Fatalf("%d sector proofs", len(g.vp.Sectors))
	}
	if b := g.vp.Bincode(); !bytes.Equal(b, g.raw) {
		t.Fatalf("re-encoded %d bytes differ from upstream's %d", len(b), len(g.raw))
	}
}

// Malformed bytes are refused with ErrBadVanilla, never a panic: every
// truncation, a trailing byte, lengths the bytes cannot hold, a bad
// variant, and random corruptions.
func TestDecodeVanillaMalformed(t *testing.T) {
	raw := upstreamdata.Read(t, upstreamdata.PostVproof)
	for cut := range len(raw) {
		if _, err := DecodeVanilla(raw[:cut]); !errors.Is(err, ErrBadVanilla) {
			t.Fatalf("cut at %d: %v", cut, err)
		}
	}
	if _, err := DecodeVanilla(append(bytes.Clone(raw), 0)); !errors.Is(err, ErrBadVanilla) || !strings.Contains(err.Error(), "1 bytes after") {
		t.Errorf("trailing byte: %v", err)
	}
	for _, off := range []int{40, 48} { // sectors length, inclusion_proofs length
		b := bytes.Clone(raw)
		binary.LittleEndian.PutUint64(b[off:], 1<<62)
		if _, err := DecodeVanilla(b); !errors.Is(err, ErrBadVanilla) {
			t.Errorf("length 2^62 at %d: %v", off, err)
		}
	}
	b := bytes.Clone(raw)
	binary.LittleEndian.PutUint32(b[56:], 7) // the first opening's ProofData variant
	if _, err := DecodeVanilla(b); !errors.Is(err, ErrBadVanilla) || !strings.Contains(err.Error(), "variant 7") {
		t.Errorf("variant 7: %v", err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := bytes.Clone(raw)
		for range 1 + rng.IntN(4) {
			b[rng.IntN(len(b))] = byte(rng.Uint32())
		}
		if v, err := DecodeVanilla(b); err == nil {
			_ = VerifySector(proofs.AllPoSt()[proofs.StackedDrgWindow32GiBV1], [32]byte{}, 0, v)
		}
	}
}

// The golden proof verifies natively; each of six tamperings is refused,
// named by the sector and the challenge.
func TestVerifySector(t *testing.T) {
	g := loadGolden(t)
	if err := VerifySector(g.info, g.randomness, 0, g.vp); err != nil {
		t.Fatal(err)
	}
	// The same proof is a window V1_2 proof too: a lone sector's challenge
	// indices are 0..9 either way.
	v12, _ := proofs.LookupPoSt(proofs.StackedDrgWindow32GiBV1_2)
	if err := VerifySector(v12, g.randomness, 0, g.vp); err != nil {
		t.Fatalf("as V1_2: %v", err)
	}
	// As the second sector of a V1 proof its challenges are 10..19.
	if err := VerifySector(g.info, g.randomness, 1, g.vp); err == nil {
		t.Fatal("verified as sector index 1 of a V1 proof")
	}
	for _, tc := range []struct {
		name      string
		mutate    func(v *VanillaProof)
		challenge int
		want      string
	}{
		{"leaf", func(v *VanillaProof) { v.Sectors[0].Openings[3].Leaf[0] ^= 1 }, 3, "root mismatch"},
		{"path sibling", func(v *VanillaProof) { v.Sectors[0].Openings[7].Base[4].Hashes[2][9] ^= 0x40 }, 7, "root mismatch"},
		{"comm_c", func(v *VanillaProof) { v.Sectors[0].CommC[1] ^= 1 }, -1, "is not H(comm_c"},
		{"comm_r_last", func(v *VanillaProof) { v.Sectors[0].CommRLast[2] ^= 1 }, -1, "is not H(comm_c"},
		{"sector id", func(v *VanillaProof) { v.SectorID = 2 }, 0, "not for the challenged node"},
		{"missing opening", func(v *VanillaProof) { v.Sectors[0].Openings = v.Sectors[0].Openings[:9] }, 9, "opening missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := DecodeVanilla(g.raw) // a fresh copy
			if err != nil {
				t.Fatal(err)
			}
			tc.mutate(v)
			err = VerifySector(g.info, g.randomness, 0, v)
			var se *SectorError
			if !errors.As(err, &se) || !errors.Is(err, ErrBadVanilla) {
				t.Fatalf("tampered %s: %v", tc.name, err)
			}
			if se.Sector != v.SectorID || se.Challenge != tc.challenge || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("tampered %s: sector %d challenge %d: %v; want challenge %d, %q", tc.name, se.Sector, se.Challenge, err, tc.challenge, tc.want)
			}
			t.Log(err)
		})
	}
	// Other randomness fails at challenge 0; non-canonical randomness is
	// refused before any hashing.
	if err := VerifySector(g.info, [32]byte{1}, 0, g.vp); err == nil {
		t.Error("verified under other randomness")
	}
	var big [32]byte
	big[31] = 0xff
	if err := VerifySector(g.info, big, 0, g.vp); err == nil || !strings.Contains(err.Error(), "not a field element") {
		t.Errorf("non-canonical randomness: %v", err)
	}
}
