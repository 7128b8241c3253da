package activities

import (
	"bytes"
	"context"
	"io"
	"os"
	"sync/atomic"
)

// Hooks are a host's fault-injection points, for tests only.
type Hooks struct {
	// FaultyFinalize corrupts every proof (tests of the no-invalid-proof
	// guarantee).
	FaultyFinalize bool `json:"faulty_finalize,omitempty"`
	// PauseAt freezes the host the first time an activity reaches this
	// phase (synth, device or finalize): it writes PauseFile, takes no new
	// synthesis and the activity waits for cancellation. Fault tests use it
	// to kill -9 a worker at a known point.
	PauseAt   string `json:"pause_at,omitempty"`
	PauseFile string `json:"pause_file,omitempty"`
	// StopInDevice stops the whole process (SIGSTOP) the first time a
	// device phase holds its device, after writing PauseFile: a stall
	// test resumes it with SIGCONT, as a long GC pause or VM steal would.
	StopInDevice bool `json:"stop_in_device,omitempty"`
	stopped      atomic.Bool
	// DamageSpill damages what this host spills: "flip" flips a byte in
	// the middle of its first spill, "truncate" drops the first spill's
	// last 100 bytes, "swap" writes the first spill's bytes again (another
	// partition's spill, whole and checksummed) in place of the second.
	// Device hosts must refuse each, and the partition be synthesized
	// again, never proved from it.
	DamageSpill string `json:"damage_spill,omitempty"`
	spills      atomic.Int32
	firstSpill  []byte
}

// damageSpill returns write as DamageSpill damages it, for this host's
// n-th spill (from 1).
func (hk *Hooks) damageSpill(write func(io.Writer) error) func(io.Writer) error {
	if hk == nil || hk.DamageSpill == "" {
		return write
	}
	n := hk.spills.Add(1)
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return func(io.Writer) error { return err }
	}
	b := buf.Bytes()
	switch {
	case n == 1 && hk.DamageSpill == "flip":
		b[len(b)/2] ^= 0x10
	case n == 1 && hk.DamageSpill == "truncate":
		b = b[:max(len(b)-100, 0)]
	case n == 1 && hk.DamageSpill == "swap":
		hk.firstSpill = bytes.Clone(b)
	case n == 2 && hk.DamageSpill == "swap":
		b = hk.firstSpill
	}
	return func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}
}

// stopInDevice implements Hooks.StopInDevice.
func (h *Host) stopInDevice() {
	if h.Hooks == nil || !h.Hooks.StopInDevice || !h.Hooks.stopped.CompareAndSwap(false, true) {
		return
	}
	if h.Hooks.PauseFile != "" {
		os.WriteFile(h.Hooks.PauseFile, []byte("device"), 0o644)
	}
	if err := stopSelf(); err != nil {
		h.Log.Error("stop for a stall test", "error", err)
	}
}

// freeze stops every new synthesis reservation on this host.
func (h *Host) freeze() {
	h.Budget.freeze()
	if h.Urgent != nil {
		h.Urgent.freeze()
	}
}

// pause implements Hooks.PauseAt for phase; it returns ctx's error once
// paused.
func (h *Host) pause(ctx context.Context, phase string) error {
	if h.Hooks == nil || h.Hooks.PauseAt != phase || !h.paused.CompareAndSwap(false, true) {
		return nil
	}
	h.freeze()
	if h.Hooks.PauseFile != "" {
		os.WriteFile(h.Hooks.PauseFile, []byte(phase), 0o644)
	}
	h.Log.Warn("paused for a fault test", "phase", phase)
	<-ctx.Done()
	return ctx.Err()
}
