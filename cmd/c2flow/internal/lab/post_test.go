package lab

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/fctest"
	"github.com/c2flow/c2flow/filecoin/post"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/internal/clip"
	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/registry"
)

// testRandomness is unmasked on purpose: post-vanilla masks it.
const testRandomness = "0x" + "5a17" + "00112233445566778899aabbccddeeff00112233445566778899aabbcc" + "c7"

// runPostVanilla runs post-vanilla into a new directory and returns it.
func runPostVanilla(t *testing.T, proof string, sectors int, extra ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "post")
	args := append([]string{"--post-proof", proof, "--sectors", fmt.Sprint(sectors), "--randomness", testRandomness, "--out", dir}, extra...)
	var log bytes.Buffer
	if err := postVanilla(context.Background(), args, &log); err != nil {
		t.Fatalf("post-vanilla %s: %v\n%s", strings.Join(args, " "), err, log.String())
	}
	return dir
}

// readPostDir reads what post-vanilla wrote: the record and the vanilla
// proofs of its replicas, in order, each decoded from its file.
func readPostDir(t *testing.T, dir string) (*post.Record, []*post.VanillaProof) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "post.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec post.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	var vs []*post.VanillaProof
	for _, r := range rec.Replicas {
		raw, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.vproof", r.SectorID)))
		if err != nil {
			t.Fatal(err)
		}
		v, err := post.DecodeVanilla(raw)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(v.Bincode(), raw) {
			t.Fatalf("sector %d: the vproof does not encode back to its bytes", r.SectorID)
		}
		vs = append(vs, v)
	}
	return &rec, vs
}

