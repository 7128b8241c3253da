package lab

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/cmd/internal/cliflags"
	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/params"
	"github.com/c2flow/c2flow/porep"
	"github.com/c2flow/c2flow/storage"
)

func RunCircuit(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: c2flow circuit info --proof NAME | info|setup --profile P")
	}
	sub, args := args[0], args[1:]
	fs := cli.NewFlags("circuit " + sub)
	profile := fs.String("profile", "32KiB", "profile of the test scheme: "+fmt.Sprint(porep.ProfileNames()))
	proof := fs.String("proof", "", "info: a registered Filecoin seal proof, whose StackedCircuit partition is counted (exclusive with --profile): "+strings.Join(proofs.Names(), ", "))
	dir := fs.String("params", params.DefaultDir(), "local parameter cache")
	createBucket := fs.Bool("create-bucket", false, "setup: create the --s3-bucket first if it does not exist (a deployment's one setup step)")
	localOnly := fs.Bool("local-only", false, "setup: keep the keys in the local cache only (default: publish them to the --s3-* storage, where workers and submit find them)")
	var lf cliflags.Log
	lf.Add(fs, "info")
	var sf cliflags.S3
	sf.Add(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["proof"] {
		if set["profile"] {
			return errors.New("circuit: --proof and --profile are exclusive")
		}
		if sub != "info" {
			return fmt.Errorf("circuit %s: --proof is only for info (Filecoin proofs use Filecoin's published parameters)", sub)
		}
		info, err := proofs.ByName(*proof)
		if err != nil {
			return fmt.Errorf("circuit info: %w", err)
		}
		return filecoinCircuitInfo(os.Stdout, info)
	}
	p, err := porep.LookupProfile(*profile)
	if err != nil {
		return err
	}
	switch sub {
	case "info":
		return circuitInfo(p)
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
			if err := batch.EnsureKeys(ctx, store, *dir, []porep.Profile{p}); err != nil {
				return fmt.Errorf("publish keys: %w", err)
			}
			fmt.Printf("profile %s: keys ready in %v, cached under %s and published to bucket %s\n", p.Name, time.Since(t0).Round(time.Millisecond), *dir, store.Config().Bucket)
		}
		fmt.Println("WARNING: keys from groth16.Setup are a single-party DEVELOPMENT setup; never use them for real sectors.")
		return nil
	}
	return fmt.Errorf("unknown circuit subcommand %q (info or setup)", sub)
}

func circuitInfo(p porep.Profile) error {
	t0 := time.Now()
	ccs, digest, err := params.Compile(p)
	if err != nil {
		return err
	}
	compile := time.Since(t0)
	nc := ccs.GetNbConstraints()
	wires := ccs.GetNbPublicVariables() + ccs.GetNbSecretVariables() + ccs.GetNbInternalVariables()
	domain := 1
	for domain < nc {
		domain <<= 1
	}
	// The solver holds the wires and a, b, c (one element per constraint
	// each), 32 bytes an element.
	synth := uint64(wires+3*nc) * 32
	// Upper bound of the raw proving key: A, B in G1 and B in G2 per wire,
	// K per private wire, Z per domain point; 96 bytes a raw G1 point, 192 a G2.
	private := wires - ccs.GetNbPublicVariables()
	pk := uint64(2*wires+private+domain)*96 + uint64(wires)*192

	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "profile\t%s (%s)\n", p.Name, p.Note)
	fmt.Fprintf(w, "sector\t%s, %d nodes, %d layers, binary trees of depth %d\n", human(p.SectorBytes()), p.Nodes(), p.Layers, p.Depth)
	fmt.Fprintf(w, "partitions\t%d x %d challenges\n", p.Partitions, p.Challenges)
	fmt.Fprintf(w, "circuit digest\t%s\n", digest)
	fmt.Fprintf(w, "constraints / partition\t%d (FFT domain 2^%d)\n", nc, log2(domain))
	fmt.Fprintf(w, "wires\t%d (public %d incl. the constant one, secret %d, internal %d)\n", wires, ccs.GetNbPublicVariables(), ccs.GetNbSecretVariables(), ccs.GetNbInternalVariables())
	fmt.Fprintf(w, "public inputs\t%d\n", ccs.GetNbPublicVariables()-1)
	fmt.Fprintf(w, "synthesis memory\t%s per partition ((wires + 3 x constraints) x 32 B)\n", human(synth))
	fmt.Fprintf(w, "proving key (raw)\t<= %s\n", human(pk))
	fmt.Fprintf(w, "compile time\t%v\n", compile.Round(time.Millisecond))
	return w.Flush()
}

