package snark_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/c2flow/c2flow/filecoin/fctest"
	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/post"
	"github.com/c2flow/c2flow/filecoin/post/posttest"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/snark"
	"github.com/c2flow/c2flow/scheme"
)

// postRequest is a PoSt request as Curio's WindowPoStCuzk and
// WinningPoStCuzk send it: the go-state-types number, miner 1000, the
// sectors' vanilla proofs sorted by sector number, randomness as drawn
// (the scheme masks it).
func postRequest(t *testing.T, kind string, p proofs.RegisteredPoStProof, randomness [32]byte, ids ...uint64) scheme.Request {
	t.Helper()
	info, err := proofs.LookupPoSt(p)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := posttest.Bincodes(info, post.MaskRandomness(randomness), ids...)
	if err != nil {
		t.Fatal(err)
	}
	return scheme.Request{Kind: kind, RegisteredProof: uint64(p), MinerID: 1000, SectorSize: info.SectorSize, Vanilla: vs, Randomness: randomness[:]}
}

// A 2KiB WindowPoSt partition and a 2KiB WinningPoSt, admitted from
// Curio's requests, proved through the PoSt scheme as the pipeline's
// workers do it (development setups made by EnsureKeys, synthesis, the
// split prover, verification) give 192-byte proofs that the .vk alone
// accepts for the partition's public data, and refuses under other
// randomness, for other sectors, or with a flipped byte. The same content
// in other bytes is the same job; other randomness is another.
// postCase is a PoSt request's kind, proof and sectors.
type postCase struct {
	kind  string
	proof proofs.RegisteredPoStProof
	ids   []uint64
}

// postCases are a 2KiB WindowPoSt partition of two sectors and a 2KiB
// WinningPoSt.
func postCases() []postCase {
	return []postCase{
		{scheme.KindWindowPoSt, proofs.StackedDrgWindow2KiBV1_2, []uint64{3, 9}},
		{scheme.KindWinningPoSt, proofs.StackedDrgWinning2KiBV1, []uint64{7}},
	}
}

