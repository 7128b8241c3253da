package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/clitest"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/pipeline"
	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/commcid"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/filecoin/update"
	"github.com/c2flow/c2flow/gateway/cuzkpb"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/scheme/testscheme/params/paramstest"
	"github.com/c2flow/c2flow/stack"
	"github.com/c2flow/c2flow/storage"
)

// envRunC2flow makes the test binary run `c2flow ARGS...` (ARGS joined by
// \x1f) instead of the tests: the tests start c2flow processes they can
// kill, from the code under test.
const envRunC2flow = "C2FLOW_TEST_RUN_C2FLOW"

// c2flowProc is a c2flow process the test started.
type c2flowProc struct {
	t      testing.TB
	cmd    *exec.Cmd
	out    string // its combined output's file
	waited chan error
}

// startC2flow runs `c2flow args...` as a child process, its output in a
// file of dir, until the test ends (SIGINT, then a kill).
func startC2flow(t testing.TB, dir, name string, args ...string) *c2flowProc {
	t.Helper()
	return startC2flowIn(t, "", dir, name, args...)
}

// startC2flowIn is startC2flow with the process's working directory cwd
// ("": the test's).
func startC2flowIn(t testing.TB, cwd, dir, name string, args ...string) *c2flowProc {
	t.Helper()
	out := filepath.Join(dir, name+".out")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envRunC2flow+"="+strings.Join(args, "\x1f"))
	cmd.Stdout, cmd.Stderr, cmd.Dir = f, f, cwd
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	p := &c2flowProc{t: t, cmd: cmd, out: out, waited: make(chan error, 1)}
	go func() { p.waited <- cmd.Wait() }()
	t.Cleanup(p.stop)
	return p
}

// output is what the process printed so far.
func (p *c2flowProc) output() string {
	b, _ := os.ReadFile(p.out)
	return string(b)
}

// waitFor waits until the output has a line holding text and returns it;
// the process ending first fails the test.
func (p *c2flowProc) waitFor(text string, within time.Duration) string {
	p.t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		sc := bufio.NewScanner(strings.NewReader(p.output()))
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); strings.Contains(l, text) {
				return l
			}
		}
		select {
		case err := <-p.waited:
			p.waited <- err
			p.t.Fatalf("c2flow exited (%v) before printing %q:\n%s", err, text, p.output())
		case <-time.After(200 * time.Millisecond):
		}
	}
	p.t.Fatalf("c2flow printed no %q within %v:\n%s", text, within, p.output())
	return ""
}

// kill ends the process at once (kill -9) and waits for it.
func (p *c2flowProc) kill() {
	p.cmd.Process.Kill()
	err := <-p.waited
	p.waited <- err
}

// stopWithin bounds a process's exit after SIGINT: longer than a worker's
// drain (the partitions it synthesized finish first, at most 2 minutes).
const stopWithin = 150 * time.Second

func (p *c2flowProc) stop() {
	select {
	case err := <-p.waited:
		p.waited <- err
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.waited:
	case <-time.After(stopWithin):
		p.t.Errorf("c2flow did not stop within %v of SIGINT:\n%s", stopWithin, p.output())
		p.kill()
	}
}

// runAsC2flow is main() for a child process of startC2flow.
func runAsC2flow(args []string) int {
	ctx, stop := signalContext()
	defer stop()
	if err := dispatch(ctx, args); err != nil {
		fmt.Fprintln(os.Stderr, "c2flow:", err)
		return 1
	}
	return 0
}

// devWithCuzk is a `c2flow dev --cuzk` process and what a client needs of
// it.
type devWithCuzk struct {
	proc                   *c2flowProc
	dir                    string
	temporal, s3, cuzk     string
	stats, workerFilecoin  string
	store                  *storage.Store
	gatewayArgs            []string // the flags `c2flow gateway` needs to reach this stack
	filecoinParamsForProof string   // the DEVELOPMENT parameters published (--dev-setup)
}

// startDevCuzk starts `c2flow dev --cuzk` with no test-scheme profile
// loaded; extra flags follow.
func startDevCuzk(t testing.TB, extra ...string) *devWithCuzk {
	t.Helper()
	dir := t.TempDir()
	d := &devWithCuzk{dir: dir, temporal: clitest.FreeAddr(t), s3: clitest.FreeAddr(t), cuzk: clitest.FreeAddr(t),
		stats: filepath.Join(dir, "stats.json"), workerFilecoin: filepath.Join(dir, "worker-filecoin")}
	_, port, _ := net.SplitHostPort(d.temporal)
	args := append([]string{"dev", "--dir", filepath.Join(dir, "dev"), "--temporal-port", port, "--s3-listen", d.s3, "--ui", "",
		"--cuzk", d.cuzk, "--profiles", "", "--stats-file", d.stats, "--filecoin-params", d.workerFilecoin,
		"--gateway-filecoin-params", filepath.Join(dir, "gw-filecoin"), "--params", paramstest.Dir(), "--log-level", "info"}, extra...)
	d.proc = startC2flow(t, dir, "dev", args...)
	// Cold, the development setups of every 2KiB kind come first: about
	// 4 minutes on a loaded 2-core machine for SnapDeals' alone.
	d.proc.waitFor("submit with:", 12*time.Minute)
	d.filecoinParamsForProof = pipeline.FilecoinDevParamsDir(paramstest.Dir())
	cfg := storage.Config{Endpoint: "http://" + d.s3, Region: "us-east-1", Bucket: "c2flow", AccessKey: stack.S3AccessKey, SecretKey: stack.S3SecretKey, PathStyle: true}
	st, err := storage.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	d.store = st
	d.gatewayArgs = []string{"--address", d.temporal, "--s3-endpoint", cfg.Endpoint, "--s3-access-key", cfg.AccessKey, "--s3-secret-key", cfg.SecretKey}
	return d
}

