package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
)

// feed writes n bytes into a new FIFO until its reader closes it, and
// reports how many the reader took.
func feed(t *testing.T, n int64) (string, <-chan int64) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "input.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	took := make(chan int64, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			took <- -1
			return
		}
		defer f.Close()
		buf := make([]byte, 1<<20)
		var w int64
		for w < n {
			k, err := f.Write(buf[:min(int64(len(buf)), n-w)])
			w += int64(k)
			if err != nil {
				break
			}
		}
		took <- w
	}()
	return fifo, took
}

// --snap-vproof and --c1 read a file at most to its bound (+1 byte) and
// refuse it naming the file and the bound: /dev/zero grew the process to
// 14 GB. A FIFO fed far beyond the bound shows how much was read.
func TestSubmitReadsBounded(t *testing.T) {
	info, err := proofs.UpdateByName("StackedDrg2KiBV1")
	if err != nil {
		t.Fatal(err)
	}
	b, ok, err := registry.Schemes(registry.Options{}).RequestBound(scheme.KindSnap, uint64(info.Proof))
	if err != nil || !ok {
		t.Fatalf("the SnapDeals bound: %v (set: %v)", err, ok)
	}
	bound := b.EnvelopeBytes
	const slack = 2 << 20 // the pipe's buffer and one write
	fifo, took := feed(t, bound+256<<20)
	uf := cli.UpdateFlags{Proof: "StackedDrg2KiBV1", CommROld: strings.Repeat("11", 32), CommRNew: strings.Repeat("22", 32), CommDNew: strings.Repeat("33", 32)}
	_, err = SnapInput(context.Background(), registry.Schemes(registry.Options{}), fifo, &uf, &C1Flags{ProverID: strings.Repeat("e8", 32), SectorID: "7"})
	if err == nil || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), fmt.Sprint(bound)) {
		t.Errorf("--snap-vproof of an endless file: %v", err)
	}
	if n := <-took; n > bound+slack {
		t.Errorf("--snap-vproof read %d bytes of a file over its %d-byte bound", n, bound)
	}

	limit := maxInputBytes()
	if limit < 116894444 {
		t.Errorf("--c1 bound %d: under a 64GiB C1's", limit)
	}
	fifo, took = feed(t, limit+256<<20)
	err = RunSubmit(context.Background(), []string{"--c1", fifo})
	if err == nil || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), fmt.Sprint(limit)) || errors.Is(err, os.ErrNotExist) {
		t.Errorf("--c1 of an endless file: %v", err)
	}
	if n := <-took; n > limit+slack {
		t.Errorf("--c1 read %d bytes of a file over its %d-byte bound", n, limit)
	}
}
