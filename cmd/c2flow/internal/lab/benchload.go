package lab

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/registry"
)

// loadFlags are bench load's flags; its child processes get the same.
type loadFlags struct {
	proof, params, shapes string
	processes             int
	noKey, devSetup       bool
	touch                 bool
	child                 bool
}

func (f *loadFlags) parse(args []string) error {
	fs := cli.NewFlags("bench load")
	fs.StringVar(&f.proof, "proof", "", "a seal proof (StackedDrg512MiBV1_1)")
	update := fs.String("update-proof", "", "an update proof (StackedDrg32GiBV1), instead of --proof")
	post := fs.String("post-proof", "", "a PoSt proof (StackedDrgWindow32GiBV1_2), instead of --proof")
	fs.IntVar(&f.processes, "processes", 2, "worker processes loading the circuit at once, as on one box")
	fs.BoolVar(&f.noKey, "no-key", false, "the circuit's recorded system alone, no proving key (for sizes whose key cannot be made here)")
	fs.BoolVar(&f.devSetup, "dev-setup", true, "make a DEVELOPMENT SETUP of the key where none is in --params (as dev --dev-setup does; never for real sectors)")
	fs.BoolVar(&f.touch, "touch", true, "read every mapped page once loaded, as a first proof reads every point: what a worker holds after it")
	fs.StringVar(&f.params, "params", registry.FilecoinParamsDir(), "Filecoin parameter directory")
	fs.StringVar(&f.shapes, "shapes", "", "where recorded circuits, key files and file stamps are kept (default: c2flow's cache)")
	fs.BoolVar(&f.child, "child", false, "internal: be one loading process")
	if err := fs.Parse(args); err != nil {
		return err
	}
	n := 0
	for _, p := range []*string{&f.proof, update, post} {
		if *p != "" {
			n++
		}
	}
	if *update != "" {
		f.proof = "Update" + *update
	}
	if *post != "" {
		f.proof = *post
	}
	if n != 1 || fs.NArg() != 0 || f.processes < 1 {
		fs.Usage()
		return errors.New("bench load: usage: c2flow bench load --proof P | --update-proof P | --post-proof P [--processes N] [--no-key]")
	}
	return nil
}

func (f *loadFlags) args() []string {
	return []string{"bench", "load", "--child", "--proof", f.proof, "--params", f.params, "--shapes", f.shapes,
		"--no-key=" + strconv.FormatBool(f.noKey), "--touch=" + strconv.FormatBool(f.touch)}
}

