package deploy

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/gateway/cuzkpb"
)

// c1OutputWrapper is curio lib/ffi/cuzk_funcs.go's envelope of a C1, field
// for field (as cmd/c2flow's gateway tests have it).
type c1OutputWrapper struct {
	SectorNum  int64  `json:"SectorNum"`
	Phase1Out  []byte `json:"Phase1Out"`
	SectorSize uint64 `json:"SectorSize"`
}

// curioPoRep sends one 2KiB PoRep C2 to the compose gateway as Curio sends
// it, ported from cmd/c2flow's curioClient and curioSector: Curio's
// lib/cuzk/client.go dial (a bare HOST:PORT through dns:///, plaintext,
// 256 MiB messages both ways) and PoRepSnarkCuzk's request (the C1 JSON in
// Curio's envelope), one Prove whose result must be COMPLETED. The proof
// is then checked on the host with `c2flow verify` under the DEVELOPMENT
// parameters submit --dev-setup published (so it runs after a Filecoin
// batch), and must fail with a bit flipped.
func (s *stack) curioPoRep(miner, number uint64) time.Duration {
	s.t.Helper()
	const proofType = proofs.StackedDrg2KiBV1_1
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	sealed, err := seal.Seal(ctx, seal.TestParams(proofType, proofs.ProverID(miner), number))
	if err != nil {
		s.t.Fatal(err)
	}
	var c1JSON bytes.Buffer
	if err := c1.Encode(&c1JSON, sealed.C1); err != nil {
		s.t.Fatal(err)
	}
	info, err := proofs.Lookup(proofType)
	if err != nil {
		s.t.Fatal(err)
	}
	wrapped, err := json.Marshal(c1OutputWrapper{SectorNum: int64(number), Phase1Out: c1JSON.Bytes(), SectorSize: info.SectorSize})
	if err != nil {
		s.t.Fatal(err)
	}
	req := &cuzkpb.SubmitProofRequest{
		RequestId:       fmt.Sprintf("porep-%d-%d", miner, number),
		ProofKind:       cuzkpb.ProofKind_POREP_SEAL_COMMIT,
		SectorSize:      info.SectorSize,
		RegisteredProof: uint64(proofType),
		Priority:        cuzkpb.Priority_NORMAL,
		VanillaProof:    wrapped,
		SectorNumber:    number,
		MinerId:         miner,
	}
	conn, err := grpc.NewClient("dns:///"+s.gateway, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20), grpc.MaxCallSendMsgSize(256<<20)))
	if err != nil {
		s.t.Fatal(err)
	}
	defer conn.Close()
	t0 := time.Now()
	resp, err := cuzkpb.NewProvingEngineClient(conn).Prove(ctx, &cuzkpb.ProveRequest{Submit: req})
	took := time.Since(t0)
	if err != nil {
		s.t.Fatalf("Prove to the compose gateway at %s: %v", s.gateway, err)
	}
	if st := resp.GetResult().GetStatus(); st != cuzkpb.AwaitProofResponse_COMPLETED {
		s.t.Fatalf("Prove to the compose gateway: %v %q, want COMPLETED", st, resp.GetResult().GetErrorMessage())
	}
	proof := resp.GetResult().GetProof()

	dir := filepath.Join(s.work, "curio")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.t.Fatal(err)
	}
	c1File, proofFile := filepath.Join(dir, fmt.Sprintf("%d.c1.json", number)), filepath.Join(dir, "proof")
	if err := os.WriteFile(c1File, c1JSON.Bytes(), 0o644); err != nil {
		s.t.Fatal(err)
	}
	prover := proofs.ProverID(miner)
	verify := func() (string, error) {
		out, err := exec.Command(s.c2flow, "verify", "--c1", c1File, "--proof", proofFile,
			"--filecoin-params", filepath.Join(s.work, "params", "filecoin-dev-params"), "--prover-id", hex.EncodeToString(prover[:])).CombinedOutput()
		return string(out), err
	}
	if err := os.WriteFile(proofFile, proof, 0o644); err != nil {
		s.t.Fatal(err)
	}
	if out, err := verify(); err != nil || !strings.Contains(out, ": ok: ") {
		s.t.Fatalf("c2flow verify of the gateway's proof (%d bytes): %v\n%s", len(proof), err, out)
	}
	proof[len(proof)/2] ^= 1
	if err := os.WriteFile(proofFile, proof, 0o644); err != nil {
		s.t.Fatal(err)
	}
	if out, err := verify(); err == nil {
		s.t.Fatalf("c2flow verify accepted the gateway's proof with a bit flipped:\n%s", out)
	}
	return took
}