// gatewayCmd is `c2flow gateway` listening on addr against this stack. It
// keeps its .vk files in the test's directory: the machine-wide default
// could hold another run's development setup of the same name.
func (d *devWithCuzk) gatewayCmd(addr string) []string {
	return append([]string{"gateway", "--listen", addr, "--gateway-filecoin-params", filepath.Join(d.dir, "gateway-filecoin")}, d.gatewayArgs...)
}

// syntheses is the dev worker's synthesis count (its stats file), read
// once the host is idle: a synthesis is counted when it returns, so one
// still running (a canceled job's partition that had started) would be
// counted after a read that did not wait. Two reads in a row agree. The
// count is net of re-syntheses after lost witnesses.
func (d *devWithCuzk) syntheses(t testing.TB) int {
	t.Helper()
	var s struct {
		Budget struct {
			Running int `json:"running"`
		} `json:"budget"`
		Host struct {
			Syntheses   int `json:"syntheses"`
			WitnessLost int `json:"witness_lost"`
			Invalid     int `json:"invalid_proofs"`
			Expired     int `json:"expired_witnesses"`
			Unclaimed   int `json:"unclaimed_witnesses"`
			Retried     int `json:"synth_retries"`
		} `json:"host"`
	}
	deadline, last := time.Now().Add(2*time.Minute), -1
	for {
		time.Sleep(1500 * time.Millisecond) // the file is rewritten every second
		b, err := os.ReadFile(d.stats)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("stats file: %v", err)
		}
		// Net of the witnesses the host lost (a loaded machine's missed
		// heartbeat, an expired or unclaimed witness) and of the attempts
		// Temporal retried: each is synthesized again, legitimately. A
		// retried attempt's first witness ends Unclaimed, later: the two
		// count one loss.
		lost := s.Host.WitnessLost + s.Host.Invalid + s.Host.Expired + max(s.Host.Unclaimed, s.Host.Retried)
		net := s.Host.Syntheses - lost
		if s.Budget.Running == 0 && net == last {
			// What a failed count is checked against.
			t.Logf("%d syntheses, %d of them again after a lost witness or a retry: %s", s.Host.Syntheses, lost, b)
			return last
		}
		last = net
		if time.Now().After(deadline) {
			t.Fatalf("the dev worker is not idle after 2 minutes: %s", b)
		}
	}
}

// curioClient plays curio's lib/cuzk/client.go: the dial (a bare
// HOST:PORT through dns:///, plaintext, 256 MiB messages both ways) and
// Prove (a ProveRequest around the request, ProveTimeout as the call's
// deadline, the result's status mapped to errors as Curio maps them).
type curioClient struct {
	conn         *grpc.ClientConn
	svc          cuzkpb.ProvingEngineClient
	proveTimeout time.Duration
}

func newCurioClient(t testing.TB, addr string) *curioClient {
	t.Helper()
	target := addr
	if !strings.Contains(target, "://") && !strings.HasPrefix(target, "unix:") {
		target = "dns:///" + target
	}
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20), grpc.MaxCallSendMsgSize(256<<20)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &curioClient{conn: conn, svc: cuzkpb.NewProvingEngineClient(conn), proveTimeout: 30 * time.Minute}
}

// errCuzkFailed is the error Curio's Prove returns for a FAILED result
// (its message follows).
var errCuzkFailed = errors.New("cuzk proof failed")

func (c *curioClient) Prove(ctx context.Context, req *cuzkpb.SubmitProofRequest) (*cuzkpb.AwaitProofResponse, error) {
	if c.proveTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.proveTimeout)
		defer cancel()
	}
	resp, err := c.svc.Prove(ctx, &cuzkpb.ProveRequest{Submit: req})
	if err != nil {
		return nil, fmt.Errorf("cuzk Prove RPC: %w", err)
	}
	result := resp.Result
	if result == nil {
		return nil, errors.New("cuzk Prove returned nil result")
	}
	switch result.Status {
	case cuzkpb.AwaitProofResponse_COMPLETED:
		return result, nil
	case cuzkpb.AwaitProofResponse_FAILED:
		return nil, fmt.Errorf("%w: %s", errCuzkFailed, result.ErrorMessage)
	case cuzkpb.AwaitProofResponse_CANCELLED:
		return nil, errors.New("cuzk proof cancelled")
	case cuzkpb.AwaitProofResponse_TIMEOUT:
		return nil, errors.New("cuzk proof timed out")
	default:
		return nil, fmt.Errorf("cuzk proof unknown status: %v", result.Status)
	}
}

// curioSector is a 2KiB Filecoin sector of a miner, sealed by c2flow's
// test sealer, with the C1 JSON as filecoin-ffi writes it.
type curioSector struct {
	miner, number uint64
	c1JSON        []byte
	public        seal.SectorPublic
}

func sealForMiner(t testing.TB, miner, number uint64) curioSector {
	t.Helper()
	s, err := seal.Seal(context.Background(), seal.TestParams(proofs.StackedDrg2KiBV1_1, proofs.ProverID(miner), number))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := c1.Encode(&b, s.C1); err != nil {
		t.Fatal(err)
	}
	return curioSector{miner: miner, number: number, c1JSON: b.Bytes(), public: s.Public}
}

