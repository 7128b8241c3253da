package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/gateway/cuzkpb"
	"github.com/c2flow/c2flow/gateway/gatewaytest"
)

// rssSampler samples a process's RSS every 0.2 s and keeps the largest.
type rssSampler struct {
	stop chan struct{}
	done chan int64
}

// rssKB is a process's VmRSS in KiB.
func rssKB(t *testing.T, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc/%d/status: %v", pid, err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	t.Fatalf("no VmRSS of process %d", pid)
	return 0
}

func sampleRSS(t *testing.T, pid int) *rssSampler {
	s := &rssSampler{stop: make(chan struct{}), done: make(chan int64, 1)}
	go func() {
		peak := int64(0)
		tk := time.NewTicker(200 * time.Millisecond)
		defer tk.Stop()
		for {
			peak = max(peak, rssKB(t, pid))
			select {
			case <-s.stop:
				s.done <- peak
				return
			case <-tk.C:
			}
		}
	}()
	return s
}

func (s *rssSampler) peakKB() int64 { close(s.stop); return <-s.done }

// emptyEntries is a SubmitProofRequest head of kind (none for 0) and n
// empty vanilla_proofs.
func emptyEntries(kind cuzkpb.ProofKind, rp uint64, n int) []byte {
	var b []byte
	if kind != 0 {
		b = protowire.AppendVarint(protowire.AppendTag(b, 2, protowire.VarintType), uint64(kind))
	}
	if rp != 0 {
		b = protowire.AppendVarint(protowire.AppendTag(b, 4, protowire.VarintType), rp)
	}
	e := protowire.AppendBytes(protowire.AppendTag(nil, 11, protowire.BytesType), nil)
	return append(b, bytes.Repeat(e, n)...)
}

// submitField is a ProveRequest's submit field holding sub.
func submitField(sub []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), sub)
}

// The gateway of `c2flow dev --cuzk`, as a provider tries it, attacked over
// the wire (issue 55): a Prove of kind 0 with 20M empty vanilla_proofs (a
// 40 MB message) and a Prove of two submit fields (20M empty entries, then
// a Curio PoRep) are each refused by name, the process's RSS (sampled every
// 0.2 s) growing by at most 512 MiB (before: +1,916 MiB and +2,041 MiB, and
// the second PoRep proved); from one client, two streams that declare 115
// MB Proves saying WINNING_POST first and POREP_SEAL_COMMIT later, sending
// 1 KiB every 5 s, are refused at once, and a real 2KiB WinningPoSt from
// the same address is proved within 3 times its idle time + 3 s (before:
// 32.07 s against 4.71 s).
func TestGatewayHostileOverTheWire(t *testing.T) {
	if testing.Short() {
		t.Skip("attacks c2flow dev --cuzk and proves 2KiB WinningPoSt")
	}
	d := startDevCuzk(t, "--dev-setup")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	curio := newCurioClient(t, d.cuzk)
	const miner = 5000
	winning := func(seed byte) time.Duration {
		var r [32]byte
		for i := range r {
			r[i] = seed + byte(i)
		}
		w := newCurioPoSt(t, proofs.StackedDrgWinning2KiBV1, miner, r, 21)
		t0 := time.Now()
		res, err := curio.Prove(ctx, w.winningRequest(t))
		if err != nil {
			t.Fatalf("WinningPoSt %d: %v\n%s", seed, err, d.proc.output())
		}
		if err := w.verify(t, d, res.Proof); err != nil {
			t.Fatalf("WinningPoSt %d does not verify: %v", seed, err)
		}
		return time.Since(t0)
	}
	winning(1) // keys loaded
	idle := winning(2)

	tr := gatewaytest.H2C()
	defer tr.CloseIdleConnections()
	pid := d.proc.cmd.Process.Pid
	sector := sealForMiner(t, miner, 3)
	porep, err := proto.Marshal(sector.request(t))
	if err != nil {
		t.Fatal(err)
	}
	before := rssKB(t, pid)
	rss := sampleRSS(t, pid)
	kind0 := gatewaytest.Call(ctx, tr, d.cuzk, cuzkpb.ProvingEngine_Prove_FullMethodName, bytes.NewReader(gatewaytest.Frame(submitField(emptyEntries(0, 0, 20_000_000)))))
	// The first submit claims a 64GiB PoRep, whose C1 bound (117 MB) the
	// 40 MB message is within: it is read, and walked.
	twoSubmits := append(submitField(emptyEntries(cuzkpb.ProofKind_POREP_SEAL_COMMIT, uint64(proofs.StackedDrg64GiBV1_1), 20_000_000)), submitField(porep)...)
	merged := gatewaytest.Call(ctx, tr, d.cuzk, cuzkpb.ProvingEngine_Prove_FullMethodName, bytes.NewReader(gatewaytest.Frame(twoSubmits)))
	growth := (rss.peakKB() - before) >> 10
	t.Logf("kind 0, 20M empty entries: %s\ntwo submits (20M empty entries, then a Curio PoRep): %s\nthe process's RSS: +%d MiB at its peak (sampled every 0.2 s)", kind0, merged, growth)
	if !strings.HasPrefix(kind0, "0 FAILED ") || !strings.Contains(kind0, "no proof_kind") {
		t.Errorf("kind 0: %q, want a FAILED result naming the missing proof_kind", kind0)
	}
	if !strings.HasPrefix(merged, "0 FAILED ") || !strings.Contains(merged, "vanilla_proofs: more than 4096 entries") {
		t.Errorf("two submits: %q, want a FAILED result naming the entries", merged)
	}
	if growth > 512 {
		t.Errorf("the gateway's process grew by %d MiB (at most 512)", growth)
	}

	// Two streams declaring 115 MB WinningPoSt-first Proves, dripping.
	fake := submitField(nil)[:1] // the submit tag; its length follows
	sub := protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), uint64(cuzkpb.ProofKind_WINNING_POST))
	const declared = 115_000_000
	fake = protowire.AppendVarint(fake, declared-6)
	fake = append(binary.BigEndian.AppendUint32([]byte{0}, declared), append(fake, sub...)...)
	var wg sync.WaitGroup
	fakes := make([]string, 2)
	for i := range fakes {
		r, w := io.Pipe()
		defer w.Close()
		wg.Go(func() { fakes[i] = gatewaytest.Call(ctx, tr, d.cuzk, cuzkpb.ProvingEngine_Prove_FullMethodName, r) })
		go func() {
			if _, err := w.Write(append(fake, make([]byte, 1<<10)...)); err != nil {
				return
			}
			for range time.Tick(5 * time.Second) {
				if _, err := w.Write(make([]byte, 1<<10)); err != nil {
					return
				}
			}
		}()
	}
	took := winning(3)
	wg.Wait()
	t.Logf("a 2KiB WinningPoSt beside two faked 115 MB WinningPoSt streams: %v (idle: %v); the streams: %q", took.Round(time.Millisecond), idle.Round(time.Millisecond), fakes)
	if limit := 3*idle + 3*time.Second; took > limit {
		t.Errorf("the WinningPoSt took %v beside the faked streams, over 3 x %v + 3 s", took, idle)
	}
	for _, f := range fakes {
		if !strings.HasPrefix(f, "0 FAILED ") || !strings.Contains(f, "the largest legitimate Prove request of WINNING_POST") {
			t.Errorf("a faked 115 MB WinningPoSt: %q, want refused unread naming WinningPoSt's largest request", f)
		}
	}
}
