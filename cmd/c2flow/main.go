// Command c2flow seals test sectors, sizes circuits, proves C2 directly and
// drives the Temporal pipeline. Run "c2flow help" for the commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	gnarklog "github.com/consensys/gnark/logger"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/direct"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/hosting"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/lab"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/pipeline"
)

func commands() map[string]cli.Command {
	return map[string]cli.Command{
		"seal":    {Summary: "write C1 files of sealed test sectors", Run: lab.RunSeal},
		"c1":      {Summary: "c1 check: verify Filecoin C1 files natively against their sectors' public data", Run: lab.RunC1},
		"circuit": {Summary: "circuit info | setup: size a profile's circuit, make or load its keys", Run: lab.RunCircuit},
		"prove":   {Summary: "direct mode: prove one C1 in this process, no Temporal", Run: direct.RunProve},
		"bench":   {Summary: "bench prover|batch|stats|compare|load: split prover vs gnark, pipeline batches, distributions, regressions vs noise, what processes hold of a circuit", Run: lab.RunBench},
		"server":  {Summary: "server --db postgres://USER@HOST:PORT/DBNAME --history-shards N: the Temporal server c2flow embeds on PostgreSQL, plus the Web UI", Run: hosting.RunServer},
		"s3":      {Summary: "s3 --dir DIR --address HOST:PORT: the S3 server dev embeds (versitygw), on its own; the account from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", Run: hosting.RunS3},
		"dev":     {Summary: "embedded stack: Temporal (SQLite) + S3 (versitygw) + one worker, in this process", Run: hosting.RunDev},
		"demo":    {Summary: "seal one batch of Filecoin 2KiB and test-scheme sectors, prove it through the embedded stack, verify and summarize", Run: lab.RunDemo},
		"submit":  {Summary: "upload C1 files and submit them as a batch (--wait to follow it)", Run: pipeline.RunSubmit},
		"status":  {Summary: "a batch's progress", Run: pipeline.RunStatus},
		"gateway": {Summary: "serve cuzk's gRPC protocol (Curio's [Cuzk] Address) from the fleet: PoRep C2, SnapDeals, WindowPoSt and WinningPoSt proved by the fleet (PoSt first; --forward sends PoSt to a cuzk daemon instead)", Run: hosting.RunGateway},
		"cancel":  {Summary: "cancel a batch: nothing more starts; status then says exactly which C2s were stored", Run: pipeline.RunCancel},
		"verify":  {Summary: "verify --c1 FILE --proof FILE: check a C2 proof against its C1 with the cached verifying key", Run: lab.RunVerify},
		"fleet":   {Summary: "the workers polling the shared queues (as Temporal sees them), and what each host holds: witnesses packed, device-lane expansion, keys and systems (as it publishes them to S3)", Run: pipeline.RunFleet},
		"update":  {Summary: "the test updater (SnapDeals): seal committed-capacity sectors, encode new data, write their update vanilla proofs as Curio stores them and the commitments", Run: lab.RunUpdate},
		"sim":     {Summary: "fleet-scale simulation: W simulated worker hosts on the real workflows, Temporal and budgets; throughput vs ideal, scheduling overhead", Run: lab.RunSim},

		"verify-post":  {Summary: "verify-post --vk FILE | --filecoin-params DIR RECORDS...: verify WindowPoSt and WinningPoSt proofs (one JSON record a line: registered_proof, prover_id, randomness, replicas, proof)", Run: lab.RunVerifyPost},
		"params":       {Summary: "params import --proofs P1,P2 DIR: check a provider's Filecoin parameters once, record their circuits and convert their keys into the files every worker of this box maps", Run: lab.RunParams},
		"plan":         {Summary: "plan --proof P [--gpus N]: what a box needs for a proof (disk, keys and system in memory, per partition, per GPU), from its circuit's counts", Run: lab.RunPlan},
		"post-vanilla": {Summary: "the PoSt test generator: seal committed-capacity sectors (2KiB, 8MiB), write their PoSt vanilla proofs as GenerateSingleVanillaProof returns them and the verify-post record", Run: lab.RunPostVanilla},
		"verify-seal":  {Summary: "verify-seal --vk FILE RECORDS...: verify Filecoin seal proofs (rust-fil-proofs' regression record lines) with a bellperson .vk", Run: lab.RunVerifySeal},
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

// dispatch runs the command args name (the tests call it as main would).
func dispatch(ctx context.Context, args []string) error { return cli.Dispatch(ctx, commands(), args) }