// c1OutputWrapper is curio lib/ffi/cuzk_funcs.go's envelope, field for
// field.
type c1OutputWrapper struct {
	SectorNum  int64  `json:"SectorNum"`
	Phase1Out  []byte `json:"Phase1Out"`
	SectorSize uint64 `json:"SectorSize"`
}

// request builds the request exactly as curio's PoRepSnarkCuzk does.
func (s curioSector) request(t testing.TB) *cuzkpb.SubmitProofRequest {
	t.Helper()
	const proofType = proofs.StackedDrg2KiBV1_1
	info, err := proofs.Lookup(proofType)
	if err != nil {
		t.Fatal(err)
	}
	wrapped, err := json.Marshal(c1OutputWrapper{SectorNum: int64(s.number), Phase1Out: s.c1JSON, SectorSize: info.SectorSize})
	if err != nil {
		t.Fatal(err)
	}
	return &cuzkpb.SubmitProofRequest{
		RequestId:       fmt.Sprintf("porep-%d-%d", s.miner, s.number),
		ProofKind:       cuzkpb.ProofKind_POREP_SEAL_COMMIT,
		SectorSize:      info.SectorSize,
		RegisteredProof: uint64(proofType),
		Priority:        cuzkpb.Priority_NORMAL,
		VanillaProof:    wrapped,
		SectorNumber:    s.number,
		MinerId:         s.miner,
	}
}

// fakeUpstream is a cuzk-protocol server that answers every Prove with a
// fixed proof and keeps the requests it got: the --forward target.
type fakeUpstream struct {
	cuzkpb.UnimplementedProvingEngineServer
	mu   sync.Mutex
	got  []*cuzkpb.SubmitProofRequest
	addr string
}

var fakeProof = []byte("window post partition proof from the upstream")

func (f *fakeUpstream) Prove(_ context.Context, req *cuzkpb.ProveRequest) (*cuzkpb.ProveResponse, error) {
	f.mu.Lock()
	f.got = append(f.got, req.GetSubmit())
	f.mu.Unlock()
	return &cuzkpb.ProveResponse{Result: &cuzkpb.AwaitProofResponse{JobId: req.GetSubmit().GetRequestId(), Status: cuzkpb.AwaitProofResponse_COMPLETED, Proof: fakeProof, TotalMs: 7}}, nil
}

func (f *fakeUpstream) GetStatus(context.Context, *cuzkpb.GetStatusRequest) (*cuzkpb.GetStatusResponse, error) {
	return &cuzkpb.GetStatusResponse{Gpus: []*cuzkpb.GPUStatus{{Name: "RTX 5070 Ti"}}, Queues: []*cuzkpb.QueueStatus{{ProofKind: "window-post", Pending: 1}}}, nil
}

func startFakeUpstream(t testing.TB) *fakeUpstream {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeUpstream{addr: l.Addr().String()}
	g := grpc.NewServer()
	cuzkpb.RegisterProvingEngineServer(g, f)
	go g.Serve(l)
	t.Cleanup(g.Stop)
	return f
}

// windowPoStRequest is built as curio's WindowPoStCuzk builds it.
func windowPoStRequest(miner uint64) *cuzkpb.SubmitProofRequest {
	randomness := bytes.Repeat([]byte{7}, 32)
	randomness[31] &= 0x3f
	const partitionIdx = 0
	return &cuzkpb.SubmitProofRequest{
		RequestId:       fmt.Sprintf("wdpost-%d-%d-%d", miner, partitionIdx, randomness[:8]),
		ProofKind:       cuzkpb.ProofKind_WINDOW_POST_PARTITION,
		SectorSize:      32 << 30,
		RegisteredProof: 13, // StackedDrgWindow32GiBV1_1
		Priority:        cuzkpb.Priority_HIGH,
		VanillaProofs:   [][]byte{[]byte("vanilla 1"), []byte("vanilla 2")},
		MinerId:         miner,
		Randomness:      randomness,
		PartitionIndex:  partitionIdx,
	}
}

