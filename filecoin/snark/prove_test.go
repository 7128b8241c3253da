package snark_test

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/fctest"
	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/paramfiles/paramtest"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/filecoin/snark"
	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme"
)

// A 2KiB sector proved through the scheme as the pipeline's workers do:
// the development setup written by DevSetup (made on first use, cached),
// the C1 decoded against its identity and verified, the circuit loaded
// once for concurrent callers, partition 0 synthesized (its Solution the
// size PartitionBytes reserves), proved by the split prover, verified,
// encoded, assembled and the C2 verified with the Filecoin .vk (and as a
// seal record, as verify-seal does); another sector's public inputs, a
// tampered byte and a wrong length are refused. Every log line and error
// says DEVELOPMENT SETUP.
func TestProve2KiB(t *testing.T) {
	const proof = "StackedDrg2KiBV1_1"
	cache := fctest.Setups()
	ctx := context.Background()
	// slog's handler serializes its writes; logs is read once all is done.
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	dir := fctest.DevParams()
	t0 := time.Now()
	files, err := snark.DevSetup(ctx, proof, dir, cache, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("DevSetup in %v: %s", time.Since(t0), files.Params)

	s := snark.New(snark.Params{Dir: dir, ShapeDir: t.TempDir()}, log)
	sealed := seal2KiB(t, proofs.StackedDrg2KiBV1_1, 7)
	raw, err := c1.Marshal(sealed.C1)
	if err != nil {
		t.Fatal(err)
	}
	sec, err := s.Decode(raw, job.Ref{ProverID: seal.Hex32(testProver), SectorID: 7, Proof: proof})
	if err != nil {
		t.Fatal(err)
	}
	if err := sec.Verify(ctx); err != nil {
		t.Fatal(err)
	}

	// Concurrent callers, for two proofs of the 2KiB shape, share one load.
	t0 = time.Now()
	names := []string{proof, proof, "StackedDrg2KiBV1"}
	circs := make([]scheme.Circuit, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Go(func() { circs[i], errs[i] = s.Circuit(ctx, n) })
	}
	wg.Wait()
	for i := range names {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if circs[i].Prover().Keys != circs[0].Prover().Keys {
			t.Fatalf("%s: loaded twice", names[i])
		}
	}
	t.Logf("circuit loaded in %v", time.Since(t0))
	circ := circs[0].(*snark.Circuit)
	if !circ.Dev() || circ.Files() != files {
		t.Fatalf("circuit: dev %v, files %+v", circ.Dev(), circ.Files())
	}
	d := circ.Digests()
	vkSHA, vkFil := paramtest.Digests(t, files.VK)
	pSHA, pFil := paramtest.Digests(t, files.Params)
	if d.VK != vkSHA || d.PK != pSHA || len(d.Circuit) != 64 {
		t.Fatalf("digests %+v", d)
	}
	pj, err := os.ReadFile(filepath.Join(dir, snark.ParametersJSON))
	if err != nil {
		t.Fatal(err)
	}
	m, err := groth.ParseParametersJSON(pj)
	if err != nil {
		t.Fatal(err)
	}
	if vkd, pd := circ.ParamDigests(); vkd != m[filepath.Base(files.VK)].Digest || pd != m[filepath.Base(files.Params)].Digest || vkd != vkFil || pd != pFil {
		t.Fatalf("parameters.json digests %s %s, listed %+v", vkd, pd, m)
	}

	// Synthesis: the Solution holds its packed assignment, within what
	// PartitionBytes reserves, and the synthesis retains nothing else.
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	sol, err := circ.Synthesize(ctx, sec, 0)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	pb, sb := circ.PartitionBytes(), sol.Bytes()
	retained := int64(m1.HeapAlloc) - int64(m0.HeapAlloc)
	zeros, ones, others := sol.W.Counts()
	t.Logf("synthesis %v: Solution.Bytes %d (%d wires: %d zeros, %d ones, %d field elements; %.1f%% 0 or 1), PartitionBytes %d, heap retained %d (%+d beyond the Solution), allocated %d",
		sol.SynthTime, sb, sol.W.Len(), zeros, ones, others, 100*float64(zeros+ones)/float64(sol.W.Len()), pb, retained, retained-sb, m1.TotalAlloc-m0.TotalAlloc)
	if sb > pb {
		t.Fatalf("Solution.Bytes %d beyond PartitionBytes %d", sb, pb)
	}
	if retained > sb+snark.PartitionOverhead {
		t.Fatalf("synthesis retains %d bytes, the Solution holds %d", retained, sb)
	}
	if known, _ := snark.PartitionBytes(proof); known != pb {
		t.Fatalf("PartitionBytes(%s) %d, the loaded circuit's %d", proof, known, pb)
	}
	if sol.Partition != hex.EncodeToString(testProver[:])+"/7/0" {
		t.Fatalf("partition id %q", sol.Partition)
	}
	if _, err := circ.Synthesize(ctx, sec, 1); err == nil || !strings.Contains(err.Error(), "7/1") || !strings.Contains(err.Error(), "DEVELOPMENT SETUP") {
		t.Fatalf("partition 1 of 1: %v", err)
	}

	slots, err := gpu.CPUSlots(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	t0 = time.Now()
	pr := circ.Prover()
	partial, err := pr.Start(ctx, slots, sol)
	if err != nil {
		t.Fatal(err)
	}
	sol = nil
	gproof, _, err := pr.Finalize(ctx, partial)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("proved in %v", time.Since(t0))
	if err := circ.VerifyPartition(sec, 0, gproof); err != nil {
		t.Fatal(err)
	}
	other, err := s.Decode(mustMarshal(t, seal2KiB(t, proofs.StackedDrg2KiBV1_1, 8).C1), job.Ref{ProverID: seal.Hex32(testProver), SectorID: 8})
	if err != nil {
		t.Fatal(err)
	}
	paramtest.WantErr(t, "another sector's inputs", circ.VerifyPartition(other, 0, gproof), nil, "8/0", "DEVELOPMENT SETUP")

	enc, err := circ.EncodePartition(gproof)
	if err != nil {
		t.Fatal(err)
	}
	if len(enc) != groth.ProofSize {
		t.Fatalf("encoded partition of %d bytes", len(enc))
	}
	c2b, err := circ.Assemble(sec, [][]byte{enc})
	if err != nil {
		t.Fatal(err)
	}
	if err := circ.VerifyC2(sec, c2b); err != nil {
		t.Fatal(err)
	}
	// As Filecoin's verifier sees it: a seal record under the .vk.
	vk, err := groth.ReadVerifyingKeyFile(files.VK)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := proofs.ByName(proof)
	pub := sealed.Public
	rec := &groth.SealRecord{
		Config: groth.PoRepConfig{SectorSize: info.SectorSize, Partitions: info.Partitions, PoRepID: info.PoRepID, APIVersion: info.APIVersion, Features: info.Features},
		CommR:  pub.CommR, CommD: pub.CommD, ProverID: pub.ProverID, SectorID: pub.SectorID, Ticket: pub.Ticket, Seed: pub.Seed, Proof: c2b,
	}
	if err := groth.VerifySeal(vk.Prepare(), rec); err != nil {
		t.Fatalf("seal record: %v", err)
	}
	// gnark's verifier accepts it under the loaded keys; a verifying key of
	// another setup (the same 40 inputs, another trapdoor) refuses it.
	pub0, err := sec.(*snark.Sector).PublicInputs(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := groth16bls.Verify(gproof, circ.Prover().Keys.VK, pub0); err != nil {
		t.Fatalf("gnark's verifier: %v", err)
	}
	otherSetup, err := groth.NewTrapdoorKey(len(vk.IC), crand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	gp, err := groth.ProofFromGnark(gproof)
	if err != nil {
		t.Fatal(err)
	}
	if err := otherSetup.VK.Prepare().Verify(&gp, pub0); !errors.Is(err, groth.ErrInvalidProof) {
		t.Fatalf("proof under another setup's verifying key: %v, want ErrInvalidProof", err)
	}

	paramtest.WantErr(t, "C2 against another sector", circ.VerifyC2(other, c2b), groth.ErrInvalidProof, "sector 8", "DEVELOPMENT SETUP")
	for _, i := range []int{0, 50, 100, 191} {
		bad := bytes.Clone(c2b)
		bad[i] ^= 0x01
		paramtest.WantErr(t, "tampered byte", circ.VerifyC2(sec, bad), nil, "sector 7", "DEVELOPMENT SETUP")
	}
	paramtest.WantErr(t, "short C2", circ.VerifyC2(sec, c2b[:191]), nil, "191 bytes", "192")
	paramtest.WantErr(t, "long C2", circ.VerifyC2(sec, append(bytes.Clone(c2b), 0)), nil, "193 bytes")
	paramtest.WantErr(t, "assemble garbage", func() error { _, err := circ.Assemble(sec, [][]byte{make([]byte, 192)}); return err }(), nil, "partition "+hex.EncodeToString(testProver[:])+"/7/0")
	paramtest.WantErr(t, "assemble two", func() error { _, err := circ.Assemble(sec, [][]byte{enc, enc}); return err }(), nil, "2 partition proofs")

	// The loaded circuit is this process's verifier; a process without it
	// verifies with the .vk alone, downloading nothing else.
	if v, err := s.Verifier(ctx, proof); err != nil || v.Digests() != d {
		t.Fatalf("verifier where the circuit is loaded: %v, digests %+v, want the circuit's %+v", err, v.Digests(), d)
	}
	remote := &dirRemote{dir: dir}
	vs := snark.New(snark.Params{Dir: t.TempDir(), Remote: remote, ShapeDir: t.TempDir()}, log)
	v, err := vs.Verifier(ctx, proof)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Digests(); got.VK != vkSHA || got.PK != "" {
		t.Fatalf("verifying-key-only digests %+v: want the .vk's SHA-256 and no PK digest", got)
	}
	if err := v.VerifyC2(sec, c2b); err != nil {
		t.Fatalf("verifying key alone: %v", err)
	}
	bad := bytes.Clone(c2b)
	bad[100] ^= 0x01
	paramtest.WantErr(t, "tampered byte, verifying key alone", v.VerifyC2(sec, bad), nil, "sector 7", "DEVELOPMENT SETUP")
	if got, err := v.(*snark.Verifier).Assemble(sec, [][]byte{enc}); err != nil || !bytes.Equal(got, c2b) {
		t.Fatalf("assemble with the verifying key alone: %v", err)
	}
	for _, k := range remote.opened() {
		if strings.HasSuffix(k, ".params") {
			t.Fatalf("the verifier downloaded %s (opened %v)", k, remote.opened())
		}
	}
	if !slices.Contains(remote.opened(), snark.RemotePrefix+filepath.Base(files.VK)) {
		t.Fatalf("the verifier did not download the .vk: opened %v", remote.opened())
	}

	n := 0
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		n++
		// The circuit is recorded once per box before any parameters
		// are known: that line is about no parameters.
		if strings.Contains(l, `msg="circuit recorded and saved`) {
			continue
		}
		if !strings.Contains(l, "DEVELOPMENT SETUP") {
			t.Errorf("log line without DEVELOPMENT SETUP: %s", l)
		}
	}
	t.Logf("%d log lines, e.g. %s", n, strings.SplitN(logs.String(), "\n", 2)[0])
}

func mustMarshal(t *testing.T, c *c1.SealCommitPhase1Output) []byte {
	t.Helper()
	b, err := c1.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dirRemote serves a directory as a snark.Remote and records what was
// opened.
type dirRemote struct {
	dir  string
	mu   sync.Mutex
	keys []string
}

func (r *dirRemote) Open(_ context.Context, key string) (io.ReadCloser, error) {
	r.mu.Lock()
	r.keys = append(r.keys, key)
	r.mu.Unlock()
	return os.Open(filepath.Join(r.dir, strings.TrimPrefix(key, snark.RemotePrefix)))
}

func (r *dirRemote) opened() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.keys)
}