// filecoinCircuitInfo counts one partition of a registered proof's
// StackedCircuit (the blank circuit, with r1cs.Counter: no matrix is
// stored, so the 32GiB circuit fits a small machine) and writes its sizes
// to w: human lines, then one line of exactly the key=value pairs
// constraints= (as synthesized, without bellperson's per-input
// constraints) inputs= (ONE included) aux= a_nnz= b_nnz= c_nnz= (nonzeros
// without the per-input constraints), then the synthesis memory of one
// partition.
func filecoinCircuitInfo(w io.Writer, info proofs.SealProofInfo) error {
	s := circuit.ShapeOf(info)
	t0 := time.Now()
	cnt := r1cs.NewCounter()
	if err := circuit.Synthesize(cnt, s, nil); err != nil {
		return fmt.Errorf("circuit info %s: counting: %w", info.Name, err)
	}
	if err := cnt.Err(); err != nil {
		return fmt.Errorf("circuit info %s: counting: %w", info.Name, err)
	}
	took := time.Since(t0)
	st := cnt.Stats()
	// bellperson's prover appends input_i · 0 = 0 per input: a, b and c
	// have one entry per synthesized constraint and per input.
	rows := uint64(st.Constraints) + uint64(st.Inputs)
	abc := 3 * 32 * rows
	assignment := 32 * uint64(st.Inputs+st.Aux)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "proof\t%s (id %d, api %v)\n", info.Name, info.ID(), info.APIVersion)
	fmt.Fprintf(tw, "sector\t%s, %d nodes, %d layers, tree R/C %s\n", human(info.SectorSize), info.Nodes, info.Layers, info.TreeR)
	fmt.Fprintf(tw, "partitions\t%d x %d challenges\n", info.Partitions, info.ChallengesPerPartition)
	fmt.Fprintf(tw, "circuit shape\t%v\n", s)
	fmt.Fprintf(tw, "constraints / partition\t%d synthesized + %d per-input = %d (FFT domain 2^%d)\n", st.Constraints, st.Inputs, rows, log2(int(rows)))
	fmt.Fprintf(tw, "variables\t%d inputs (ONE included), %d aux\n", st.Inputs, st.Aux)
	fmt.Fprintf(tw, "nonzeros\tA %d, B %d, C %d (synthesized constraints)\n", st.ANNZ, st.BNNZ, st.CNNZ)
	fmt.Fprintf(tw, "densities\tA aux %d, B inputs %d, B aux %d\n", st.AAuxDensity, st.BInputDensity, st.BAuxDensity)
	fmt.Fprintf(tw, "count time\t%v\n", took.Round(time.Millisecond))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "constraints=%d inputs=%d aux=%d a_nnz=%d b_nnz=%d c_nnz=%d\n",
		st.Constraints, st.Inputs, st.Aux, st.ANNZ, st.BNNZ, st.CNNZ)
	_, err := fmt.Fprintf(w, "synthesis memory per partition: %d B (%s) = a, b, c %d B (%s: 3 x 32 B x %d rows, the constraints and the per-input ones) + assignment %d B (%s: 32 B x %d inputs and aux)\n",
		abc+assignment, human(abc+assignment), abc, human(abc), rows, assignment, human(assignment), st.Inputs+st.Aux)
	return err
}

func log2(n int) int {
	k := 0
	for 1<<k < n {
		k++
	}
	return k
}

func human(b uint64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := uint64(unit), 0
	for n := b / unit; n >= unit; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(b)/float64(div), "KMGTPE"[exp])
}
