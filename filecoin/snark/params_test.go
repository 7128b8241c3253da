package snark_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/filecoin/snark"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/storage/s3test"
)

// pair2KiB is the name of a 2KiB pair with the given id.
func pair2KiB(id string) string { return snark.PairPrefix + "8-0-0-sha256_hasher-" + id }

func writeParametersJSON(t *testing.T, path string, m map[string]groth.ParameterEntry) {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, b)
}

func wantErr(t *testing.T, what string, err error, is error, subs ...string) {
	t.Helper()
	t.Logf("%s: %v", what, err)
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	if is != nil && !errors.Is(err, is) {
		t.Errorf("%s: error is not %v", what, is)
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%s: error lacks %q", what, s)
		}
	}
}

// Missing parameters are scheme.ErrNoKeys naming what was looked for and
// where; a file whose digest is not parameters.json's is refused; a pair
// that parameters.json does not list is refused outside a development
// setup.
func TestParamsMissingAndBad(t *testing.T) {
	ctx := context.Background()
	const proof = "StackedDrg2KiBV1_1"

	empty := t.TempDir()
	_, err := snark.New(snark.Params{Dir: empty}, nil).Circuit(ctx, proof)
	wantErr(t, "empty directory", err, scheme.ErrNoKeys, empty, "no .params/.vk pair for "+proof, "poseidon_hasher-8-0-0-sha256_hasher-", "found: nothing", "parameters.json (absent)")

	_, err = snark.New(snark.Params{Dir: filepath.Join(empty, "none")}, nil).Circuit(ctx, proof)
	wantErr(t, "no directory", err, scheme.ErrNoKeys, "none")

	// Listed, absent, no remote.
	listed := t.TempDir()
	writeParametersJSON(t, filepath.Join(listed, snark.ParametersJSON), map[string]groth.ParameterEntry{
		pair2KiB("aa") + ".params": {Digest: strings.Repeat("0", 32), SectorSize: 2048},
		pair2KiB("aa") + ".vk":     {Digest: strings.Repeat("1", 32), SectorSize: 2048},
		// Another size's pair is not a candidate.
		snark.PairPrefix + "8-0-0-sha256_hasher-bb.vk":     {Digest: strings.Repeat("2", 32), SectorSize: 8 << 20},
		snark.PairPrefix + "8-0-0-sha256_hasher-bb.params": {Digest: strings.Repeat("3", 32), SectorSize: 8 << 20},
	})
	_, err = snark.New(snark.Params{Dir: listed}, nil).Circuit(ctx, proof)
	wantErr(t, "listed, absent", err, scheme.ErrNoKeys, filepath.Join(listed, pair2KiB("aa")+".vk"), "listed in parameters.json", "no remote storage")

	// Listed with another digest.
	writeTrapdoorVK(t, filepath.Join(listed, pair2KiB("aa")+".vk"), 40)
	writeFile(t, filepath.Join(listed, pair2KiB("aa")+".params"), []byte("params"))
	_, err = snark.New(snark.Params{Dir: listed}, nil).Circuit(ctx, proof)
	wantErr(t, "digest mismatch", err, snark.ErrBadParams, pair2KiB("aa")+".vk", "digest "+fileDigest(t, filepath.Join(listed, pair2KiB("aa")+".vk")), "parameters.json says "+strings.Repeat("1", 32))

	// Not listed: refused unless a development setup.
	unlisted := t.TempDir()
	writeTrapdoorVK(t, filepath.Join(unlisted, pair2KiB("cc")+".vk"), 40)
	writeFile(t, filepath.Join(unlisted, pair2KiB("cc")+".params"), []byte("params"))
	s := snark.New(snark.Params{Dir: unlisted, ShapeDir: t.TempDir()}, nil)
	_, err = s.Circuit(ctx, proof)
	wantErr(t, "unlisted", err, scheme.ErrNoKeys, pair2KiB("cc")+".params", "no entry", "not a development setup")
	// A failed load is not kept: the same scheme looks again.
	writeFile(t, filepath.Join(unlisted, snark.DevMarker), []byte("DEVELOPMENT SETUP\n"))
	_, err = s.Circuit(ctx, proof)
	wantErr(t, "unlisted development setup", err, groth.ErrFormat, pair2KiB("cc")+".params", "DEVELOPMENT SETUP")
	if errors.Is(err, scheme.ErrNoKeys) {
		t.Fatal("a found development pair is ErrNoKeys")
	}
}

