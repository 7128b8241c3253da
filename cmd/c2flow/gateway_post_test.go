package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/c2flow/c2flow/filecoin/post"
	"github.com/c2flow/c2flow/filecoin/post/posttest"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/gateway/cuzkpb"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
)

// curioPoSt is what Curio holds for one PoSt request: the proof type (its
// go-state-types number), the miner, the masked randomness and the
// sectors' vanilla proofs, sorted by sector number.
type curioPoSt struct {
	proof      proofs.RegisteredPoStProof
	miner      uint64
	randomness [32]byte
	sectors    []uint64
	vanilla    [][]byte
}

func newCurioPoSt(t testing.TB, p proofs.RegisteredPoStProof, miner uint64, randomness [32]byte, sectors ...uint64) curioPoSt {
	t.Helper()
	info, err := proofs.LookupPoSt(p)
	if err != nil {
		t.Fatal(err)
	}
	c := curioPoSt{proof: p, miner: miner, randomness: post.MaskRandomness(randomness), sectors: sectors}
	if c.vanilla, err = posttest.Bincodes(info, c.randomness, sectors...); err != nil {
		t.Fatal(err)
	}
	return c
}

// windowRequest builds the request exactly as curio's WindowPoStCuzk does
// (lib/ffi/cuzk_funcs.go): its request_id formats randomness[:8] with %d
// (a byte slice: "[1 2 ...]", spaces included) and the partition index,
// which Curio always passes as 0.
func (c curioPoSt) windowRequest(t testing.TB, partitionIdx int) *cuzkpb.SubmitProofRequest {
	t.Helper()
	info, _ := proofs.LookupPoSt(c.proof)
	return &cuzkpb.SubmitProofRequest{
		RequestId:       fmt.Sprintf("wdpost-%d-%d-%d", c.miner, partitionIdx, c.randomness[:8]),
		ProofKind:       cuzkpb.ProofKind_WINDOW_POST_PARTITION,
		SectorSize:      info.SectorSize,
		RegisteredProof: uint64(c.proof),
		Priority:        cuzkpb.Priority_HIGH,
		VanillaProofs:   c.vanilla,
		MinerId:         c.miner,
		Randomness:      c.randomness[:],
		PartitionIndex:  uint32(partitionIdx),
	}
}

// winningRequest builds the request exactly as curio's WinningPoStCuzk
// does.
func (c curioPoSt) winningRequest(t testing.TB) *cuzkpb.SubmitProofRequest {
	t.Helper()
	info, _ := proofs.LookupPoSt(c.proof)
	return &cuzkpb.SubmitProofRequest{
		RequestId:       fmt.Sprintf("winpost-%d-%x", c.miner, c.randomness[:8]),
		ProofKind:       cuzkpb.ProofKind_WINNING_POST,
		SectorSize:      info.SectorSize,
		RegisteredProof: uint64(c.proof),
		Priority:        cuzkpb.Priority_CRITICAL,
		VanillaProofs:   c.vanilla,
		MinerId:         c.miner,
		Randomness:      c.randomness[:],
	}
}

// verify checks proof against the request's public data (the sectors'
// numbers and comm_r, as the chain knows them) with the PoSt scheme's
// verifier over the published DEVELOPMENT .vk alone; it returns the error.
func (c curioPoSt) verify(t testing.TB, d *devWithCuzk, proof []byte) error {
	t.Helper()
	info, _ := proofs.LookupPoSt(c.proof)
	var reps []post.PublicSector
	for _, b := range c.vanilla {
		v, err := post.DecodeVanilla(b)
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, post.PublicSector{ID: v.SectorID, CommR: v.CommR})
	}
	sc, err := registry.Schemes(registry.Options{FilecoinParams: d.filecoinParamsForProof, FilecoinShapes: t.TempDir()}).For(info.Name)
	if err != nil {
		t.Fatal(err)
	}
	pp, err := scheme.As[interface {
		PartitionPublic(info proofs.PoStProofInfo, proverID, randomness [32]byte, k int, replicas []post.PublicSector) (scheme.Sector, error)
	}](sc, "PoSt public data")
	if err != nil {
		t.Fatal(err)
	}
	pub, err := pp.PartitionPublic(info, proofs.ProverID(c.miner), c.randomness, 0, reps)
	if err != nil {
		t.Fatal(err)
	}
	v, err := sc.Verifier(context.Background(), info.Name)
	if err != nil {
		t.Fatal(err)
	}
	return v.VerifyC2(pub, proof)
}

