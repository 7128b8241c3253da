// Command c2flow seals test sectors, sizes circuits, proves C2 directly and
// drives the Temporal pipeline. Run "c2flow help" for the commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"syscall"

	gnarklog "github.com/consensys/gnark/logger"

	"github.com/c2flow/c2flow/cmd/internal/cliflags"
)

type command struct {
	summary string
	run     func(ctx context.Context, args []string) error
}

func commands() map[string]command {
	return map[string]command{
		"seal":    {"write C1 files of sealed test sectors", runSeal},
		"c1":      {"c1 check: verify Filecoin C1 files natively against their sectors' public data", runC1},
		"circuit": {"circuit info | setup: size a profile's circuit, make or load its keys", runCircuit},
		"prove":   {"direct mode: prove one C1 in this process, no Temporal", runProve},
		"bench":   {"bench prover|batch|stats|compare: split prover vs gnark, pipeline batches, distributions, regressions vs noise", runBench},
		"server":  {"server --db postgres://USER@HOST:PORT/DBNAME --history-shards N: the Temporal server c2flow embeds on PostgreSQL, plus the Web UI", runServer},
		"dev":     {"embedded stack: Temporal (SQLite) + S3 (versitygw) + one worker, in this process", runDev},
		"demo":    {"seal one batch of Filecoin 2KiB and test-scheme sectors, prove it through the embedded stack, verify and summarize", runDemo},
		"submit":  {"upload C1 files and submit them as a batch (--wait to follow it)", runSubmit},
		"status":  {"a batch's progress", runStatus},
		"gateway": {"serve cuzk's gRPC protocol (Curio's [Cuzk] Address) from the fleet: PoRep C2 proved here, other kinds forwarded (--forward) or refused", runGateway},
		"cancel":  {"cancel a batch: nothing more starts; status then says exactly which C2s were stored", runCancel},
		"verify":  {"verify --c1 FILE --proof FILE: check a C2 proof against its C1 with the cached verifying key", runVerify},
		"fleet":   {"the workers polling the shared queues: id, host, roles, devices, budget, as Temporal sees them", runFleet},
		"sim":     {"fleet-scale simulation: W simulated worker hosts on the real workflows, Temporal and budgets; throughput vs ideal, scheduling overhead", runSim},

		"verify-seal": {"verify-seal --vk FILE RECORDS...: verify Filecoin seal proofs (rust-fil-proofs' regression record lines) with a bellperson .vk", runVerifySeal},
	}
}

// signalContext ends at SIGINT or SIGTERM; it also turns gnark's own
// log off (gnark logs to stdout; c2flow's logs go to stderr through slog).
func signalContext() (context.Context, context.CancelFunc) {
	gnarklog.Disable()
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func main() {
	ctx, stop := signalContext()
	defer stop()
	if err := dispatch(ctx, os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "c2flow:", err)
		os.Exit(1)
	}
}

func dispatch(ctx context.Context, args []string) error {
	cmds := commands()
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(cmds)
		return nil
	}
	c, ok := cmds[args[0]]
	if !ok {
		usage(cmds)
		return fmt.Errorf("unknown command %q", args[0])
	}
	return c.run(ctx, args[1:])
}

func usage(cmds map[string]command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(os.Stderr, "usage: c2flow <command> [flags]\n\ncommands:")
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", n, cmds[n].summary)
	}
}

// newFlags returns a flag set whose errors are returned, not fatal: main
// prints them once (the flag package would print them too), after the
// usage.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("c2flow "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fs.SetOutput(os.Stderr)
		defer fs.SetOutput(io.Discard)
		fmt.Fprintf(os.Stderr, "usage of %s:\n", fs.Name())
		fs.PrintDefaults()
	}
	return fs
}

// parseInterspersed parses flags that may come after positional
// arguments (c2flow bench compare A.json B.json --plot p.svg) and returns
// the positional ones; "vs" and "--" stay as positional separators.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// logFlags are cliflags.Log under the names the commands use.
type logFlags struct{ cliflags.Log }

func (l *logFlags) add(fs *flag.FlagSet) {
	def := l.Level
	if def == "" {
		def = "info"
	}
	l.Log.Add(fs, def)
}

func (l *logFlags) logger() (*slog.Logger, error) { return l.Log.Logger() }
