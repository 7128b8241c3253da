package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/direct"
	"github.com/c2flow/c2flow/filecoin/post"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
)

// RunVerifyPost verifies WindowPoSt and WinningPoSt proofs, one JSON
// record a line, as Filecoin's verify_window_post and verify_winning_post
// do.
func RunVerifyPost(ctx context.Context, args []string) error {
	return verifyPost(ctx, args, os.Stdout, os.Stderr)
}

// verifyPost verifies PoSt records and prints one line per record to out:
// "FILE:LINE: ok (...)" or "FILE:LINE: invalid: REASON". It returns an
// error when any record is invalid or none was read.
func verifyPost(ctx context.Context, args []string, out, logw io.Writer) error {
	fs := cli.NewFlags("verify-post")
	vkPath := fs.String("vk", "", "the PoSt circuit's verifying key, in bellperson's .vk format (v28-proof-of-spacetime-fallback-...vk); every record must be of its circuit")
	params := fs.String("filecoin-params", "", "Filecoin's parameter directory: each record's verifying key found there by its name (parameters.json)")
	files, err := cli.ParseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if (*vkPath == "") == (*params == "") || len(files) == 0 {
		fs.Usage()
		return errors.New("verify-post: usage: c2flow verify-post --vk FILE | --filecoin-params DIR RECORDS... (\"-\": stdin)")
	}
	v := newPostVerifier(*vkPath, *params)
	var ok, invalid int
	t0 := time.Now()
	var ferr error
	for _, name := range files {
		ferr = eachRecordLine(ctx, "verify-post", name, func(n int, line []byte, size int64) {
			if len(line) == 0 && size <= maxRecordLine {
				return
			}
			desc, err := checkPostLine(ctx, v, line, size)
			if err != nil {
				invalid++
				fmt.Fprintf(out, "%s:%d: invalid: %v\n", name, n, err)
				return
			}
			ok++
			fmt.Fprintf(out, "%s:%d: ok (%s)\n", name, n, desc)
		})
		if ferr != nil {
			break
		}
	}
	fmt.Fprintf(logw, "verify-post: %d ok, %d invalid in %v (%s)\n", ok, invalid, time.Since(t0).Round(time.Millisecond), v.describe())
	switch {
	case ferr != nil:
		return ferr
	case invalid > 0:
		return fmt.Errorf("verify-post: %d of %d records invalid", invalid, ok+invalid)
	case ok == 0:
		return errors.New("verify-post: no record verified")
	}
	return nil
}

// checkPostLine parses and verifies one record line; it describes a valid
// one.
func checkPostLine(ctx context.Context, v *postVerifier, line []byte, size int64) (string, error) {
	if size > maxRecordLine {
		return "", fmt.Errorf("line of %d bytes, over the %d MiB a record may take", size, maxRecordLine>>20)
	}
	rec, info, err := post.ParseRecord(line)
	if err != nil {
		return "", err
	}
	if err := v.verify(ctx, info, rec); err != nil {
		return "", fmt.Errorf("%s of %d sectors: %w", info.Name, len(rec.Replicas), err)
	}
	return fmt.Sprintf("%s, %d sectors, %d partitions", info.Name, len(rec.Replicas), len(rec.Partitions())), nil
}

// postVerifier verifies PoSt records through the PoSt scheme, as the
// pipeline verifies a partition's job: each partition's public data from
// the scheme (its PartitionPublic, of the partition's replicas) checked
// by the scheme's verifier of the record's proof. The verifier's key is
// the one the operator names (--vk: every record must be of its circuit)
// or, with --filecoin-params, each proof's key found in that directory by
// its published name (digest-checked against parameters.json) or, for a
// development setup, its IC count; each key is loaded once.
type postVerifier struct {
	set       scheme.Set
	vk        string // --vk, or "" for --filecoin-params
	dir       string
	verifiers map[string]scheme.Verifier
}

func newPostVerifier(vk, dir string) *postVerifier {
	return &postVerifier{set: registry.Schemes(registry.Options{FilecoinParams: dir}), vk: vk, dir: dir, verifiers: map[string]scheme.Verifier{}}
}

func (v *postVerifier) describe() string {
	var keys []string
	for name, ver := range v.verifiers {
		keys = append(keys, name+": "+direct.DescribeKey(ver))
	}
	slices.Sort(keys)
	where := "Filecoin parameters " + v.dir
	if v.vk != "" {
		where = "verifying key " + v.vk
	}
	return fmt.Sprintf("%s; %s", where, strings.Join(keys, "; "))
}

// verifier is the scheme's verifier of info's proof under its key, loaded
// once.
func (v *postVerifier) verifier(ctx context.Context, sc scheme.Scheme, info proofs.PoStProofInfo) (scheme.Verifier, error) {
	if ver := v.verifiers[info.Name]; ver != nil {
		return ver, nil
	}
	var ver scheme.Verifier
	var err error
	if v.vk != "" {
		kv, aerr := scheme.As[keyedVerifier](sc, "a verifier under a named key")
		if aerr != nil {
			return nil, aerr
		}
		if ver, err = kv.VerifierWithKey(ctx, info.Name, v.vk); err != nil {
			return nil, fmt.Errorf("not this proof's key: %w", err)
		}
	} else if ver, err = sc.Verifier(ctx, info.Name); err != nil {
		return nil, fmt.Errorf("no verifying key: %w", err)
	}
	v.verifiers[info.Name] = ver
	return ver, nil
}

// verify checks each partition's Groth16 proof of rec against the public
// data of its replicas.
func (v *postVerifier) verify(ctx context.Context, info proofs.PoStProofInfo, rec *post.Record) error {
	sc, err := v.set.For(info.Name)
	if err != nil {
		return err
	}
	ver, err := v.verifier(ctx, sc, info)
	if err != nil {
		return err
	}
	pp, err := scheme.As[partitionPublic](sc, "PoSt public data")
	if err != nil {
		return err
	}
	replicas := rec.Public()
	for k, b := range rec.Partitions() {
		sec, err := pp.PartitionPublic(info, rec.ProverID, rec.Randomness, k, post.PartitionReplicas(info, replicas, k))
		if err != nil {
			return fmt.Errorf("partition %d: %w", k, err)
		}
		if err := ver.VerifyC2(sec, b); err != nil {
			return fmt.Errorf("partition %d: %w", k, err)
		}
	}
	return nil
}

// partitionPublic is what verify-post asks of the PoSt scheme: a
// partition's public data alone, without vanilla proofs.
type partitionPublic interface {
	PartitionPublic(info proofs.PoStProofInfo, proverID, randomness [32]byte, k int, replicas []post.PublicSector) (scheme.Sector, error)
}

// keyedVerifier is what --vk asks of a scheme: its verifier of a proof
// under a verifying key file the operator names.
type keyedVerifier interface {
	VerifierWithKey(ctx context.Context, proof, path string) (scheme.Verifier, error)
}