// The gateway in front of a real stack (Temporal, S3, worker) refuses every
// bad PoRep request with a FAILED result naming the fault and stores
// nothing; passes WindowPoSt unchanged to --forward, and proves it itself
// without (a malformed one FAILED, naming its fault); reports the fleet and its metrics; says
// that PreloadSRS cannot reach the workers. No proving keys are needed:
// nothing here is proved.
func TestGatewayRefusesAndForwards(t *testing.T) {
	if testing.Short() {
		t.Skip("starts c2flow dev and c2flow gateway")
	}
	up := startFakeUpstream(t)
	d := startDevCuzk(t, "--forward", up.addr)
	// A second gateway, standalone, on the same fleet and without --forward.
	gwAddr := clitest.FreeAddr(t)
	gw := startC2flow(t, d.dir, "gateway", d.gatewayCmd(gwAddr)...)
	gw.waitFor("c2flow gateway: cuzk.v1.ProvingEngine", time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	curio := newCurioClient(t, gwAddr)

	const miner = 1000
	sec := sealForMiner(t, miner, 5)
	info, _ := proofs.Lookup(proofs.StackedDrg2KiBV1_1)
	limit, err := c1.MaxInputSize(proofs.StackedDrg2KiBV1_1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		change func(*cuzkpb.SubmitProofRequest)
		want   string
	}{
		{"wrong miner", func(r *cuzkpb.SubmitProofRequest) { r.MinerId = 1001 }, "not this miner's sector"},
		{"wrong sector number", func(r *cuzkpb.SubmitProofRequest) { r.SectorNumber = 6 }, "SectorNum is 5, sector_number is 6"},
		{"proof type of another size", func(r *cuzkpb.SubmitProofRequest) {
			r.RegisteredProof, r.SectorSize = uint64(proofs.StackedDrg8MiBV1_1), 8<<20
		}, "not of registered_proof 6 (StackedDrg8MiBV1_1)"},
		{"sector size disagrees", func(r *cuzkpb.SubmitProofRequest) { r.SectorSize = 32 << 30 }, "sector_size 34359738368"},
		{"NI-PoRep", func(r *cuzkpb.SubmitProofRequest) { r.RegisteredProof = 15 }, "StackedDrg2KiBV1_2_Feat_NonInteractivePoRep"},
		{"garbage JSON", func(r *cuzkpb.SubmitProofRequest) { r.VanillaProof = []byte(`{"SectorNum":5,"Phase1Out":`) }, "vanilla_proof"},
		{"bad base64", func(r *cuzkpb.SubmitProofRequest) {
			r.VanillaProof = []byte(`{"SectorNum":5,"Phase1Out":"not*base64","SectorSize":2048}`)
		}, "base64"},
		{"bare C1, no envelope", func(r *cuzkpb.SubmitProofRequest) { r.VanillaProof = sec.c1JSON }, "bare C1"},
		{"over the size bound", func(r *cuzkpb.SubmitProofRequest) { r.VanillaProof = bytes.Repeat([]byte{' '}, int(limit)+1) }, "not decoded"},
		{"tampered C1", func(r *cuzkpb.SubmitProofRequest) {
			// Another seed: the same replica id, other challenges than the
			// vanilla proofs open.
			c, err := c1.Unmarshal(sec.c1JSON)
			if err != nil {
				t.Fatal(err)
			}
			c.Seed[0] ^= 1
			var bad bytes.Buffer
			if err := c1.Encode(&bad, c); err != nil {
				t.Fatal(err)
			}
			r.VanillaProof, _ = json.Marshal(c1OutputWrapper{SectorNum: 5, Phase1Out: bad.Bytes(), SectorSize: info.SectorSize})
		}, "does not verify natively"},
	} {
		req := sec.request(t)
		c.change(req)
		_, err := curio.Prove(ctx, req)
		t.Logf("%s: %v", c.name, err)
		if !errors.Is(err, errCuzkFailed) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a FAILED result saying %q", c.name, err, c.want)
		}
	}
	if keys, err := d.store.List(ctx, "c1/"); err != nil || len(keys) != 0 {
		t.Errorf("bad requests stored C1s: %v %v", keys, err)
	}
	if keys, err := d.store.List(ctx, "cuzk/"); err != nil || len(keys) != 0 {
		t.Errorf("bad requests stored request labels: %v %v", keys, err)
	}
	// SubmitProof refuses the same way, as InvalidArgument.
	req := sec.request(t)
	req.MinerId = 1001
	if _, err := curio.svc.SubmitProof(ctx, req); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "not this miner's sector") {
		t.Errorf("SubmitProof of a wrong miner: %v", err)
	}

	// The same request_id with another C1 (another ticket: another replica
	// of the same sector) is a new job, and the gateway says so.
	first, err := curio.svc.SubmitProof(ctx, sec.request(t))
	if err != nil {
		t.Fatal(err)
	}
	p := seal.TestParams(proofs.StackedDrg2KiBV1_1, proofs.ProverID(miner), 5)
	p.Ticket[0] ^= 1
	resealed, err := seal.Seal(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := c1.Encode(&again, resealed.C1); err != nil {
		t.Fatal(err)
	}
	other := curioSector{miner: miner, number: 5, c1JSON: again.Bytes()}
	second, err := curio.svc.SubmitProof(ctx, other.request(t))
	if err != nil {
		t.Fatal(err)
	}
	if first.JobId == second.JobId || other.request(t).RequestId != sec.request(t).RequestId {
		t.Errorf("two C1s of one request_id: jobs %s and %s", first.JobId, second.JobId)
	}
	gw.waitFor(`level=INFO msg="request_id reused with a different C1: a new job"`, time.Minute)
	again2, err := curio.svc.SubmitProof(ctx, sec.request(t))
	if err != nil || again2.JobId != first.JobId {
		t.Errorf("the first C1 again: job %s (%v), want %s", again2.GetJobId(), err, first.JobId)
	}
	for _, id := range []string{first.JobId, second.JobId} {
		if _, err := curio.svc.CancelProof(ctx, &cuzkpb.CancelProofRequest{JobId: id}); err != nil {
			t.Errorf("CancelProof %s: %v", id, err)
		}
	}

	// WindowPoSt: c2flow's own without --forward (these vanilla proofs
	// are not bincode: FAILED, naming the entry).
	wp := windowPoStRequest(miner)
	_, err = curio.Prove(ctx, wp)
	if !errors.Is(err, errCuzkFailed) || !strings.Contains(err.Error(), "vanilla_proofs[0]") {
		t.Errorf("WindowPoSt of garbage without --forward: %v, want FAILED naming vanilla_proofs[0]", err)
	}
	// ... and passed unchanged to the --forward server, whose answer comes back.
	viaDev := newCurioClient(t, d.cuzk)
	res, err := viaDev.Prove(ctx, wp)
	if err != nil {
		t.Fatalf("WindowPoSt through --forward: %v", err)
	}
	if !bytes.Equal(res.Proof, fakeProof) || res.JobId != "fwd:"+wp.RequestId {
		t.Errorf("forwarded WindowPoSt answered %q, job %q", res.Proof, res.JobId)
	}
	up.mu.Lock()
	if len(up.got) != 1 || !proto.Equal(up.got[0], wp) {
		t.Errorf("the upstream got %v, want the request unchanged", up.got)
	}
	up.mu.Unlock()

	// The fleet as Temporal sees it, and the upstream's behind it.
	st, err := viaDev.svc.GetStatus(ctx, &cuzkpb.GetStatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range st.Gpus {
		names = append(names, g.Name)
	}
	if len(st.Gpus) < 2 || !strings.Contains(strings.Join(names, " "), "RTX 5070 Ti") || len(st.Queues) < 2 || st.Queues[0].ProofKind != "porep-c2" {
		t.Errorf("GetStatus: %v", st)
	}
	m, err := viaDev.svc.GetMetrics(ctx, &cuzkpb.GetMetricsRequest{})
	if err != nil || !strings.Contains(m.PrometheusText, `c2flow_gateway_requests_total{proof_kind="window-post"} 1`) ||
		!strings.Contains(m.PrometheusText, "c2flow_gateway_uptime_seconds") {
		t.Errorf("GetMetrics: %v\n%s", err, m.GetPrometheusText())
	}
	if _, err := curio.svc.PreloadSRS(ctx, &cuzkpb.PreloadSrsRequest{CircuitId: "porep-32g"}); status.Code(err) != codes.Unimplemented || !strings.Contains(err.Error(), "nothing was loaded") {
		t.Errorf("PreloadSRS: %v", err)
	}
	if _, err := curio.svc.AwaitProof(ctx, &cuzkpb.AwaitProofRequest{JobId: "porep-1000-5"}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("AwaitProof of a foreign job id: %v", err)
	}
}

// A test that plays Curio against `c2flow dev --cuzk --dev-setup`: its
// requests built as PoRepSnarkCuzk builds them, sent through its client's
// dial and Prove. The proof verifies with `c2flow verify`; the same request
// again returns the same bytes without a synthesis; two concurrent requests
// for one sector make one proof; CancelProof cancels; an AwaitProof past
// its timeout says TIMEOUT and the job carries on; and a gateway killed
// (kill -9) during a Prove and restarted answers the client's retry with
// the proof, the sector not proved again.
func TestGatewayPlaysCurio(t *testing.T) {
	if testing.Short() {
		t.Skip("proves Filecoin 2KiB sectors through c2flow dev")
	}
	d := startDevCuzk(t, "--dev-setup")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	curio := newCurioClient(t, d.cuzk)
	const miner = 1000

	// One Prove: the proof is what SealCommitPhase2 returns and verifies.
	a := sealForMiner(t, miner, 1)
	res, err := curio.Prove(ctx, a.request(t))
	if err != nil {
		t.Fatalf("Prove: %v\n%s", err, d.proc.output())
	}
	if len(res.Proof) != 192 || res.GpuComputeMs == 0 || res.SynthesisMs == 0 || res.TotalMs == 0 {
		t.Errorf("Prove: %d-byte proof, gpu %d ms, synthesis %d ms, total %d ms", len(res.Proof), res.GpuComputeMs, res.SynthesisMs, res.TotalMs)
	}
	verifyWithCLI(t, d, a, res.Proof)
	syn := d.syntheses(t)
	if syn != 1 {
		t.Errorf("one 2KiB sector took %d syntheses", syn)
	}

	// The same request again (Curio retries with the same request_id):
	// the stored proof, checked, not proved again.
	again, err := curio.Prove(ctx, a.request(t))
	if err != nil || !bytes.Equal(again.Proof, res.Proof) {
		t.Fatalf("the same request again: %v, same proof %v", err, err == nil && bytes.Equal(again.Proof, res.Proof))
	}
	if n := d.syntheses(t); n != syn {
		t.Errorf("the repeated request synthesized again (%d -> %d)", syn, n)
	}

	// Two concurrent requests for one sector: one proof. Sent as CRITICAL
	// (a careless config): served as a PoRep, not in WinningPoSt's lanes.
	b := sealForMiner(t, miner, 2)
	var wg sync.WaitGroup
	var proofsB [2][]byte
	var errsB [2]error
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := b.request(t)
			req.Priority = cuzkpb.Priority_CRITICAL
			r, err := curio.Prove(ctx, req)
			if err == nil {
				proofsB[i] = r.Proof
			}
			errsB[i] = err
		}()
	}
	wg.Wait()
	if errsB[0] != nil || errsB[1] != nil || !bytes.Equal(proofsB[0], proofsB[1]) {
		t.Fatalf("concurrent requests: %v, %v; same proof %v", errsB[0], errsB[1], bytes.Equal(proofsB[0], proofsB[1]))
	}
	if n := d.syntheses(t); n != syn+1 {
		t.Errorf("two concurrent requests for one sector took %d syntheses, want 1", n-syn)
	}
	if out := d.proc.output(); !strings.Contains(out, "asked=CRITICAL priority=3") {
		t.Errorf("a PoRep sent as CRITICAL: the gateway did not log it served at priority 3")
	}
	syn++

	// SubmitProof, AwaitProof with a timeout that expires (the job
	// carries on), then AwaitProof to the end.
	c := sealForMiner(t, miner, 3)
	sub, err := curio.svc.SubmitProof(ctx, c.request(t))
	if err != nil {
		t.Fatal(err)
	}
	aw, err := curio.svc.AwaitProof(ctx, &cuzkpb.AwaitProofRequest{JobId: sub.JobId, TimeoutMs: 1})
	if err != nil || aw.Status != cuzkpb.AwaitProofResponse_TIMEOUT {
		t.Errorf("AwaitProof with a 1 ms timeout: %v %v, want TIMEOUT", aw.GetStatus(), err)
	}
	aw, err = curio.svc.AwaitProof(ctx, &cuzkpb.AwaitProofRequest{JobId: sub.JobId})
	if err != nil || aw.Status != cuzkpb.AwaitProofResponse_COMPLETED || len(aw.Proof) != 192 {
		t.Fatalf("AwaitProof after the timeout: %v %v", aw.GetStatus(), err)
	}
	verifyWithCLI(t, d, c, aw.Proof)
	syn++

	// CancelProof of a running job.
	e := sealForMiner(t, miner, 4)
	sub, err = curio.svc.SubmitProof(ctx, e.request(t))
	if err != nil {
		t.Fatal(err)
	}
	cr, err := curio.svc.CancelProof(ctx, &cuzkpb.CancelProofRequest{JobId: sub.JobId})
	if err != nil || !cr.WasRunning {
		t.Errorf("CancelProof: %v, was_running %v", err, cr.GetWasRunning())
	}
	aw, err = curio.svc.AwaitProof(ctx, &cuzkpb.AwaitProofRequest{JobId: sub.JobId})
	if err != nil || aw.Status != cuzkpb.AwaitProofResponse_CANCELLED {
		t.Errorf("AwaitProof of a canceled job: %v %v, want CANCELLED", aw.GetStatus(), err)
	}
	if _, err := d.store.Head(ctx, storage.C2Key(jobIdentity(t, sub.JobId))); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a canceled job stored a C2 (%v)", err)
	}
	syn = d.syntheses(t) // the canceled partition may or may not have started

	// A standalone gateway killed during a Prove; the client's retry, to
	// the restarted gateway, gets the proof: the sector proved once.
	gwAddr := clitest.FreeAddr(t)
	gwArgs := d.gatewayCmd(gwAddr)
	gw := startC2flow(t, d.dir, "gateway", gwArgs...)
	gw.waitFor("c2flow gateway: cuzk.v1.ProvingEngine", time.Minute)
	f := sealForMiner(t, miner, 6)
	viaGW := newCurioClient(t, gwAddr)
	first := make(chan error, 1)
	go func() { _, err := viaGW.Prove(ctx, f.request(t)); first <- err }()
	waitSectorRunning(t, ctx, d, f)
	gw.kill()
	if err := <-first; err == nil {
		t.Fatal("a Prove through a killed gateway succeeded")
	}
	gw = startC2flow(t, d.dir, "gateway2", gwArgs...)
	gw.waitFor("c2flow gateway: cuzk.v1.ProvingEngine", time.Minute)
	var retried *cuzkpb.AwaitProofResponse
	for try := 0; ; try++ { // Curio's task retry, after the connection is back
		retried, err = viaGW.Prove(ctx, f.request(t))
		if err == nil || try == 20 {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("retry after the gateway restarted: %v\n%s", err, gw.output())
	}
	verifyWithCLI(t, d, f, retried.Proof)
	if n := d.syntheses(t); n != syn+1 {
		t.Errorf("the sector whose gateway was killed took %d syntheses, want 1", n-syn)
	}
}

