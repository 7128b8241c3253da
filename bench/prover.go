// Package bench measures c2flow: the split prover against gnark's own
// prover, and (with the pipeline) batches of proofs.
package bench

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/frontend"

	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/scheme/testscheme"
	"github.com/c2flow/c2flow/scheme/testscheme/params"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
	"github.com/c2flow/c2flow/scheme/testscheme/porep/circuit"
)

// ProverRun is one alternation: the split prover and gnark's Prove on the
// same partition.
type ProverRun struct {
	Split    time.Duration // synthesize + Start + Finalize
	Synth    time.Duration
	Device   time.Duration // Start: NTTs + G1 MSMs
	NTT      time.Duration
	MSMG1    time.Duration
	Finalize time.Duration // Finalize: G2 MSM + assembly
	G2       time.Duration
	Gnark    time.Duration // groth16.Prove, solving included
}

// ProverReport summarizes runs by medians.
type ProverReport struct {
	Profile     string
	Constraints int
	EarlyG2     bool
	Device      string
	Runs        []ProverRun
}

// ProverBench alternates split and gnark proves of partition 0 of c1, runs
// times each; both proofs are verified so a fast wrong prover cannot win.
func ProverBench(ctx context.Context, p *prover.Prover, keys *params.Keys, slots *gpu.Slots, c1 *porep.C1, runs int) (*ProverReport, error) {
	rep := &ProverReport{Profile: c1.Profile.Name, Constraints: keys.CCS.GetNbConstraints(), EarlyG2: p.EarlyG2, Device: slots.Devices()[0].Name()}
	st := c1.Statement()
	for i := 0; i < runs; i++ {
		var r ProverRun
		t0 := time.Now()
		sol, err := testscheme.Synthesize(ctx, keys, c1, 0)
		if err != nil {
			return nil, err
		}
		r.Synth = sol.SynthTime
		pt, err := p.Start(ctx, slots, sol)
		if err != nil {
			return nil, err
		}
		r.Device, r.NTT, r.MSMG1 = pt.DeviceTime, pt.NTTTime, pt.MSMTime
		proof, fin, err := p.Finalize(ctx, pt)
		if err != nil {
			return nil, err
		}
		r.Split, r.Finalize, r.G2 = time.Since(t0), fin, pt.G2Time()
		if err := testscheme.Verify(keys.VK, st, 0, proof); err != nil {
			return nil, fmt.Errorf("split proof: %w", err)
		}

		w, err := frontend.NewWitness(circuit.Assignment(st, c1.CommC, c1.CommRLast, c1.Partitions[0]), ecc.BLS12_381.ScalarField())
		if err != nil {
			return nil, err
		}
		t1 := time.Now()
		gp, err := groth16.Prove(keys.CCS, keys.PK, w)
		if err != nil {
			return nil, fmt.Errorf("gnark prove: %w", err)
		}
		r.Gnark = time.Since(t1)
		pub, err := w.Public()
		if err != nil {
			return nil, err
		}
		if err := groth16.Verify(gp, keys.VK, pub); err != nil {
			return nil, fmt.Errorf("gnark proof: %w", err)
		}
		rep.Runs = append(rep.Runs, r)
	}
	return rep, nil
}

func median(v []time.Duration) time.Duration {
	s := append([]time.Duration(nil), v...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func (r *ProverReport) med(f func(ProverRun) time.Duration) time.Duration {
	v := make([]time.Duration, len(r.Runs))
	for i, run := range r.Runs {
		v[i] = f(run)
	}
	return median(v)
}

// Ratio is median(split) / median(gnark): the goal is <= 1.05.
func (r *ProverReport) Ratio() float64 {
	return float64(r.med(func(x ProverRun) time.Duration { return x.Split })) /
		float64(r.med(func(x ProverRun) time.Duration { return x.Gnark }))
}

// DeviceShare is the device phase's share of the prove after synthesis,
// median(device) / median(device + finalize): the goal is <= 0.75, the G2
// finalize kept off the device.
func (r *ProverReport) DeviceShare() float64 {
	return float64(r.med(func(x ProverRun) time.Duration { return x.Device })) /
		float64(r.med(func(x ProverRun) time.Duration { return x.Device + x.Finalize }))
}

// Print writes the report.
func (r *ProverReport) Print(w io.Writer) {
	ms := func(f func(ProverRun) time.Duration) string {
		return fmt.Sprintf("%8.0f", float64(r.med(f).Microseconds())/1000)
	}
	compute := r.med(func(x ProverRun) time.Duration { return x.NTT + x.MSMG1 + x.G2 })
	pct := func(f func(ProverRun) time.Duration) string {
		return fmt.Sprintf("%5.1f%%", 100*float64(r.med(f))/float64(compute))
	}
	fmt.Fprintf(w, "profile %s, %d constraints, %d alternating runs, device %s, early_g2=%v (medians, ms)\n", r.Profile, r.Constraints, len(r.Runs), r.Device, r.EarlyG2)
	fmt.Fprintf(w, "  gnark groth16.Prove     %s\n", ms(func(x ProverRun) time.Duration { return x.Gnark }))
	fmt.Fprintf(w, "  split prove (total)     %s\n", ms(func(x ProverRun) time.Duration { return x.Split }))
	fmt.Fprintf(w, "    synthesis             %s\n", ms(func(x ProverRun) time.Duration { return x.Synth }))
	fmt.Fprintf(w, "    device phase          %s\n", ms(func(x ProverRun) time.Duration { return x.Device }))
	fmt.Fprintf(w, "      NTT (H)             %s  %s of compute\n", ms(func(x ProverRun) time.Duration { return x.NTT }), pct(func(x ProverRun) time.Duration { return x.NTT }))
	fmt.Fprintf(w, "      G1 MSMs             %s  %s of compute\n", ms(func(x ProverRun) time.Duration { return x.MSMG1 }), pct(func(x ProverRun) time.Duration { return x.MSMG1 }))
	fmt.Fprintf(w, "    finalize              %s\n", ms(func(x ProverRun) time.Duration { return x.Finalize }))
	fmt.Fprintf(w, "      G2 MSM              %s  %s of compute\n", ms(func(x ProverRun) time.Duration { return x.G2 }), pct(func(x ProverRun) time.Duration { return x.G2 }))
	fmt.Fprintf(w, "split/gnark time ratio    %.3f (goal <= 1.05)\n", r.Ratio())
	fmt.Fprintf(w, "device share of prove     %.3f (device / (device + finalize); goal <= 0.75)\n", r.DeviceShare())
}
