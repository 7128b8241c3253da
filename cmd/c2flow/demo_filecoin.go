package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/filecoin/c2"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme"
)

// runFilecoinDemo is c2flow demo --proof: Filecoin sectors sealed by
// c2flow's test sealer (C1s exactly as filecoin-ffi writes them), proved
// through the same stack and workflows as the test scheme's, with
// Filecoin-format DEVELOPMENT parameters published to S3 (the worker has
// none locally and downloads them), and every stored C2 (Filecoin's
// concatenated 192-byte proofs) checked against its C1 under the .vk.
func runFilecoinDemo(ctx context.Context, d *devFlags, proof string, sectors int) error {
	info, err := proofs.ByName(proof)
	if err != nil {
		return fmt.Errorf("--proof: %w", err)
	}
	shown := d.dir
	logs, err := d.openLogs("demo")
	if err != nil {
		return err
	}
	defer logs.close()
	dir := d.dir

	// 1. Seal.
	c1dir := filepath.Join(dir, "filecoin-c1")
	files, err := sealFreshFilecoin(ctx, c1dir, info.Name, sectors) // fresh sector ids: a demo run proves, it does not find old results
	if err != nil {
		return err
	}
	fmt.Printf("1. sealed %d %s sectors (%d partitions each) into %s (sectors.json: their prover and public data)\n", sectors, info.Name, info.Partitions, c1dir)

	// 2. Stack: the worker's Filecoin parameter directory starts empty.
	hc, err := d.hostCfg()
	if err != nil {
		return err
	}
	if hc.ParamsDir, err = filepath.Abs(hc.ParamsDir); err != nil {
		return err
	}
	workerParams := filepath.Join(dir, "worker-filecoin-params")
	fmt.Println("2. starting the embedded stack: Temporal (SQLite), S3 (versitygw), one worker (its Filecoin parameter directory empty)")
	t0 := time.Now()
	d.filecoinParams = workerParams
	st, err := d.start(ctx, nil, logs, logs.steps)
	if err != nil {
		return err
	}
	defer st.Stop()
	fmt.Printf("   up in %v: temporal %s, s3 http://%s\n", time.Since(t0).Round(time.Millisecond), st.Temporal.Addr(), st.S3Addr)
	devDir := filecoinDevParamsDir(hc.ParamsDir)
	if err := publishFilecoinDevSetup(ctx, st.Store, devDir, []string{info.Name}, logs.steps, logs.log); err != nil {
		return err
	}
	fmt.Printf("   published to s3 %s (the worker downloads them on first use)\n", c2.RemotePrefix)

	// 3. Submit: each C1 is bound to its prover and sector (sectors.json)
	// and verified natively before upload.
	refs, err := batch.UploadC1(ctx, st.Store, files, identifyC1(&submitC1Flags{}))
	if err != nil {
		return err
	}
	fmt.Printf("3. submitting; the worker proves up to %d partitions at once (--partition-workers)\n", hc.PartitionWorkers)
	tb := time.Now()
	batchID := fmt.Sprintf("demo-%d", refs[0].SectorID)
	res, err := submitAndWait(ctx, st.Client, st.Store, refs, hc.ParamsDir, batch.Options{BatchID: batchID}, true)
	if err != nil {
		return err
	}
	wall := time.Since(tb)

	// 4. Verify what storage holds, with a scheme of this process over the
	// published parameters, not the worker's.
	fc := c2.New(c2.Params{Dir: devDir}, logs.log)
	circ, err := fc.LoadVerifier(ctx, info.Name) // the .vk alone, as a user verifies
	if err != nil {
		return err
	}
	byID := map[uint64]string{}
	for i, r := range refs {
		byID[r.SectorID] = files[i]
	}
	for _, s := range res.Sectors {
		if s.Status != job.StatusProved {
			return fmt.Errorf("sector %d: %s: %s", s.SectorID, s.Status, s.Error)
		}
		raw, err := os.ReadFile(byID[s.SectorID])
		if err != nil {
			return err
		}
		sec, err := fc.Decode(raw, scheme.Ident{ProverID: s.ProverID, SectorID: s.SectorID, Proof: info.Name})
		if err != nil {
			return err
		}
		_, proof, err := st.Store.GetC2(ctx, s.Ref().Identity())
		if err != nil {
			return err
		}
		if err := circ.VerifyC2(sec, proof); err != nil {
			return fmt.Errorf("sector %d: stored C2 does not verify: %w", s.SectorID, err)
		}
	}
	fmt.Printf("4. every C2 in storage is %d x 192-byte Filecoin proofs verifying under %s (DEVELOPMENT SETUP) (%d sectors)\n",
		info.Partitions, filepath.Base(circ.Files().VK), len(res.Sectors))
	summary(res, wall, st.worker.Stats())
	afterwards(shown, logs, batchID)
	return nil
}