// runBenchLoad starts --processes processes that each load one circuit
// as a worker does (its system and key mapped, shared through the page
// cache) and, once all are ready, reads what each holds from
// /proc/PID/smaps_rollup: its private, anonymous memory, its PSS (each
// shared page counted once in all) and its peak RSS.
func runBenchLoad(ctx context.Context, args []string) error {
	var f loadFlags
	if err := f.parse(args); err != nil {
		return err
	}
	if f.child {
		return loadChild(ctx, &f)
	}
	if !f.noKey && f.devSetup {
		fmt.Printf("development setup of %s in %s (made once, then cached) ...\n", f.proof, f.params)
		if _, err := registry.FilecoinDevSetup(ctx, f.proof, f.params); err != nil {
			return err
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("bench load: %w", err)
	}
	type proc struct {
		cmd   *exec.Cmd
		stdin io.Closer
		line  chan string
		t0    time.Time
	}
	procs := make([]*proc, f.processes)
	defer func() {
		for _, p := range procs {
			if p != nil {
				p.stdin.Close()
				p.cmd.Wait()
			}
		}
	}()
	for i := range procs {
		cmd := exec.CommandContext(ctx, exe, f.args()...)
		cmd.Stderr = os.Stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			return fmt.Errorf("bench load: %w", err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return fmt.Errorf("bench load: %w", err)
		}
		p := &proc{cmd: cmd, stdin: in, line: make(chan string, 1), t0: time.Now()}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("bench load: starting process %d: %w", i, err)
		}
		procs[i] = p
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), "ready ") {
					p.line <- sc.Text()
					io.Copy(io.Discard, out)
					return
				}
				fmt.Println(sc.Text())
			}
			close(p.line)
		}()
	}
	var ready time.Duration
	var key, system, peak, private, pss int64
	for i, p := range procs {
		l, ok := <-p.line
		if !ok {
			err := p.cmd.Wait()
			procs[i] = nil
			return fmt.Errorf("bench load: process %d ended before it was ready: %v", i, err)
		}
		ready = max(ready, time.Since(p.t0))
		kv := keyValues(l)
		key, system = kv["key_bytes"], kv["system_bytes"]
		fmt.Printf("process %d: %s\n", i, strings.TrimPrefix(l, "ready "))
	}
	for i, p := range procs {
		m, err := procMemory(p.cmd.Process.Pid)
		if err != nil {
			return fmt.Errorf("bench load: process %d: %w", i, err)
		}
		fmt.Printf("process %d: pid=%d rss_bytes=%d pss_bytes=%d anonymous_bytes=%d peak_rss_bytes=%d\n", i, p.cmd.Process.Pid, m.rss, m.pss, m.anon, m.peak)
		private, peak = max(private, m.anon), max(peak, m.peak)
		pss += m.pss
	}
	fmt.Printf("proof=%s processes=%d key_bytes=%d system_bytes=%d private_bytes=%d pss_bytes=%d ready_ms=%d peak_rss_bytes=%d\n",
		f.proof, f.processes, key, system, private, pss, ready.Milliseconds(), peak)
	return nil
}

// loadChild loads the circuit, says "ready" with its sizes, and holds it
// until its input closes.
func loadChild(ctx context.Context, f *loadFlags) error {
	t0 := time.Now()
	m, err := registry.MapFilecoin(ctx, registry.Options{FilecoinParams: f.params, FilecoinShapes: f.shapes}, f.proof, !f.noKey)
	if err != nil {
		return err
	}
	tLoad := time.Since(t0)
	if f.touch {
		m.Touch()
	}
	fmt.Printf("ready load_ms=%d touched_ms=%d key_bytes=%d system_bytes=%d circuit=%.16s\n",
		tLoad.Milliseconds(), time.Since(t0).Milliseconds(), m.KeyBytes, m.SystemBytes, m.Digest)
	io.Copy(io.Discard, os.Stdin)
	return nil
}

func keyValues(line string) map[string]int64 {
	kv := map[string]int64{}
	for _, f := range strings.Fields(line) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			kv[k] = n
		}
	}
	return kv
}

type memory struct{ rss, pss, anon, peak int64 }

// procMemory reads a process's memory from /proc: smaps_rollup's Rss,
// Pss and Anonymous, status's VmHWM.
func procMemory(pid int) (memory, error) {
	var m memory
	kb := func(path string, fields map[string]*int64) error {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, l := range strings.Split(string(b), "\n") {
			name, rest, ok := strings.Cut(l, ":")
			if p, want := fields[name]; ok && want {
				v := strings.Fields(rest)
				if len(v) >= 1 {
					n, err := strconv.ParseInt(v[0], 10, 64)
					if err != nil {
						return fmt.Errorf("%s: %s: %w", path, name, err)
					}
					*p = n << 10
				}
			}
		}
		return nil
	}
	if err := kb(fmt.Sprintf("/proc/%d/smaps_rollup", pid), map[string]*int64{"Rss": &m.rss, "Pss": &m.pss, "Anonymous": &m.anon}); err != nil {
		return m, err
	}
	if err := kb(fmt.Sprintf("/proc/%d/status", pid), map[string]*int64{"VmHWM": &m.peak}); err != nil {
		return m, err
	}
	return m, nil
}