// A parameter directory filled from a real S3 remote: parameters.json,
// the development marker and the pair are downloaded into the empty
// directory, each file checked against parameters.json's digest; a remote
// file with another digest is refused and not kept; keys the remote lacks
// are scheme.ErrNoKeys naming them.
func TestParamsFromS3(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	st := srv.Store("params")
	src := t.TempDir()
	vk, params := filepath.Join(src, pair2KiB("dd")+".vk"), filepath.Join(src, pair2KiB("dd")+".params")
	writeTrapdoorVK(t, vk, 40)
	// Not a .params: the load gets past the digests and fails reading it.
	writeFile(t, params, bytes.Repeat([]byte("not a .params file "), 1<<16))
	writeParametersJSON(t, filepath.Join(src, snark.ParametersJSON), map[string]groth.ParameterEntry{
		filepath.Base(vk):     {Digest: fileDigest(t, vk), SectorSize: 2048},
		filepath.Base(params): {Digest: fileDigest(t, params), SectorSize: 2048},
	})
	writeFile(t, filepath.Join(src, snark.DevMarker), []byte("DEVELOPMENT SETUP\n"))
	remote := s3Remote{st: st, tmp: t.TempDir()}

	// Nothing uploaded yet.
	dir := t.TempDir()
	_, err := snark.New(snark.Params{Dir: dir, Remote: remote}, nil).Circuit(ctx, "StackedDrg2KiBV1_1")
	wantErr(t, "empty remote", err, scheme.ErrNoKeys, "remote storage has none")

	for _, f := range []string{snark.ParametersJSON, snark.DevMarker, filepath.Base(vk)} {
		upload(t, st, snark.RemotePrefix+f, filepath.Join(src, f))
	}
	dir = t.TempDir()
	_, err = snark.New(snark.Params{Dir: dir, Remote: remote}, nil).Circuit(ctx, "StackedDrg2KiBV1_1")
	wantErr(t, "no .params in the remote", err, scheme.ErrNoKeys, snark.RemotePrefix+filepath.Base(params))

	// A remote .params that is not the listed one.
	tampered := filepath.Join(t.TempDir(), "tampered")
	writeFile(t, tampered, bytes.Repeat([]byte("not a .params file!"), 1<<16))
	upload(t, st, snark.RemotePrefix+filepath.Base(params), tampered)
	_, err = snark.New(snark.Params{Dir: dir, Remote: remote}, nil).Circuit(ctx, "StackedDrg2KiBV1_1")
	wantErr(t, "tampered remote .params", err, snark.ErrBadParams, "not kept")
	if _, err := os.Stat(filepath.Join(dir, filepath.Base(params))); !os.IsNotExist(err) {
		t.Fatalf("the tampered download was kept: %v", err)
	}

	upload(t, st, snark.RemotePrefix+filepath.Base(params), params)
	_, err = snark.New(snark.Params{Dir: dir, Remote: remote, ShapeDir: t.TempDir()}, nil).Circuit(ctx, "StackedDrg2KiBV1_1")
	wantErr(t, "downloaded", err, nil, "reading params layout", "DEVELOPMENT SETUP")
	if errors.Is(err, scheme.ErrNoKeys) || errors.Is(err, snark.ErrBadParams) {
		t.Fatal("the downloaded pair was not found or not accepted")
	}
	for _, f := range []string{snark.ParametersJSON, snark.DevMarker, filepath.Base(vk), filepath.Base(params)} {
		a, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || !bytes.Equal(a, b) {
			t.Fatalf("%s: downloaded copy differs (%v)", f, err)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 4 {
		t.Fatalf("%d files in the directory, want 4 (no temporary left): %v", len(ents), ents)
	}
}

// The known counts that PartitionBytes reserves by are the circuit's.
func TestKnownCounts(t *testing.T) {
	big := os.Getenv("C2FLOW_CIRCUIT_32GIB") != ""
	for _, info := range proofs.All() {
		if info.Proof > proofs.StackedDrg64GiBV1 || (!big && info.SectorSize > 512<<20) {
			continue // one proof per sector size; 32GiB and 64GiB count in ~40 s each
		}
		t.Run(info.Name, func(t *testing.T) {
			cnt := r1cs.NewCounter()
			if err := circuit.Synthesize(cnt, circuit.ShapeOf(info), nil); err != nil {
				t.Fatal(err)
			}
			st := cnt.Stats()
			got := snark.Counts{Inputs: st.Inputs, Aux: st.Aux, Constraints: st.Constraints + st.Inputs}
			for _, p := range []proofs.RegisteredSealProof{info.Proof, info.Proof + 5, info.Proof + 10} {
				want, err := snark.CountsOf(p.String())
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Fatalf("%v: counted %+v, known %+v", p, got, want)
				}
			}
			b, _ := snark.PartitionBytes(info.Name)
			t.Logf("%s: %+v, PartitionBytes %d (%.2f GiB)", info.Name, got, b, float64(b)/(1<<30))
		})
	}
	if _, err := snark.CountsOf("StackedDrg2KiBV1_2_Feat_NonInteractivePoRep"); err == nil {
		t.Fatal("counts of an unsupported proof")
	}
}

// A development directory with only the 2KiB pair has no 8MiB parameters,
// though the two circuits' verifying keys have as many IC points: an
// 8MiB proof fails at once with scheme.ErrNoKeys naming the sector size
// and what was found, never loading the 2KiB pair (which failed after 3
// loads and 35-67 s).
func TestParamsOtherSectorSizeIsNoKeys(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, snark.DevMarker), []byte("DEVELOPMENT SETUP\n"))
	vk := filepath.Join(dir, pair2KiB("aa")+".vk")
	writeTrapdoorVK(t, vk, 40)
	writeFile(t, filepath.Join(dir, pair2KiB("aa")+".params"), []byte("params"))
	_, fil := digests(t, vk)
	writeParametersJSON(t, filepath.Join(dir, snark.ParametersJSON), map[string]groth.ParameterEntry{
		pair2KiB("aa") + ".params": {Digest: fileDigest(t, filepath.Join(dir, pair2KiB("aa")+".params")), SectorSize: 2048},
		pair2KiB("aa") + ".vk":     {Digest: fil, SectorSize: 2048},
	})
	s := snark.New(snark.Params{Dir: dir, ShapeDir: t.TempDir()}, nil)
	for _, proof := range []string{"StackedDrg8MiBV1_1", "StackedDrg8MiBV1"} {
		_, err := s.Circuit(ctx, proof)
		wantErr(t, proof+" on a 2KiB-only directory", err, scheme.ErrNoKeys, proof, "sector size 8388608", pair2KiB("aa")+".vk (listed for sector size 2048)")
	}
}
