package lab

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/c2flow/c2flow/activities"
	"github.com/c2flow/c2flow/bench"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/cmd/internal/procflags"
	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/post"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/stack"
	"github.com/c2flow/c2flow/storage"
	"github.com/c2flow/c2flow/storage/s3server"
)

// runBenchWitness is `c2flow bench witness`: one large partition
// synthesized packed, its system recorded and its rows checked (or
// several held at once), optionally spilled through S3 and back.
func runBenchWitness(ctx context.Context, args []string) error {
	fs := cli.NewFlags("bench witness")
	proof := fs.String("proof", "", "a Filecoin seal proof (StackedDrg32GiBV1_1): a sparse-sealed C1's partition (--c1 to read one instead)")
	c1File := fs.String("c1", "", "with --proof: the C1 file (as `c2flow seal --proof P` writes one) instead of sealing here")
	updateProof := fs.String("update-proof", "", "a Filecoin SnapDeals update proof (StackedDrg32GiBV1): a partition of a sparse-sealed committed-capacity sector updated with zero data")
	postProof := fs.String("post-proof", "", "a Filecoin PoSt proof (StackedDrgWindow32GiBV1_2): a partition of --vproof's sector, padded to the partition's sector count")
	vproof := fs.String("vproof", "", "with --post-proof: a sector's PoSt vanilla proof in bincode (curio's lib/proof/testgolden/post.vproof; testdata/curio/post.vproof here)")
	postPub := fs.String("post-pub", "", "with --post-proof: its WindowPoStVerifyInfo JSON (curio's postpub.json; testdata/curio/postpub.json here)")
	partition := fs.Int("partition", 0, "the partition measured (the first held)")
	hold := fs.Int("hold", 1, "synthesize this many partitions and hold them at once (no system, no row check)")
	chunk := fs.Int("chunk", 1<<22, "rows of a, b, c evaluated at once in the row check")
	spill := fs.String("spill", "", "also spill the partition and load it back: s3 (an embedded S3 server under --dir) or dir:PATH")
	dir := fs.String("dir", ".c2flow/bench-witness", "the embedded S3 server's data (with --spill s3)")
	var lf procflags.Log
	lf.Add(fs, "info")
	if err := fs.Parse(args); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if btoi(given["proof"])+btoi(given["update-proof"])+btoi(given["post-proof"]) != 1 {
		return errors.New("bench witness: one of --proof, --update-proof and --post-proof")
	}
	log, err := lf.Logger()
	if err != nil {
		return err
	}
	var wc bench.WitnessCircuit
	switch {
	case *proof != "":
		info, err := proofs.ByName(*proof)
		if err != nil {
			return fmt.Errorf("--proof: %w", err)
		}
		var c *c1.SealCommitPhase1Output
		if *c1File != "" {
			a, err := c1.DecodeFile(*c1File, c1.WithProof(info.Proof))
			if err != nil {
				return fmt.Errorf("--c1: %w", err)
			}
			c = a.C1
		} else {
			t0 := time.Now()
			var prover [32]byte
			prover[0] = 7
			sealed, err := seal.SealSparse(ctx, seal.TestParams(info.Proof, prover, 1))
			if err != nil {
				return fmt.Errorf("seal a sparse %s sector: %w", info.Name, err)
			}
			c = sealed.C1
			log.Info("sealed a sparse sector", "proof", info.Name, "seal_ms", time.Since(t0).Milliseconds())
		}
		if wc, err = bench.PoRepWitness(c); err != nil {
			return err
		}
	case *updateProof != "":
		if wc, err = bench.UpdateWitness(ctx, *updateProof); err != nil {
			return err
		}
	default:
		if *vproof == "" || *postPub == "" {
			return errors.New("bench witness --post-proof: --vproof and --post-pub name a sector's vanilla proof and its verify info (testdata/curio/post.vproof and postpub.json)")
		}
		vp, err := os.ReadFile(*vproof)
		if err != nil {
			return err
		}
		pj, err := os.ReadFile(*postPub)
		if err != nil {
			return err
		}
		pub, err := post.ParseVerifyInfo(pj)
		if err != nil {
			return fmt.Errorf("--post-pub: %w", err)
		}
		if wc, err = bench.PoStWitness(*postProof, vp, pub); err != nil {
			return err
		}
	}
	o := bench.WitnessOptions{Partition: *partition, Hold: *hold, Chunk: *chunk, Log: log}
	switch {
	case *spill == "s3":
		st, stop, err := benchS3(ctx, *dir)
		if err != nil {
			return err
		}
		defer stop()
		o.Spill = activities.S3Spill{Store: st}
	case strings.HasPrefix(*spill, "dir:"):
		o.Spill = activities.DirSpill{Root: strings.TrimPrefix(*spill, "dir:")}
	case *spill != "":
		return fmt.Errorf("--spill %q: s3 or dir:PATH", *spill)
	}
	rep, err := bench.Witness(ctx, wc, o)
	if err != nil {
		return err
	}
	fmt.Println(rep.Line())
	return nil
}

// benchS3 runs an embedded S3 server under dir and returns its store.
func benchS3(ctx context.Context, dir string) (*storage.Store, func(), error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, err
	}
	addr, err := s3server.FreeAddr()
	if err != nil {
		return nil, nil, err
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() {
		done <- s3server.Run(sctx, s3server.Config{Addr: addr, Dir: filepath.Join(dir, "s3"), AccessKey: stack.S3AccessKey, SecretKey: stack.S3SecretKey})
	}()
	stop := func() { cancel(); <-done }
	if err := s3server.WaitReady(ctx, addr); err != nil {
		stop()
		return nil, nil, err
	}
	st, err := storage.Open(ctx, storage.Config{Endpoint: "http://" + addr, Bucket: "c2flow", AccessKey: stack.S3AccessKey, SecretKey: stack.S3SecretKey, PathStyle: true})
	if err == nil {
		err = st.EnsureBucket(ctx)
	}
	if err != nil {
		stop()
		return nil, nil, err
	}
	return st, stop, nil
}
