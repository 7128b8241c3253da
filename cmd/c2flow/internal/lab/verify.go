package lab

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/direct"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/scheme/testscheme/params"
)

// RunVerify checks a C2 proof file against the public inputs of its C1,
// for a C1 of any scheme (the scheme whose format it is identifies it),
// or a SnapDeals update proof against its three commitments
// (--update-proof), with the verifying key alone: exit 0 only if every
// partition verifies.
func RunVerify(ctx context.Context, args []string) error {
	fs := cli.NewFlags("verify")
	c1Path := fs.String("c1", "", "the sector's C1 file (or a SnapDeals update input, <id>.update.json)")
	var uf cli.UpdateFlags
	uf.Add(fs)
	proofPath := fs.String("proof", "", "the C2 proof file (as `submit --out` or `prove` writes it)")
	dir := fs.String("params", params.DefaultDir(), "c2flow test-scheme C1: the local parameter cache holding the profile's keys")
	var sf direct.SchemeFlags
	sf.Add(fs, false)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if (*c1Path == "") == (uf.Proof == "") || *proofPath == "" {
		return fmt.Errorf("verify: --proof, and --c1 or --update-proof with the three commitments, are required")
	}
	set, err := sf.Schemes(*dir, false, false, nil)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	var (
		sc   scheme.Scheme
		sec  scheme.Sector
		what string
	)
	if uf.Proof != "" {
		if sec, err = uf.Public(set); err != nil {
			return fmt.Errorf("verify: %w", err)
		}
		if sc, err = set.For(sec.Proof()); err != nil {
			return fmt.Errorf("verify: %w", err)
		}
		what = "the commitments"
	} else {
		raw, err := os.ReadFile(*c1Path)
		if err != nil {
			return fmt.Errorf("verify: %w", err)
		}
		var ref job.Ref
		if sc, ref, raw, err = set.Identify(ctx, *c1Path, raw, sf.Hints); err != nil {
			return fmt.Errorf("verify: %s: %w", *c1Path, err)
		}
		if sec, err = sc.Decode(raw, ref); err != nil {
			return fmt.Errorf("verify: %s: %w", *c1Path, err)
		}
		what = *c1Path
	}
	ref := sec.Proof()
	// The proof file's size first: a file that cannot be this sector's C2
	// is refused before it is read, or any key is.
	proof, err := readProofFile(*proofPath, sec.C2Bytes(), fmt.Sprintf("a %s C2 of %d partitions", ref, sec.Partitions()))
	if err != nil {
		return err
	}
	v, err := sc.Verifier(ctx, ref)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if err := v.VerifyC2(sec, proof); err != nil {
		return fmt.Errorf("verify: %s does not prove %s: %w", *proofPath, what, err)
	}
	fmt.Printf("%s: ok: %d partition proofs verify for %s (%s, %s)\n", *proofPath, sec.Partitions(), sec, ref, direct.DescribeKey(v))
	return nil
}

// readProofFile reads a proof file of at most max bytes (what is
// expected, a C2 of so many partitions): a longer file is refused before
// it is read, never held in memory whole.
func readProofFile(path string, max int64, expected string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > max {
		return nil, fmt.Errorf("verify: proof file %s is %d bytes; %s is %d: not its proof", path, fi.Size(), expected, max)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1)) // a pipe, or a file that grew
	if err != nil {
		return nil, fmt.Errorf("verify: read proof file %s: %w", path, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("verify: proof file %s is over %d bytes; %s is %d: not its proof", path, max, expected, max)
	}
	return b, nil
}