// A gateway in front of `c2flow dev --cuzk --dev-setup` proves WindowPoSt
// partitions and WinningPoSt itself, as Curio's WindowPoStCuzk and
// WinningPoStCuzk send them (no --forward): two partitions of one deadline
// sent at once with the same request_id each get their own proof, which
// verifies for its own sectors and not the other's; a winning proof
// verifies; a partition with a corrupt vanilla proof fails alone, naming
// the sector, with nothing stored; a partition sent again is the same job
// and is not proved again. A PoSt whose deadline passes while it waits
// fails, named, instead of being proved late.
func TestGatewayProvesPoSt(t *testing.T) {
	if testing.Short() {
		t.Skip("proves Filecoin 2KiB PoSt through c2flow dev")
	}
	d := startDevCuzk(t, "--dev-setup")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	curio := newCurioClient(t, d.cuzk)
	const miner = 4000
	var r [32]byte
	for i := range r {
		r[i] = byte(7 * i)
	}
	p1 := newCurioPoSt(t, proofs.StackedDrgWindow2KiBV1_2, miner, r, 11, 12)
	p2 := newCurioPoSt(t, proofs.StackedDrgWindow2KiBV1_2, miner, r, 13, 14)
	win := newCurioPoSt(t, proofs.StackedDrgWinning2KiBV1, miner, r, 15)
	bad := newCurioPoSt(t, proofs.StackedDrgWindow2KiBV1_2, miner, r, 16, 17)
	v, err := post.DecodeVanilla(bad.vanilla[1])
	if err != nil {
		t.Fatal(err)
	}
	v.Sectors[0].Openings[3].Leaf[0] ^= 1
	bad.vanilla[1] = v.Bincode()
	if p1.windowRequest(t, 0).RequestId != p2.windowRequest(t, 0).RequestId || !strings.Contains(p1.windowRequest(t, 0).RequestId, " ") {
		t.Fatalf("Curio's request ids: %q, %q", p1.windowRequest(t, 0).RequestId, p2.windowRequest(t, 0).RequestId)
	}

	// A hostile client holds 8 Prove streams open, headers only, while
	// Curio's requests arrive: they hold no request memory (before, the
	// first held the budget for 2 minutes and every request was refused
	// after 30 s), and each is dropped at the first-byte deadline.
	idle := openIdleStreams(t, ctx, d.cuzk, 8)

	var wg sync.WaitGroup
	var r1, r2, rw *cuzkpb.AwaitProofResponse
	var e1, e2, ew, eb error
	wg.Go(func() { r1, e1 = curio.Prove(ctx, p1.windowRequest(t, 0)) })
	wg.Go(func() { r2, e2 = curio.Prove(ctx, p2.windowRequest(t, 0)) })
	wg.Go(func() { rw, ew = curio.Prove(ctx, win.winningRequest(t)) })
	wg.Go(func() { _, eb = curio.Prove(ctx, bad.windowRequest(t, 0)) })
	wg.Wait()
	if e1 != nil || e2 != nil || ew != nil {
		t.Fatalf("window 1: %v; window 2: %v; winning: %v\n%s", e1, e2, ew, d.proc.output())
	}
	for range 8 {
		select {
		case err := <-idle:
			if status.Code(err) != codes.DeadlineExceeded || !strings.Contains(err.Error(), "not begun") {
				t.Errorf("a headers-only stream: %v, want DeadlineExceeded at the first-byte deadline", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("a headers-only stream still open a minute after the requests were proved")
		}
	}
	if !errors.Is(eb, errCuzkFailed) || !strings.Contains(eb.Error(), "sector 17") {
		t.Errorf("corrupt vanilla proof: %v, want a FAILED result naming sector 17", eb)
	}
	prover := proofs.ProverID(miner)
	if keys, err := d.store.List(ctx, "c1/"+hex.EncodeToString(prover[:])+"/16/"); err != nil || len(keys) != 0 {
		t.Errorf("the corrupt partition was stored: %v %v", keys, err)
	}
	if r1.JobId == r2.JobId || bytes.Equal(r1.Proof, r2.Proof) {
		t.Fatalf("two partitions with one request_id share a job or a proof: %s, %s", r1.JobId, r2.JobId)
	}
	for _, c := range []struct {
		name string
		p    curioPoSt
		res  *cuzkpb.AwaitProofResponse
	}{{"window 1", p1, r1}, {"window 2", p2, r2}, {"winning", win, rw}} {
		if len(c.res.Proof) != 192 || c.res.GpuComputeMs == 0 {
			t.Errorf("%s: %d-byte proof, gpu %d ms", c.name, len(c.res.Proof), c.res.GpuComputeMs)
		}
		if err := c.p.verify(t, d, c.res.Proof); err != nil {
			t.Errorf("%s: the proof does not verify for its sectors: %v", c.name, err)
		}
	}
	if p2.verify(t, d, r1.Proof) == nil || p1.verify(t, d, r2.Proof) == nil {
		t.Error("a partition's proof verifies for the other partition's sectors")
	}
	syn := d.syntheses(t)
	if syn != 3 {
		t.Errorf("two window partitions and a winning proof took %d syntheses; the dev log's lines of the jobs' retries:\n%s", syn, grepLines(d.proc.output(), "lost", "etry", "again", "rror"))
	}

	// The first partition again: the same job, the stored proof.
	again, err := curio.Prove(ctx, p1.windowRequest(t, 0))
	if err != nil || again.JobId != r1.JobId || !bytes.Equal(again.Proof, r1.Proof) {
		t.Fatalf("partition 1 sent again: %v, job %s (want %s)", err, again.GetJobId(), r1.JobId)
	}
	if n := d.syntheses(t); n != syn {
		t.Errorf("partition 1 sent again was synthesized again (%d -> %d)", syn, n)
	}

	// A winning proof whose deadline (the call's) passes before it can be
	// proved: the call ends, and the job fails naming its deadline rather
	// than being proved late.
	var r2nd [32]byte
	copy(r2nd[:], "a later epoch's randomness")
	late := newCurioPoSt(t, proofs.StackedDrgWinning2KiBV1, miner, r2nd, 15)
	short := *curio
	short.proveTimeout = 1500 * time.Millisecond
	if _, err := short.Prove(ctx, late.winningRequest(t)); err == nil || !strings.Contains(err.Error(), "DeadlineExceeded") {
		t.Fatalf("a 1.5 s winning proof: %v, want the call's deadline", err)
	}
	lr := late.winningRequest(t)
	a, err := registry.Schemes(registry.Options{}).Admit(ctx, scheme.Request{Kind: scheme.KindWinningPoSt, RegisteredProof: lr.RegisteredProof,
		MinerID: lr.MinerId, SectorSize: lr.SectorSize, Vanilla: lr.VanillaProofs, Randomness: lr.Randomness})
	if err != nil {
		t.Fatal(err)
	}
	jobID := scheme.KindWinningPoSt + "/" + a.Ref.Proof + "/" + a.Ref.Identity()
	res, err := curio.svc.AwaitProof(ctx, &cuzkpb.AwaitProofRequest{JobId: jobID, TimeoutMs: 60_000})
	if err != nil || res.Status != cuzkpb.AwaitProofResponse_FAILED || !strings.Contains(res.ErrorMessage, "deadline passed") {
		t.Errorf("the late winning proof's job: %v %v, want FAILED naming its deadline", res, err)
	}
}

// grepLines are the lines of out holding any of words.
func grepLines(out string, words ...string) string {
	var b strings.Builder
	for _, l := range strings.Split(out, "\n") {
		for _, w := range words {
			if strings.Contains(l, w) {
				b.WriteString(l[:min(len(l), 400)] + "\n")
				break
			}
		}
	}
	return b.String()
}

// openIdleStreams opens n Prove streams to addr on a connection of their
// own that send their headers and nothing else, as a hostile client; each
// one's end (the gateway's status) arrives on the channel.
func openIdleStreams(t *testing.T, ctx context.Context, addr string, n int) <-chan error {
	t.Helper()
	conn, err := grpc.NewClient("dns:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ends := make(chan error, n)
	for range n {
		st, err := conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, cuzkpb.ProvingEngine_Prove_FullMethodName)
		if err != nil {
			t.Fatal(err)
		}
		go func() { ends <- st.RecvMsg(&cuzkpb.ProveResponse{}) }()
	}
	return ends
}

// A production-size proof through the whole pipeline: Curio's client
// sends a 32GiB WinningPoSt (registered proof 3, sector size 34359738368;
// its vanilla proof from a sparse replica) to `c2flow dev --cuzk
// --dev-setup --dev-setup-proofs StackedDrgWinning32GiBV1`, and gets a
// 192-byte proof that Filecoin's verification accepts under the published
// development .vk; sent again, it is the same job and is answered from
// the stored proof (issue 56: nothing above 2KiB had been proved end to
// end). The times, submit to result, are logged.
func TestGatewayProvesWinning32GiB(t *testing.T) {
	if testing.Short() {
		t.Skip("proves a 32GiB WinningPoSt through c2flow dev")
	}
	d := startDevCuzk(t, "--dev-setup", "--dev-setup-proofs", "StackedDrgWinning32GiBV1")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	curio := newCurioClient(t, d.cuzk)
	var r [32]byte
	for i := range r {
		r[i] = byte(3 * i)
	}
	win := newCurioPoSt(t, proofs.StackedDrgWinning32GiBV1, 5000, r, 42)
	req := win.winningRequest(t)
	if req.RegisteredProof != 3 || req.SectorSize != 32<<30 {
		t.Fatalf("registered proof %d, sector size %d", req.RegisteredProof, req.SectorSize)
	}
	t0 := time.Now()
	res, err := curio.Prove(ctx, req)
	if err != nil {
		t.Fatalf("32GiB WinningPoSt: %v\n%s", err, d.proc.output())
	}
	cold := time.Since(t0)
	if len(res.Proof) != 192 {
		t.Fatalf("a %d-byte proof, want 192", len(res.Proof))
	}
	if err := win.verify(t, d, res.Proof); err != nil {
		t.Fatalf("the 32GiB WinningPoSt proof does not verify: %v", err)
	}
	bad := append([]byte(nil), res.Proof...)
	bad[5] ^= 1
	if win.verify(t, d, bad) == nil {
		t.Fatal("a 32GiB WinningPoSt proof with a flipped byte verifies")
	}
	// Warm: another randomness (a new job) on the same worker, its keys
	// and system loaded.
	r[0] ^= 0xff
	again := newCurioPoSt(t, proofs.StackedDrgWinning32GiBV1, 5000, r, 42)
	t1 := time.Now()
	res2, err := curio.Prove(ctx, again.winningRequest(t))
	if err != nil {
		t.Fatalf("32GiB WinningPoSt, warm: %v", err)
	}
	warm := time.Since(t1)
	if err := again.verify(t, d, res2.Proof); err != nil {
		t.Fatalf("the warm 32GiB WinningPoSt proof does not verify: %v", err)
	}
	t.Logf("32GiB WinningPoSt through the gateway, submit to result: first %v (keys loaded on first use), warm %v (synthesis %d ms, device phase %d ms, total %d ms)",
		cold.Round(time.Millisecond), warm.Round(time.Millisecond), res2.SynthesisMs, res2.GpuComputeMs, res2.TotalMs)
}

// A 512MiB WindowPoSt partition (2 sectors, 85,489 constraints), its
// vanilla proofs opened in sparse 512MiB replicas, sent by Curio's client
// to c2flow dev as Curio builds the request, gets a 192-byte proof that
// Filecoin's verification accepts under the development .vk; a flipped
// byte does not verify (issue 56: the largest WindowPoSt whose setup fits
// this machine).
func TestGatewayProvesWindow512MiB(t *testing.T) {
	if testing.Short() {
		t.Skip("proves a 512MiB WindowPoSt partition through c2flow dev")
	}
	d := startDevCuzk(t, "--dev-setup", "--dev-setup-proofs", "StackedDrgWindow512MiBV1_2")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	curio := newCurioClient(t, d.cuzk)
	var r [32]byte
	for i := range r {
		r[i] = byte(7 * i)
	}
	w := newCurioPoSt(t, proofs.StackedDrgWindow512MiBV1_2, 6000, r, 11, 12)
	req := w.windowRequest(t, 0)
	if req.SectorSize != 512<<20 {
		t.Fatalf("sector size %d", req.SectorSize)
	}
	t0 := time.Now()
	res, err := curio.Prove(ctx, req)
	if err != nil {
		t.Fatalf("512MiB WindowPoSt: %v\n%s", err, d.proc.output())
	}
	if len(res.Proof) != 192 {
		t.Fatalf("a %d-byte proof, want 192", len(res.Proof))
	}
	if err := w.verify(t, d, res.Proof); err != nil {
		t.Fatalf("the 512MiB WindowPoSt proof does not verify: %v", err)
	}
	bad := append([]byte(nil), res.Proof...)
	bad[7] ^= 1
	if w.verify(t, d, bad) == nil {
		t.Fatal("a 512MiB WindowPoSt proof with a flipped byte verifies")
	}
	t.Logf("512MiB WindowPoSt partition through the gateway, submit to result %v (keys loaded on first use; synthesis %d ms, device phase %d ms)",
		time.Since(t0).Round(time.Millisecond), res.SynthesisMs, res.GpuComputeMs)
}
