package lab

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/pipeline"
	"github.com/c2flow/c2flow/cmd/internal/cliflags"
	"github.com/c2flow/c2flow/cmd/internal/procflags"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/scheme/testscheme/params"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
	"github.com/c2flow/c2flow/storage"
)

func RunCircuit(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: c2flow circuit info --proof NAME | info --update-proof NAME | info --post-proof NAME | info|setup --profile P")
	}
	sub, args := args[0], args[1:]
	fs := cli.NewFlags("circuit " + sub)
	profile := fs.String("profile", "32KiB", "profile of the test scheme: "+fmt.Sprint(porep.ProfileNames()))
	proof := fs.String("proof", "", "info: a registered Filecoin seal proof, whose StackedCircuit partition is counted (exclusive with --profile): "+strings.Join(proofs.Names(), ", "))
	update := fs.String("update-proof", "", "info: a registered SnapDeals update proof, whose EmptySectorUpdateCircuit partition is counted (exclusive with --proof and --profile): "+strings.Join(proofs.UpdateNames(), ", "))
	post := fs.String("post-proof", "", "info: a registered PoSt proof, whose FallbackPoSt partition (a WindowPoSt partition, a WinningPoSt) is counted (exclusive with the others): "+strings.Join(proofs.PoStNames(), ", "))
	dir := fs.String("params", params.DefaultDir(), "local parameter cache")
	createBucket := fs.Bool("create-bucket", false, "setup: create the --s3-bucket first if it does not exist (a deployment's one setup step)")
	localOnly := fs.Bool("local-only", false, "setup: keep the keys in the local cache only (default: publish them to the --s3-* storage, where workers and submit find them)")
	var lf procflags.Log
	lf.Add(fs, "info")
	var sf cliflags.S3
	sf.Add(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if n := btoi(given["proof"]) + btoi(given["profile"]) + btoi(given["update-proof"]) + btoi(given["post-proof"]); n > 1 {
		return errors.New("circuit: --proof, --update-proof, --post-proof and --profile are exclusive")
	}
	for _, flag := range []string{"update-proof", "post-proof"} {
		if given[flag] && sub != "info" {
			return fmt.Errorf("circuit %s: --%s is only for info", sub, flag)
		}
	}
	if sub == "info" {
		// One info for every scheme: the one that owns the name counts
		// its circuit (no keys are read).
		set := registry.Schemes(registry.Options{})
		name := *profile
		switch {
		case given["proof"]:
			name = *proof
		case given["post-proof"]:
			// A seal proof's name is a scheme's too: --post-proof takes
			// PoSt proofs alone.
			info, err := proofs.PoStByName(*post)
			if err != nil {
				return fmt.Errorf("circuit info: --post-proof: %w", err)
			}
			name = info.Name
		case given["update-proof"]:
			info, err := proofs.UpdateByName(*update)
			if err != nil {
				return fmt.Errorf("circuit info: --update-proof: %w", err)
			}
			u, err := cli.UpdaterOf(set)
			if err != nil {
				return fmt.Errorf("circuit info: %w", err)
			}
			name = u.UpdateProofName(info)
		}
		sc, err := set.For(name)
		if err != nil {
			return fmt.Errorf("circuit info: %w", err)
		}
		iw, err := scheme.As[scheme.InfoWriter](sc, "circuit info")
		if err != nil {
			return fmt.Errorf("circuit info: %w", err)
		}
		return iw.WriteInfo(os.Stdout, name)
	}
	if given["proof"] {
		return fmt.Errorf("circuit %s: --proof is only for info (Filecoin proofs use Filecoin's published parameters)", sub)
	}
	p, err := porep.LookupProfile(*profile)
	if err != nil {
		return err
	}
	switch sub {
	case "setup":
		log, err := lf.Logger()
		if err != nil {
			return err
		}
		t0 := time.Now()
		if *localOnly {
			k, err := params.Load(ctx, params.DirStore{Root: *dir}, p, log)
			if err != nil {
				return err
			}
			fmt.Printf("profile %s digest %s: keys ready in %v under %s/%s\n", p.Name, k.Digest, time.Since(t0).Round(time.Millisecond), *dir, k.Prefix())
		} else {
			// Storage first: keys already published are downloaded, never
			// made again here. A second development setup would be other
			// keys, and a host proving with them fails every verification.
			if *createBucket {
				st, err := storage.Open(ctx, sf.Config())
				if err == nil {
					err = st.EnsureBucket(ctx)
				}
				if err != nil {
					return fmt.Errorf("create bucket %s: %w", sf.Bucket, err)
				}
			}
			store, err := sf.Open(ctx)
			if err != nil {
				return fmt.Errorf("publish keys (or --local-only): %w", err)
			}
			if err := pipeline.KeySchemes(*dir, store, log).EnsureKeys(ctx, []string{p.Name}, true, os.Stdout); err != nil {
				return fmt.Errorf("publish keys: %w", err)
			}
			fmt.Printf("profile %s: keys ready in %v, cached under %s and published to bucket %s\n", p.Name, time.Since(t0).Round(time.Millisecond), *dir, store.Config().Bucket)
		}
		fmt.Println("WARNING: keys from groth16.Setup are a single-party DEVELOPMENT setup; never use them for real sectors.")
		return nil
	}
	return fmt.Errorf("unknown circuit subcommand %q (info or setup)", sub)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
