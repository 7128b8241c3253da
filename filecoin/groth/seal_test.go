package groth

import (
	"bytes"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/internal/upstreamdata"
)

// upstreamRecords returns the seal regression records of rust-fil-proofs
// (filecoin-proofs/tests/seal_regression_records-v16.json, committed under
// testdata/rust-fil-proofs with -v18.json), parsed, with their raw lines.
func upstreamRecords(t testing.TB) (recs []*SealRecord, lines [][]byte) {
	t.Helper()
	files := []upstreamdata.File{upstreamdata.SealRecordsV16}
	if _, ok := upstreamdata.ReadOptional(t, upstreamdata.SealRecordsV18); ok {
		files = append(files, upstreamdata.SealRecordsV18)
	} else {
		t.Logf("%s not read: set %s to a rust-fil-proofs checkout to include it", upstreamdata.SealRecordsV18.Path, upstreamdata.FilProofs.Env)
	}
	for _, f := range files {
		data := upstreamdata.Read(t, f)
		for i, line := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			r, err := ParseSealRecord(line)
			if err != nil {
				t.Fatalf("%s line %d: %v", f.Path, i+1, err)
			}
			recs = append(recs, r)
			lines = append(lines, line)
		}
	}
	return recs, lines
}

// Every upstream record parses; its public inputs follow from its public
// data (40 per partition with ONE for 2KiB, 8MiB and 512MiB; 328 for
// 32GiB and 64GiB, as FILECOIN.md and storage-proofs-porep's circuit
// count them: 3 + 18 per challenge); its proof bytes hold one proof per
// partition whose points are valid (curve and subgroup) and re-encode to
// the same bytes. Non-interactive records (aggregated proofs) are refused
// as unsupported. Counts of upstream records per kind are pinned (v16:
// 124 2KiB records, 31 per API version and feature set).
func TestUpstreamSealRecords(t *testing.T) {
	recs, lines := upstreamRecords(t)
	count := map[string]int{}
	t0 := time.Now()
	for i, r := range recs {
		key := r.Config.String()
		count[key]++
		if r.Config.SectorSize == 2048 {
			if back, err := ParseSealRecord(mustJSON(t, r)); err != nil || !recordsEqual(back, r) {
				t.Fatalf("record %d: MarshalJSON does not round-trip: %v", i, err)
			}
		}
		inputs, err := r.PublicInputs()
		if r.Config.Features.Has(proofs.FeatureNonInteractivePoRep) {
			if !errors.Is(err, ErrUnsupported) {
				t.Fatalf("record %d (%v): %v, want ErrUnsupported", i, r.Config, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("record %d (%v): %v\n%s", i, r.Config, err, lines[i])
		}
		want := 40
		if r.Config.SectorSize >= 32<<30 {
			want = 328
		}
		if len(inputs) != r.Config.Partitions {
			t.Fatalf("record %d: %d partitions of inputs, config says %d", i, len(inputs), r.Config.Partitions)
		}
		for k := range inputs {
			if len(inputs[k])+1 != want {
				t.Fatalf("record %d (%v) partition %d: %d public inputs with ONE, want %d", i, r.Config, k, len(inputs[k])+1, want)
			}
		}
		ps, err := DecodeProofs(r.Proof, r.Config.Partitions)
		if err != nil {
			t.Fatalf("record %d: upstream proof does not decode: %v", i, err)
		}
		if !bytes.Equal(EncodeProofs(ps), r.Proof) {
			t.Fatalf("record %d: proof re-encodes differently", i)
		}
	}
	t.Logf("%d records in %v: %v", len(recs), time.Since(t0), count)
	if n := count["2048 bytes, 1 partition(s), api 1.0.0"] + count["2048 bytes, 1 partition(s), api 1.1.0"] +
		count["2048 bytes, 1 partition(s), api 1.2.0"] + count["2048 bytes, 1 partition(s), api 1.2.0, synthetic-porep"]; n != 124 {
		t.Fatalf("%d 2KiB records, want 124", n)
	}
}

func mustJSON(t testing.TB, r *SealRecord) []byte {
	t.Helper()
	b, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func recordsEqual(a, b *SealRecord) bool {
	return a.Config == b.Config && a.CommR == b.CommR && a.CommD == b.CommD && a.ProverID == b.ProverID &&
		a.SectorID == b.SectorID && a.Ticket == b.Ticket && a.Seed == b.Seed && bytes.Equal(a.Proof, b.Proof)
}

// Verification of upstream 2KiB records with a key that is not Filecoin's
// (here a trapdoor key of the right size: a development key of the same
// circuit behaves alike) reports an invalid proof, not a crash; with a key
// of another size it reports the mismatch. With simulated proofs of the
// same public data under the trapdoor key, each record verifies, and a
// flipped bit, another seed, another sector id, another ticket, another
// porep_id or another API version is rejected.
func TestVerifySealRecords(t *testing.T) {
	recs, _ := upstreamRecords(t)
	key, err := NewTrapdoorKey(40, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pvk := key.VK.Prepare()
	small, err := NewTrapdoorKey(12, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i, r := range recs {
		if r.Config.SectorSize != 2048 {
			continue
		}
		n++
		if err := VerifySeal(pvk, r); !errors.Is(err, ErrInvalidProof) {
			t.Fatalf("record %d with a foreign key: %v, want ErrInvalidProof", i, err)
		}
		if err := VerifySeal(small.VK.Prepare(), r); !errors.Is(err, ErrMismatch) {
			t.Fatalf("record %d with a key of another size: %v, want ErrMismatch", i, err)
		}
		if i%8 != 0 {
			continue
		}
		sim := *r
		inputs, err := r.PublicInputs()
		if err != nil {
			t.Fatal(err)
		}
		p, err := key.Simulate(inputs[0])
		if err != nil {
			t.Fatal(err)
		}
		b := p.Bytes()
		sim.Proof = b[:]
		if err := VerifySeal(pvk, &sim); err != nil {
			t.Fatalf("record %d (%v) with a simulated proof: %v", i, r.Config, err)
		}
		for name, mut := range map[string]func(s *SealRecord){
			"flipped bit":    func(s *SealRecord) { s.Proof = bytes.Clone(s.Proof); s.Proof[100] ^= 4 },
			"other seed":     func(s *SealRecord) { s.Seed[0] ^= 1 },
			"other sector":   func(s *SealRecord) { s.SectorID++ },
			"other ticket":   func(s *SealRecord) { s.Ticket[5] ^= 1 },
			"other porep_id": func(s *SealRecord) { s.Config.PoRepID[0] ^= 1 },
			"other api": func(s *SealRecord) {
				s.Config.APIVersion = map[proofs.APIVersion]proofs.APIVersion{
					proofs.APIVersion1_0_0: proofs.APIVersion1_1_0, proofs.APIVersion1_1_0: proofs.APIVersion1_0_0,
					proofs.APIVersion1_2_0: proofs.APIVersion1_0_0}[s.Config.APIVersion]
			},
			"truncated": func(s *SealRecord) { s.Proof = s.Proof[:191] },
		} {
			bad := sim
			mut(&bad)
			if err := VerifySeal(pvk, &bad); err == nil {
				t.Fatalf("record %d, %s: accepted", i, name)
			}
		}
	}
	if n != 124 {
		t.Fatalf("%d 2KiB records, want 124", n)
	}
}

// Bad input is an error, never a panic: random proof bytes, truncated and
// altered record lines, values out of range.
func TestBadInputs(t *testing.T) {
	for range 300 {
		if _, err := DecodeProof(randBytes(t, ProofSize)); err == nil {
			t.Fatal("random bytes decoded as a proof")
		}
	}
	if _, err := DecodeProofs(make([]byte, 2*ProofSize), 3); !errors.Is(err, ErrFormat) {
		t.Fatalf("wrong proof length: %v", err)
	}
	_, lines := upstreamRecords(t)
	line := lines[0]
	for cut := 0; cut < len(line); cut += 97 {
		if _, err := ParseSealRecord(line[:cut]); err == nil {
			t.Fatalf("record truncated to %d bytes parsed", cut)
		}
	}
	for _, bad := range []string{
		`{"porep_config":{"sector_size":2048,"partitions":1,"porep_id":[0],"api_version":"V1_0_0","api_features":[]}}`,
		string(bytes.Replace(line, []byte(`"api_version":"V1_0_0"`), []byte(`"api_version":"V9_9_9"`), 1)),
		string(bytes.Replace(line, []byte(`"api_features":[]`), []byte(`"api_features":["Bogus"]`), 1)),
		string(bytes.Replace(line, []byte(`"seed":[`), []byte(`"seed":[300,`), 1)),
		string(bytes.Replace(line, []byte(`"sector_id":`), []byte(`"extra":1,"sector_id":`), 1)),
		string(line) + `{}`,
	} {
		if _, err := ParseSealRecord([]byte(bad)); !errors.Is(err, ErrFormat) {
			t.Fatalf("bad record accepted or wrong error %v:\n%.200s", err, bad)
		}
	}
	r, err := ParseSealRecord(line)
	if err != nil {
		t.Fatal(err)
	}
	key, err := NewTrapdoorKey(40, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(s *SealRecord){
		"zero comm_d":      func(s *SealRecord) { s.CommD = [32]byte{} },
		"comm_r above r":   func(s *SealRecord) { s.CommR[31] = 0xff },
		"no partitions":    func(s *SealRecord) { s.Config.Partitions = 0 },
		"unknown size":     func(s *SealRecord) { s.Config.SectorSize = 4096 },
		"too many per par": func(s *SealRecord) { s.Config.SectorSize, s.Config.Partitions = 32<<30, 1 },
	} {
		c := *r
		mut(&c)
		if err := VerifySeal(key.VK.Prepare(), &c); !errors.Is(err, ErrFormat) {
			t.Fatalf("%s: %v, want ErrFormat", name, err)
		}
	}
}