func TestPoStScheme2KiB(t *testing.T) {
	ctx := context.Background()
	var randomness [32]byte
	for i := range randomness {
		randomness[i] = byte(0xa0 + i)
	}
	set := snark.Schemes(snark.Params{Dir: fctest.DevParams(), ShapeDir: t.TempDir()}, nil)
	for _, tc := range postCases() {
		info, _ := proofs.LookupPoSt(tc.proof)
		t.Run(info.Name, func(t *testing.T) {
			req := postRequest(t, tc.kind, tc.proof, randomness, tc.ids...)
			a, err := set.Admit(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			ref, raw := a.Ref, a.Input
			if ref.Proof != info.Name || ref.SectorID != tc.ids[0] {
				t.Fatalf("admitted as %+v", ref)
			}
			// Unmasked randomness masked gives the same job; other
			// randomness another.
			masked := req
			m := post.MaskRandomness(randomness)
			masked.Randomness = m[:]
			if a2, err := set.Admit(ctx, masked); err != nil || a2.Ref != ref {
				t.Fatalf("the masked randomness is another job: %+v, %v", a2.Ref, err)
			}
			sc, err := set.For(ref.Proof)
			if err != nil {
				t.Fatal(err)
			}
			if err := set.EnsureKeys(ctx, []string{ref.Proof}, true, &bytes.Buffer{}); err != nil {
				t.Fatal(err)
			}
			sec, err := sc.Decode(raw, ref)
			if err != nil {
				t.Fatal(err)
			}
			if err := sec.Verify(ctx); err != nil {
				t.Fatal(err)
			}
			proof, times := proveOnCPU(ctx, t, sc, sec)
			if len(proof) != groth.ProofSize {
				t.Fatalf("%d-byte proof", len(proof))
			}
			t.Logf("%s: synthesis %v, device %v, finalize %v", info.Name, times[0].Synth.Round(time.Millisecond), times[0].Device.Round(time.Millisecond), times[0].Finalize.Round(time.Millisecond))

			// Another process's verifier, over the .vk alone, with the
			// public data alone.
			v, err := snark.Schemes(snark.Params{Dir: fctest.DevParams(), ShapeDir: t.TempDir()}, nil)[2].Verifier(ctx, ref.Proof)
			if err != nil {
				t.Fatal(err)
			}
			pub := func(r [32]byte, ids ...uint64) *snark.PoStJob {
				t.Helper()
				var reps []post.PublicSector
				for i, id := range ids {
					vp, err := posttest.Vanilla(info, m, id, i)
					if err != nil {
						t.Fatal(err)
					}
					reps = append(reps, post.PublicSector{ID: id, CommR: vp.CommR})
				}
				s, err := snark.PoStPublic(info, proofs.ProverID(1000), r, 0, reps)
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			if err := v.VerifyC2(pub(m, tc.ids...), proof); err != nil {
				t.Fatalf("the proof does not verify against its public data: %v", err)
			}
			other := m
			other[0] ^= 1
			if v.VerifyC2(pub(other, tc.ids...), proof) == nil {
				t.Error("verified under other randomness")
			}
			ids := append([]uint64(nil), tc.ids...)
			ids[len(ids)-1]++
			if v.VerifyC2(pub(m, ids...), proof) == nil {
				t.Error("verified for another sector")
			}
			bad := bytes.Clone(proof)
			bad[50] ^= 2
			if v.VerifyC2(pub(m, tc.ids...), bad) == nil {
				t.Error("a flipped byte verified")
			}
		})
	}
}

// A PoSt request is refused by name, before its vanilla proofs are
// trusted: a tampered opening names its sector, a seal or window proof
// number for a winning request, a wrong sector size, short randomness,
// unsorted or repeated sectors, too many sectors, an oversize entry, a
// winning partition other than 0. A PoSt input file is read strictly.
func TestPoStAdmitRefuses(t *testing.T) {
	ctx := context.Background()
	set := snark.Schemes(snark.Params{}, nil)
	var r [32]byte
	win := postRequest(t, scheme.KindWinningPoSt, proofs.StackedDrgWinning2KiBV1, r, 7)
	window := postRequest(t, scheme.KindWindowPoSt, proofs.StackedDrgWindow2KiBV1_2, r, 3, 9)
	for _, tc := range []struct {
		name string
		req  scheme.Request
		want string
	}{
		{"tampered leaf", func() scheme.Request {
			q := window
			q.Vanilla = [][]byte{window.Vanilla[0], bytes.Clone(window.Vanilla[1])}
			q.Vanilla[1][8+32+8+8+4+3*8+64] ^= 1 // a byte inside sector 9's first opening
			return q
		}(), "sector 9"},
		{"window number for winning", func() scheme.Request { q := win; q.RegisteredProof = uint64(proofs.StackedDrgWindow2KiBV1_2); return q }(), "not a winning proof"},
		{"sector size", func() scheme.Request { q := win; q.SectorSize = 8 << 20; return q }(), "sector_size"},
		{"short randomness", func() scheme.Request { q := win; q.Randomness = r[:31]; return q }(), "randomness: 31 bytes"},
		{"unsorted", func() scheme.Request {
			q := window
			q.Vanilla = [][]byte{window.Vanilla[1], window.Vanilla[0]}
			return q
		}(), "sorted by sector number"},
		{"too many", func() scheme.Request {
			q := window
			q.Vanilla = [][]byte{window.Vanilla[0], window.Vanilla[1], window.Vanilla[1]}
			return q
		}(), "1 to 2 sectors"},
		{"oversize entry", func() scheme.Request { q := win; q.Vanilla = [][]byte{make([]byte, 1<<20)}; return q }(), "not decoded"},
		{"winning partition", func() scheme.Request { q := win; q.PartitionIndex = 1; return q }(), "partition 0 alone"},
		{"envelope", func() scheme.Request { q := win; q.Envelope = []byte("{}"); return q }(), "vanilla_proofs"},
		// Named as PoSt proofs, not as seal proofs.
		{"proof 15", func() scheme.Request { q := win; q.RegisteredProof = 15; return q }(), "unknown registered PoSt proof"},
		{"proof 2^63", func() scheme.Request { q := window; q.RegisteredProof = 1 << 63; return q }(), "unknown registered PoSt proof"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := set.Admit(ctx, tc.req)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, scheme.ErrBadRequest) {
				t.Fatalf("got %v, want an ErrBadRequest naming %q", err, tc.want)
			}
		})
	}
	// A stored input is read strictly.
	a, err := set.Admit(ctx, window)
	if err != nil {
		t.Fatal(err)
	}
	raw := a.Input
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	m["extra"] = 1
	b, _ := json.Marshal(m)
	if _, err := snark.DecodePoStInput(b); err == nil || !errors.Is(err, snark.ErrBadPoStInput) {
		t.Errorf("a field too many: %v", err)
	}
	delete(m, "extra")
	m["randomness"] = strings.Repeat("ff", 32)
	b, _ = json.Marshal(m)
	if _, err := snark.DecodePoStInput(b); err == nil || !strings.Contains(err.Error(), "not masked") {
		t.Errorf("unmasked randomness: %v", err)
	}
}