// post-vanilla writes vanilla proofs that decode and verify natively for
// their sector and position, and a post.json whose replicas are theirs,
// under the masked randomness; window proves every sector in number
// order, winning only the sector WinningSectors selects. Two runs write
// the same bytes.
func TestPostVanilla2KiB(t *testing.T) {
	want, err := hex.DecodeString(testRandomness[2:])
	if err != nil {
		t.Fatal(err)
	}
	masked := post.MaskRandomness([32]byte(want))
	if masked == [32]byte(want) {
		t.Fatal("the test randomness needs masking")
	}
	for _, tc := range []struct {
		proof   string
		sectors int
	}{{"StackedDrgWindow2KiBV1_2", 3}, {"StackedDrgWindow2KiBV1", 3}, {"StackedDrgWinning2KiBV1", 7}} {
		t.Run(tc.proof, func(t *testing.T) {
			info, err := proofs.PoStByName(tc.proof)
			if err != nil {
				t.Fatal(err)
			}
			dir := runPostVanilla(t, tc.proof, tc.sectors, "--first-id", "40")
			rec, vs := readPostDir(t, dir)
			if rec.RegisteredProof != info.Name || rec.Randomness != masked || rec.Proof != nil {
				t.Fatalf("post.json: %s, randomness %x (want %s, %x), proof %d bytes", rec.RegisteredProof, rec.Randomness, info.Name, masked, len(rec.Proof))
			}
			wantIDs := []uint64{40, 41, 42}
			if info.Type == proofs.PoStWinning {
				pos, err := post.WinningSectors(info, masked, rec.ProverID, uint64(tc.sectors))
				if err != nil {
					t.Fatal(err)
				}
				wantIDs = []uint64{40 + pos[0]}
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != len(wantIDs)+1 || len(rec.Replicas) != len(wantIDs) {
				t.Fatalf("%d files, %d replicas; want %d vproofs and post.json", len(entries), len(rec.Replicas), len(wantIDs))
			}
			for i, v := range vs {
				r := rec.Replicas[i]
				if r.SectorID != wantIDs[i] || v.SectorID != r.SectorID || [32]byte(v.CommR) != r.CommR {
					t.Fatalf("replica %d: sector %d comm_r %x; vproof: sector %d comm_r %x; want sector %d", i, r.SectorID, r.CommR, v.SectorID, v.CommR, wantIDs[i])
				}
				if err := post.VerifySector(info, masked, i, v); err != nil {
					t.Fatal(err)
				}
				if n := len(v.Sectors[0].Openings); n != info.ChallengeCount {
					t.Fatalf("sector %d: %d openings, want %d", r.SectorID, n, info.ChallengeCount)
				}
			}
			// Under other randomness the same proofs do not verify: the
			// check above is not vacuous.
			if err := post.VerifySector(info, post.MaskRandomness([32]byte{1}), 0, vs[0]); err == nil {
				t.Fatal("a vanilla proof verifies under other randomness")
			}
			again := runPostVanilla(t, tc.proof, tc.sectors, "--first-id", "40")
			for _, e := range entries {
				a, err := os.ReadFile(filepath.Join(dir, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				b, err := os.ReadFile(filepath.Join(again, e.Name()))
				if err != nil || !bytes.Equal(a, b) {
					t.Fatalf("%s differs between two runs (%v)", e.Name(), err)
				}
			}
		})
	}
}

// post-vanilla refuses what it cannot make, naming it.
func TestPostVanillaRefuses(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--post-proof", "StackedDrgWindow2KiBV9"}, `registered PoSt proof "StackedDrgWindow2KiBV9"`},
		{[]string{"--post-proof", "StackedDrgWindow2KiBV1_2", "--prover-id", strings.Repeat("ff", 32)}, "--prover-id"},
		{[]string{"--post-proof", "StackedDrgWindow2KiBV1_2", "--sectors", "0"}, "--sectors 0"},
		{[]string{"--post-proof", "StackedDrgWindow2KiBV1_2", "--first-id", fmt.Sprint(uint64(1) << 63)}, "--first-id"},
		// A window proof seals every sector: bounded, not 100M files.
		{[]string{"--post-proof", "StackedDrgWindow2KiBV1_2", "--sectors", "100000000"}, "--sectors 100000000"},
	} {
		args := append([]string{"--randomness", testRandomness, "--out", dir}, tc.args...)
		var log bytes.Buffer
		err := postVanilla(context.Background(), args, &log)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("post-vanilla %s: %v, want an error naming %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("refused runs wrote %d files into --out", len(ents))
	}
	// A winning proof of a large set seals only the sector it selects.
	var log bytes.Buffer
	if err := postVanilla(context.Background(), []string{"--post-proof", "StackedDrgWinning2KiBV1", "--sectors", "100000000", "--randomness", testRandomness, "--out", dir}, &log); err != nil {
		t.Fatalf("winning of 100M sectors: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 { // one .vproof and post.json
		t.Errorf("winning of 100M sectors wrote %d files, want 2", len(ents))
	}
}

// Sectors over 8MiB are sparse replicas, not sealed: a 32GiB window
// proof's vanilla proofs (10 openings of a 2^30-leaf tree R each) and a
// 64GiB winning proof's are made at once, and each verifies as it is
// read back (issue 56: post-vanilla refused anything over 8MiB).
func TestPostVanillaProductionSizes(t *testing.T) {
	for _, proof := range []string{"StackedDrgWindow32GiBV1_2", "StackedDrgWinning64GiBV1"} {
		dir := t.TempDir()
		var log bytes.Buffer
		if err := postVanilla(context.Background(), []string{"--post-proof", proof, "--sectors", "3", "--randomness", testRandomness, "--out", dir}, &log); err != nil {
			t.Fatalf("%s: %v", proof, err)
		}
		line, err := os.ReadFile(filepath.Join(dir, "post.json"))
		if err != nil {
			t.Fatal(err)
		}
		var rec post.Record // without its proof: ParseRecord wants one
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		info, err := proofs.PoStByName(proof)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range rec.Replicas {
			b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.vproof", r.SectorID)))
			if err != nil {
				t.Fatal(err)
			}
			v, err := post.DecodeVanilla(b)
			if err != nil {
				t.Fatal(err)
			}
			if err := post.VerifySector(info, rec.Randomness, i, v); err != nil || v.CommR != r.CommR {
				t.Errorf("%s: sector %d: %v (comm_r %x, recorded %x)", proof, r.SectorID, err, v.CommR, r.CommR)
			}
		}
		if !strings.Contains(log.String(), "sparse replicas") {
			t.Errorf("%s: the log does not say the replicas are sparse:\n%s", proof, log.String())
		}
	}
}

// provePartitions proves the partitions of a PoSt of the vanilla proofs
// (in sector order) with the split prover under pr, as the pipeline will.
func provePartitions(t *testing.T, pr *prover.Prover, info proofs.PoStProofInfo, randomness [32]byte, vs []*post.VanillaProof) []byte {
	t.Helper()
	var out []byte
	for k := range info.Partitions(len(vs)) {
		p, err := post.NewPartition(info, randomness, k, vs[k*info.SectorCount:min(len(vs), (k+1)*info.SectorCount)])
		if err != nil {
			t.Fatal(err)
		}
		w, err := p.Witness()
		if err != nil {
			t.Fatal(err)
		}
		wb := r1cs.NewWitness(r1cs.WitnessOptions{ABC: true, Check: true})
		if err := circuit.SynthesizePoSt(wb, p.Shape(), w); err != nil {
			t.Fatal(err)
		}
		wb.AppendInputConstraints()
		proof := fctest.Prove(t, pr, fmt.Sprintf("%s/%d", info.Name, k), wb)
		b := proof.Bytes()
		out = append(out, b[:]...)
	}
	return out
}

// postLine is rec as a record line; mut changes a copy of it first.
func postLine(t *testing.T, rec *post.Record, mut func(r *post.Record)) string {
	t.Helper()
	c := *rec
	c.Replicas = append([]post.Replica(nil), rec.Replicas...)
	c.Proof = bytes.Clone(rec.Proof)
	if mut != nil {
		mut(&c)
	}
	b, err := json.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runVP runs verify-post --vk over one record file of lines and returns
// its output lines and error.
func runVP(t *testing.T, vk string, lines []string) ([]string, error) {
	t.Helper()
	return runVPWith(t, []string{"--vk", vk}, lines)
}

// runVPWith runs verify-post with flags over one record file of lines.
func runVPWith(t *testing.T, flags []string, lines []string) ([]string, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "records.json")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, log bytes.Buffer
	err := verifyPost(context.Background(), append(flags, p), &out, &log)
	t.Logf("verify-post: %v; %s", err, strings.TrimSpace(log.String()))
	s := strings.TrimSpace(out.String())
	if s == "" {
		return nil, err
	}
	return strings.Split(s, "\n"), err
}

// A real 2KiB window PoSt of three sectors (two partitions; V1_2, and V1
// whose challenges depend on a sector's position) and a real 2KiB winning
// PoSt, made from post-vanilla's files by the split prover
// under development setups, verify with verify-post --vk; other
// randomness, another sector, a flipped byte, a wrong length, a record of
// the other circuit and malformed records are each refused, named, and
// the command fails. Random damage to a record never panics it.
func TestVerifyPost2KiB(t *testing.T) {
	for _, tc := range []struct {
		proof   string
		sectors int
	}{{"StackedDrgWindow2KiBV1_2", 3}, {"StackedDrgWindow2KiBV1", 3}, {"StackedDrgWinning2KiBV1", 4}} {
		t.Run(tc.proof, func(t *testing.T) {
			info, err := proofs.PoStByName(tc.proof)
			if err != nil {
				t.Fatal(err)
			}
			rec, vs := readPostDir(t, runPostVanilla(t, tc.proof, tc.sectors))
			s := circuit.PoStShapeOf(info)
			pr, pvk := fctest.DevKeys(t, fmt.Sprint(s), s.NumInputs(), func(cs *r1cs.Shape) error { return circuit.SynthesizePoSt(cs, s, nil) })
			vk := writeVK(t, pvk.VK)
			rec.Proof = provePartitions(t, pr, info, rec.Randomness, vs)
			parts := info.Partitions(len(vs))
			if len(rec.Proof) != parts*proofs.SinglePartitionProofLen {
				t.Fatalf("%d proof bytes for %d partitions", len(rec.Proof), parts)
			}
			good := postLine(t, rec, nil)
			lines, err := runVP(t, vk, []string{good, "", good})
			wantOK := fmt.Sprintf(": ok (%s, %d sectors, %d partitions)", info.Name, len(vs), parts)
			if err != nil || len(lines) != 2 || countPrefix(lines, wantOK) != 2 {
				t.Fatalf("good records: %v\n%s", err, strings.Join(lines, "\n"))
			}
			// The other kind's record, under this key.
			otherKind := "StackedDrgWinning2KiBV1"
			if info.Type == proofs.PoStWinning {
				otherKind = "StackedDrgWindow2KiBV1_2"
			}
			bad := []struct {
				name, line, want string
			}{
				{"other randomness", postLine(t, rec, func(r *post.Record) { r.Randomness[0] ^= 1 }), "pairing check failed"},
				{"another sector", postLine(t, rec, func(r *post.Record) { r.Replicas[len(r.Replicas)-1].SectorID += 100 }), "pairing check failed"},
				{"another comm_r", postLine(t, rec, func(r *post.Record) { r.Replicas[0].CommR[5] ^= 1 }), "pairing check failed"},
				{"flipped proof byte", postLine(t, rec, func(r *post.Record) { r.Proof[len(r.Proof)-100] ^= 4 }), "partition " + fmt.Sprint(parts-1)},
				{"short proof", postLine(t, rec, func(r *post.Record) { r.Proof = r.Proof[:len(r.Proof)-1] }), "not one 192-byte Groth16 proof a partition"},
				{"extra partition", postLine(t, rec, func(r *post.Record) { r.Proof = append(r.Proof, r.Proof[:192]...) }), fmt.Sprintf("%d bytes", len(rec.Proof)+192)},
				{"no proof (post.json)", postLine(t, rec, func(r *post.Record) { r.Proof = nil }), `field "proof" missing`},
				{"other circuit", postLine(t, rec, func(r *post.Record) {
					r.RegisteredProof = otherKind
					r.Replicas = r.Replicas[:1]
					r.Proof = r.Proof[:192]
				}), "a key of another circuit"},
				{"unmasked randomness", postLine(t, rec, func(r *post.Record) { r.Randomness[31] = 0xff }), "randomness"},
				{"unknown proof", postLine(t, rec, func(r *post.Record) { r.RegisteredProof = "StackedDrgWindow4KiBV1" }), "unknown"},
				{"not JSON", "this is not a record", "not a JSON object"},
				{"JSON array", "[1,2,3]", "not a JSON object"},
				{"numeric proof", strings.Replace(good, `"`+info.Name+`"`, fmt.Sprint(int(info.Proof)), 1), fmt.Sprintf("name the proof, here %q", info.Name)},
				{"unknown field", strings.Replace(good, `{"registered_proof"`, `{"k":0,"registered_proof"`, 1), `unknown field "k"`},
				{"byte over 255", strings.Replace(good, `"prover_id":[`, `"prover_id":[256,`, 1), "prover_id: not an array of byte values"},
				{"negative byte", strings.Replace(good, `"proof":[`, `"proof":[-1,`, 1), "proof: not an array of byte values"},
				{"null byte", strings.Replace(good, `"randomness":[`, `"randomness":[null,`, 1), "randomness: not an array of byte values"},
				{"fraction byte", strings.Replace(good, `"comm_r":[`, `"comm_r":[1.5,`, 1), "comm_r: not an array of byte values"},
				{"33-byte prover id", strings.Replace(good, `"prover_id":[`, `"prover_id":[1,`, 1), "prover_id: 33 bytes, want 32"},
				{"negative sector", strings.Replace(good, `"sector_id":`, `"sector_id":-`, 1), "sector_id -"},
				{"replica field", strings.Replace(good, `"sector_id":`, `"sector":1,"sector_id":`, 1), `unknown field "sector"`},
				{"no replicas", postLine(t, rec, func(r *post.Record) { r.Replicas = []post.Replica{} }), "0 replicas"},
				{"trailing text", good + " x", "not a JSON object"},
				{"huge line", strings.Repeat(" ", maxRecordLine+1), "over the 16 MiB a record may take"},
			}
			if info.Type == proofs.PoStWindow {
				bad = append(bad,
					struct{ name, line, want string }{"unsorted", postLine(t, rec, func(r *post.Record) { r.Replicas[0], r.Replicas[1] = r.Replicas[1], r.Replicas[0] }), "not in increasing sector_id order"},
					struct{ name, line, want string }{"repeated sector", postLine(t, rec, func(r *post.Record) { r.Replicas[1] = r.Replicas[0] }), "twice"})
			} else {
				bad = append(bad, struct{ name, line, want string }{"two replicas", postLine(t, rec, func(r *post.Record) { r.Replicas = append(r.Replicas, r.Replicas[0]) }), "proves 1 replica"})
			}
			var in []string
			for _, b := range bad {
				in = append(in, b.line)
			}
			lines, err = runVP(t, vk, append(in, good))
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d of %d records invalid", len(bad), len(bad)+1)) {
				t.Fatalf("verify-post with bad records: %v", err)
			}
			if len(lines) != len(bad)+1 || !strings.Contains(lines[len(bad)], wantOK) {
				t.Fatalf("%d output lines for %d records, the last %q", len(lines), len(bad)+1, lines[len(lines)-1])
			}
			for i, b := range bad {
				t.Logf("%s: %s", b.name, lines[i])
				if !strings.Contains(lines[i], fmt.Sprintf(":%d: invalid: ", i+1)) || !strings.Contains(lines[i], b.want) {
					t.Errorf("%s: %q, want invalid naming %q", b.name, lines[i], b.want)
				}
			}
			// The same records under --filecoin-params: the scheme's
			// verifier finds the key in a parameter directory holding
			// this circuit's development setup alone.
			params := t.TempDir()
			if _, err := registry.FilecoinDevSetup(context.Background(), info.Name, params); err != nil {
				t.Fatal(err)
			}
			lines, err = runVPWith(t, []string{"--filecoin-params", params}, []string{good, bad[0].line, bad[1].line, bad[3].line, bad[7].line})
			if err == nil || len(lines) != 5 || !strings.Contains(lines[0], wantOK) {
				t.Fatalf("--filecoin-params: %v\n%s", err, strings.Join(lines, "\n"))
			}
			for i, want := range []string{"pairing check failed", "pairing check failed", "partition " + fmt.Sprint(parts-1), "no verifying key"} {
				t.Logf("--filecoin-params: %s", lines[i+1])
				if !strings.Contains(lines[i+1], ": invalid: ") || !strings.Contains(lines[i+1], want) {
					t.Errorf("--filecoin-params: %q, want invalid naming %q", lines[i+1], want)
				}
			}
			// Random damage: whatever a byte becomes, a line is answered.
			v := newPostVerifier(vk, "")
			for i := range 300 {
				line := []byte(good)
				for j := range 1 + i%3 {
					line[(i*7919+j*104729)%len(line)] = byte(i*31 + j)
				}
				if _, err := checkPostLine(context.Background(), v, line, int64(len(line))); err == nil && !bytes.Equal(line, []byte(good)) {
					t.Logf("damage %d left a valid record: %s", i, clip.Head(string(line), 40))
				}
			}
		})
	}
}