// jobIdentity is the sector identity a gateway job id names.
func jobIdentity(t testing.TB, jobID string) job.Ref {
	t.Helper()
	parts := strings.Split(jobID, "/")
	if len(parts) != 5 || parts[0] != "porep" {
		t.Fatalf("job id %q", jobID)
	}
	n, err := strconv.ParseUint(parts[3], 10, 64)
	if err != nil {
		t.Fatalf("job id %q: %v", jobID, err)
	}
	return job.Ref{ProverID: parts[2], SectorID: n, InputDigest: parts[4], Proof: parts[1]}
}

// waitSectorRunning waits until the sector's input is in S3 (the gateway
// accepted the request and started its batch) and Temporal says its
// sector workflow runs: no wall-clock "moment", which a loaded machine can
// outlast.
func waitSectorRunning(t testing.TB, ctx context.Context, d *devWithCuzk, s curioSector) {
	t.Helper()
	c, err := client.DialContext(ctx, client.Options{HostPort: d.temporal, Logger: tlog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	prover := proofs.ProverID(s.miner)
	ref := job.Ref{ProverID: hex.EncodeToString(prover[:]), SectorID: s.number}
	prefix := "c1/" + ref.ProverID + "/" + fmt.Sprint(s.number) + "/"
	for ctx.Err() == nil {
		if ref.InputDigest == "" {
			if keys, err := d.store.List(ctx, prefix); err == nil && len(keys) > 0 {
				ref.InputDigest = strings.TrimSuffix(path.Base(keys[0]), ".json")
			}
		}
		if ref.InputDigest != "" {
			w, err := c.DescribeWorkflowExecution(ctx, job.SectorWorkflowID(ref), "")
			if err == nil && w.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal(ctx.Err())
}

// verifyWithCLI checks a proof with `c2flow verify` under the published
// DEVELOPMENT parameters, the C1 and the sector's prover id.
func verifyWithCLI(t testing.TB, d *devWithCuzk, s curioSector, proof []byte) {
	t.Helper()
	dir := t.TempDir()
	c1File, proofFile := filepath.Join(dir, fmt.Sprintf("%d.c1.json", s.number)), filepath.Join(dir, "proof")
	if err := os.WriteFile(c1File, s.c1JSON, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(proofFile, proof, 0o644); err != nil {
		t.Fatal(err)
	}
	prover := proofs.ProverID(s.miner)
	err := dispatch(context.Background(), []string{"verify", "--c1", c1File, "--proof", proofFile,
		"--filecoin-params", d.filecoinParamsForProof, "--prover-id", hex.EncodeToString(prover[:])})
	if err != nil {
		t.Errorf("c2flow verify of sector %d's proof: %v", s.number, err)
	}
	proof[len(proof)/2] ^= 1
	defer func() { proof[len(proof)/2] ^= 1 }()
	if err := os.WriteFile(proofFile, proof, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := dispatch(context.Background(), []string{"verify", "--c1", c1File, "--proof", proofFile,
		"--filecoin-params", d.filecoinParamsForProof, "--prover-id", hex.EncodeToString(prover[:])}); err == nil {
		t.Errorf("c2flow verify accepted sector %d's proof with a flipped bit", s.number)
	}
}

// BenchmarkGatewayOverhead proves 2KiB Filecoin sectors through one
// `c2flow dev --cuzk --dev-setup`, alternating: one through the gateway as
// Curio sends it (Prove, blocking), one through `c2flow submit --wait`
// (upload, batch, wait, read back). Both pay for the same pipeline; the
// ratio of their per-proof wall times is the gateway's overhead, from one
// run, pair by pair (go test -run '^$' -bench GatewayOverhead -benchtime
// 3x ./cmd/c2flow/).
func BenchmarkGatewayOverhead(b *testing.B) {
	d := startDevCuzk(b, "--dev-setup")
	ctx := context.Background()
	curio := newCurioClient(b, d.cuzk)
	const miner = 2000
	// Warm-up: the worker loads the circuit, the gateway its .vk.
	if _, err := curio.Prove(ctx, sealForMiner(b, miner, 99).request(b)); err != nil {
		b.Fatal(err)
	}
	prover := proofs.ProverID(miner)
	viaGateway := func(s curioSector) time.Duration {
		t0 := time.Now()
		if _, err := curio.Prove(ctx, s.request(b)); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	viaSubmit := func(s curioSector) time.Duration {
		dir := b.TempDir()
		file := filepath.Join(dir, fmt.Sprintf("%d.c1.json", s.number))
		if err := os.WriteFile(file, s.c1JSON, 0o644); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		args := append([]string{"submit", "--c1", file, "--prover-id", hex.EncodeToString(prover[:]), "--wait", "--out", dir}, d.gatewayArgs...)
		if err := dispatch(ctx, args); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	var gwTotal, subTotal time.Duration
	var ratios []float64
	b.ResetTimer()
	for i := range b.N {
		gs, ss := sealForMiner(b, miner, uint64(1000*b.N+2*i)), sealForMiner(b, miner, uint64(1000*b.N+2*i+1))
		var gw, sub time.Duration
		if i%2 == 0 { // alternate which goes first
			gw, sub = viaGateway(gs), viaSubmit(ss)
		} else {
			sub, gw = viaSubmit(ss), viaGateway(gs)
		}
		gwTotal += gw
		subTotal += sub
		ratios = append(ratios, gw.Seconds()/sub.Seconds())
		b.Logf("pair %d: gateway %v, submit --wait %v, ratio %.3f", i, gw.Round(time.Millisecond), sub.Round(time.Millisecond), gw.Seconds()/sub.Seconds())
	}
	b.StopTimer()
	sort.Float64s(ratios)
	b.ReportMetric(gwTotal.Seconds()/float64(b.N), "gateway-s/proof")
	b.ReportMetric(subTotal.Seconds()/float64(b.N), "submit-s/proof")
	b.ReportMetric(ratios[len(ratios)/2], "median-ratio")
}

// snapUpdate is a 2KiB SnapDeals update of a miner's sector, made by the
// test updater, as Curio holds it: its snap-vproof.json and the CIDs of
// its commitments.
type snapUpdate struct {
	miner, number                uint64
	vproofJSON                   []byte
	sectorKey, sealed, unsealed  string // CIDs
	commROld, commRNew, commDNew [32]byte
}

func updateForMiner(t testing.TB, miner, number uint64) snapUpdate {
	t.Helper()
	dir := t.TempDir()
	const proof = "UpdateStackedDrg2KiBV1"
	sc, err := registry.Schemes(registry.Options{}).For(proof)
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := scheme.As[scheme.TestSealer](sc, "test updates")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sealer.SealTest(context.Background(), scheme.SealRequest{Proof: proof, Prover: proofs.ProverID(miner), First: number, N: 1, Dir: dir}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "updates.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m update.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	e := m.Sectors[0]
	u := snapUpdate{miner: miner, number: number, sectorKey: e.SectorKey, sealed: e.SealedCID, unsealed: e.UnsealedCID}
	if u.vproofJSON, err = os.ReadFile(filepath.Join(dir, e.Vanilla)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cid string
		k   commcid.Kind
		dst *[32]byte
	}{{e.SectorKey, commcid.Sealed, &u.commROld}, {e.SealedCID, commcid.Sealed, &u.commRNew}, {e.UnsealedCID, commcid.Unsealed, &u.commDNew}} {
		// commcid.CIDToReplicaCommitmentV1 / CIDToDataCommitmentV1: the digest.
		if *c.dst, err = commcid.ParseString(c.cid, c.k); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

// request builds the request exactly as curio's ProveUpdateCuzk does: the
// snap vanilla JSON unmarshalled into [][]byte, the commitments as the
// raw 32 bytes of their CIDs.
func (u snapUpdate) request(t testing.TB) *cuzkpb.SubmitProofRequest {
	t.Helper()
	var vproofs [][]byte
	if err := json.Unmarshal(u.vproofJSON, &vproofs); err != nil {
		t.Fatal(err)
	}
	return &cuzkpb.SubmitProofRequest{
		RequestId:       fmt.Sprintf("snap-%d-%d", u.miner, u.number),
		ProofKind:       cuzkpb.ProofKind_SNAP_DEALS_UPDATE,
		SectorSize:      2 << 10,
		RegisteredProof: uint64(proofs.UpdateStackedDrg2KiBV1),
		Priority:        cuzkpb.Priority_NORMAL,
		VanillaProofs:   vproofs,
		SectorNumber:    u.number,
		MinerId:         u.miner,
		CommROld:        u.commROld[:],
		CommRNew:        u.commRNew[:],
		CommDNew:        u.commDNew[:],
	}
}

// Curio's PoRep C2 and SnapDeals requests, sent at once to `c2flow dev
// --cuzk --dev-setup` as Curio's tasks send them: the PoRep proof and the
// update proof come back and verify (the update's with `c2flow verify
// --update-proof` against the CIDs); a corrupt update's request fails
// alone, naming its partition, challenge and tree, with nothing stored;
// and the update sent again with its commitments as CID bytes (the proto's
// first callers' form) is the same job: the same proof, not proved again.
func TestGatewayProvesSnapDeals(t *testing.T) {
	if testing.Short() {
		t.Skip("proves Filecoin 2KiB sectors and updates through c2flow dev")
	}
	d := startDevCuzk(t, "--dev-setup")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	curio := newCurioClient(t, d.cuzk)
	const miner = 3000
	porep, up, bad := sealForMiner(t, miner, 11), updateForMiner(t, miner, 12), updateForMiner(t, miner, 13)
	badReq := bad.request(t)
	p, err := update.DecodePartitionProof(badReq.VanillaProofs[0])
	if err != nil {
		t.Fatal(err)
	}
	p.Challenges[2].DNew.Leaf[0] ^= 1
	badReq.VanillaProofs[0] = p.Bincode()

	var wg sync.WaitGroup
	var porepRes, upRes *cuzkpb.AwaitProofResponse
	var porepErr, upErr, badErr error
	wg.Go(func() { porepRes, porepErr = curio.Prove(ctx, porep.request(t)) })
	wg.Go(func() { upRes, upErr = curio.Prove(ctx, up.request(t)) })
	wg.Go(func() { _, badErr = curio.Prove(ctx, badReq) })
	wg.Wait()
	if porepErr != nil || upErr != nil {
		t.Fatalf("PoRep: %v; update: %v\n%s", porepErr, upErr, d.proc.output())
	}
	if !errors.Is(badErr, errCuzkFailed) || !strings.Contains(badErr.Error(), "partition 0: challenge 2") || !strings.Contains(badErr.Error(), "tree D new") {
		t.Errorf("corrupt update: %v, want a FAILED result naming partition 0, challenge 2, tree D new", badErr)
	}
	prover := proofs.ProverID(miner)
	if keys, err := d.store.List(ctx, "c1/"+hex.EncodeToString(prover[:])+"/13/"); err != nil || len(keys) != 0 {
		t.Errorf("the corrupt update was stored: %v %v", keys, err)
	}
	verifyWithCLI(t, d, porep, porepRes.Proof)
	if len(upRes.Proof) != 192 || upRes.GpuComputeMs == 0 || !strings.HasPrefix(upRes.JobId, "snap/UpdateStackedDrg2KiBV1/") {
		t.Errorf("update: %d-byte proof, gpu %d ms, job %s", len(upRes.Proof), upRes.GpuComputeMs, upRes.JobId)
	}
	verifyUpdateWithCLI(t, d, up, upRes.Proof)
	syn := d.syntheses(t)
	if syn != 2 {
		t.Errorf("a PoRep sector and an update of one partition each took %d syntheses", syn)
	}

	// The same update, its commitments as CID bytes: the same job.
	cids := up.request(t)
	cids.CommROld, cids.CommRNew, cids.CommDNew = commcid.CID(up.commROld, commcid.Sealed), commcid.CID(up.commRNew, commcid.Sealed), commcid.CID(up.commDNew, commcid.Unsealed)
	again, err := curio.Prove(ctx, cids)
	if err != nil || again.JobId != upRes.JobId || !bytes.Equal(again.Proof, upRes.Proof) {
		t.Fatalf("the update with CID commitments: %v, job %s (want %s), same proof %v", err, again.GetJobId(), upRes.JobId, err == nil && bytes.Equal(again.Proof, upRes.Proof))
	}
	if n := d.syntheses(t); n != syn {
		t.Errorf("the update sent again was synthesized again (%d -> %d)", syn, n)
	}
}

// verifyUpdateWithCLI checks an update proof with `c2flow verify
// --update-proof` against the CIDs Curio holds, under the published
// DEVELOPMENT parameters; a flipped bit is refused.
func verifyUpdateWithCLI(t testing.TB, d *devWithCuzk, u snapUpdate, proof []byte) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "update.proof")
	args := []string{"verify", "--update-proof", "StackedDrg2KiBV1", "--comm-r-old", u.sectorKey, "--comm-r-new", u.sealed, "--comm-d-new", u.unsealed,
		"--proof", file, "--filecoin-params", d.filecoinParamsForProof}
	if err := os.WriteFile(file, proof, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := dispatch(context.Background(), args); err != nil {
		t.Errorf("c2flow verify of sector %d's update proof: %v", u.number, err)
	}
	bad := bytes.Clone(proof)
	bad[len(bad)/2] ^= 1
	if err := os.WriteFile(file, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := dispatch(context.Background(), args); err == nil {
		t.Errorf("c2flow verify accepted sector %d's update proof with a flipped bit", u.number)
	}
}
