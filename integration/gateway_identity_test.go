package integration

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/devstack"
	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/filecoin/snark"
	"github.com/c2flow/c2flow/gateway"
	"github.com/c2flow/c2flow/gateway/cuzkpb"
	"github.com/c2flow/c2flow/internal/jsonform"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/storage/s3test"
)

// The same content in other bytes is one job (issue 38 item 11): four
// Curio envelopes of one C1 (as Curio writes it, reindented, its keys
// reversed, both) get one job id from the gateway and
// store one input, the canonical C1, which `c2flow submit` of the bare C1
// file names too; a SnapDeals update sent as vanilla_proofs and as a
// reindented snap-vproof.json, and its input file reindented, are one job
// too. No worker runs: the jobs are started, not proved.
func TestGatewayIdentityIsContent(t *testing.T) {
	ctx := context.Background()
	store := s3test.Start(t).Store("c2flow")
	srv, err := devstack.Start(devstack.Options{DBFile: filepath.Join(t.TempDir(), "temporal.db"), Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	tc, err := client.Dial(client.Options{HostPort: srv.Addr(), Namespace: srv.Namespace(), Logger: tlog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)
	set := registry.Schemes(registry.Options{})
	gw := gateway.New(gateway.Config{Temporal: tc, Store: store, Schemes: set})
	const miner = 1000
	prover := proofs.ProverID(miner)
	hints := scheme.Hints{ProverID: hex.EncodeToString(prover[:])}
	submit := func(name string, raw []byte, h scheme.Hints) job.Ref {
		t.Helper()
		refs, err := batch.UploadInputs(ctx, store, []batch.Input{{Name: name, Raw: raw}}, func(ctx context.Context, path string, raw []byte) (job.Ref, []byte, error) {
			_, ref, canon, err := set.Identify(ctx, path, raw, h)
			return ref, canon, err
		})
		if err != nil {
			t.Fatal(err)
		}
		return refs[0]
	}
	jobsOf := func(kind string, reqs map[string]*cuzkpb.SubmitProofRequest) string {
		t.Helper()
		ids := map[string][]string{}
		for name, r := range reqs {
			res, err := gw.SubmitProof(ctx, r)
			if err != nil {
				t.Fatalf("%s, %s: %v", kind, name, err)
			}
			ids[res.GetJobId()] = append(ids[res.GetJobId()], name)
		}
		if len(ids) != 1 {
			t.Fatalf("%s: %d requests of one content made %d jobs: %v", kind, len(reqs), len(ids), ids)
		}
		for id := range ids {
			return id
		}
		return ""
	}
	storedInputs := func(sector uint64) []string {
		t.Helper()
		keys, err := store.List(ctx, fmt.Sprintf("c1/%x/%d/", prover, sector))
		if err != nil {
			t.Fatal(err)
		}
		return keys
	}

	// PoRep.
	sealed, err := seal.Seal(ctx, seal.TestParams(proofs.StackedDrg2KiBV1_1, prover, 7))
	if err != nil {
		t.Fatal(err)
	}
	canon, err := c1.Marshal(sealed.C1)
	if err != nil {
		t.Fatal(err)
	}
	info, err := proofs.Lookup(proofs.StackedDrg2KiBV1_1)
	if err != nil {
		t.Fatal(err)
	}
	envelope, err := c1.MarshalCommit2In(7, sealed.C1)
	if err != nil {
		t.Fatal(err)
	}
	indented, reversed := mustForm(t, jsonform.Indent, envelope), mustForm(t, jsonform.ReverseKeys, envelope)
	request := func(env []byte) *cuzkpb.SubmitProofRequest {
		return &cuzkpb.SubmitProofRequest{ProofKind: cuzkpb.ProofKind_POREP_SEAL_COMMIT, RegisteredProof: uint64(proofs.StackedDrg2KiBV1_1),
			SectorSize: info.SectorSize, MinerId: miner, SectorNumber: 7, VanillaProof: env}
	}
	id := jobsOf("PoRep", map[string]*cuzkpb.SubmitProofRequest{"as Curio sends it": request(envelope), "reindented": request(indented),
		"keys reversed": request(reversed), "keys reversed, reindented": request(mustForm(t, jsonform.Indent, reversed))})
	ref := submit("7.c1.json", mustForm(t, jsonform.ReverseKeys, canon), hints)
	if want := "porep/" + info.Name + "/" + ref.Identity(); id != want {
		t.Errorf("the gateway's job %s, `c2flow submit` of the bare C1's %s", id, want)
	}
	if keys := storedInputs(7); len(keys) != 1 {
		t.Errorf("%d inputs stored for sector 7: %v", len(keys), keys)
	}
	if got, err := store.GetC1(ctx, ref); err != nil || !bytes.Equal(got, canon) {
		t.Errorf("the stored input is not the canonical C1 (%d bytes, %d canonical): %v", len(got), len(canon), err)
	}

	// SnapDeals.
	dir := t.TempDir()
	files, err := snark.New(snark.Params{}, nil).Update().SealTest(ctx, scheme.SealRequest{Proof: snark.UpdatePrefix + "StackedDrg2KiBV1", Prover: prover, First: 8, N: 1, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	in, _, err := snark.DecodeUpdateInput(raw)
	if err != nil {
		t.Fatal(err)
	}
	curio, err := json.Marshal(in.Vanilla)
	if err != nil {
		t.Fatal(err)
	}
	snap := func(r *cuzkpb.SubmitProofRequest) *cuzkpb.SubmitProofRequest {
		r.ProofKind, r.RegisteredProof, r.SectorSize, r.MinerId, r.SectorNumber = cuzkpb.ProofKind_SNAP_DEALS_UPDATE, uint64(in.Proof.Proof), in.Proof.SectorSize, miner, 8
		r.CommROld, r.CommRNew, r.CommDNew = in.CommROld[:], in.CommRNew[:], in.CommDNew[:]
		return r
	}
	id = jobsOf("SnapDeals", map[string]*cuzkpb.SubmitProofRequest{"vanilla_proofs": snap(&cuzkpb.SubmitProofRequest{VanillaProofs: in.Vanilla}),
		"snap-vproof.json reindented": snap(&cuzkpb.SubmitProofRequest{VanillaProof: mustForm(t, jsonform.Indent, curio)})})
	ref = submit("8.update.json", mustForm(t, jsonform.Indent, raw), scheme.Hints{})
	if want := "snap/" + ref.Proof + "/" + ref.Identity(); id != want {
		t.Errorf("the gateway's job %s, `c2flow submit` of the update input reindented %s", id, want)
	}
	if keys := storedInputs(8); len(keys) != 1 {
		t.Errorf("%d inputs stored for sector 8: %v", len(keys), keys)
	}
}

// mustForm is form(b) (jsonform), failing the test on an error.
func mustForm(t *testing.T, form func([]byte) ([]byte, error), b []byte) []byte {
	t.Helper()
	out, err := form(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
