// Package testscheme is c2flow's own test scheme (package porep: Poseidon2,
// binary trees, Filecoin-shaped) behind the scheme interface: the fast
// path for tests, benches and the demo. Its C2 is c2flow's own C2 file
// (C2, c2.go); its keys are c2flow's development setups (package params).
package testscheme

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"

	"github.com/c2flow/c2flow/internal/units"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/scheme/testscheme/params"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
)

// Scheme is the test scheme over a key store. Keys must already be in the
// store (c2flow circuit setup, dev and demo put them there): two workers
// never run two different setups.
type Scheme struct {
	keys    params.Store
	log     *slog.Logger
	earlyG2 bool
	hasher  *porep.Hasher
	// devSetup: a profile without keys gets a development setup.
	devSetup bool
	sizes    map[string]int64 // PartitionBytes of profiles not loaded

	mu       sync.Mutex
	circuits map[string]*Circuit
}

var _ scheme.Scheme = (*Scheme)(nil)

// Option configures a Scheme.
type Option func(*Scheme)

// WithEarlyG2 starts the B-in-G2 MSM with the device phase (prover.Prover.EarlyG2).
func WithEarlyG2(on bool) Option { return func(s *Scheme) { s.earlyG2 = on } }

// WithDevSetup makes a development setup of a profile whose keys the
// store lacks (params.Load: single-party, never for real sectors) instead
// of failing with scheme.ErrNoKeys: the one-process commands' default.
func WithDevSetup(on bool) Option { return func(s *Scheme) { s.devSetup = on } }

// WithLogger sets the provers' logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(s *Scheme) { s.log = l } }

// New returns the test scheme reading keys from store.
func New(store params.Store, opts ...Option) *Scheme {
	s := &Scheme{keys: store, log: slog.New(slog.DiscardHandler), hasher: porep.NewHasher(), circuits: map[string]*Circuit{}, sizes: map[string]int64{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Name implements scheme.Scheme.
func (*Scheme) Name() string { return "c2flow" }

// Proofs implements scheme.Scheme: the porep profiles.
func (*Scheme) Proofs() []string { return porep.ProfileNames() }

// Owns implements scheme.Scheme: the porep profiles, and "" (a sector
// submitted without a declared proof is a test-scheme sector).
func (*Scheme) Owns(proof string) bool {
	return proof == "" || slices.Contains(porep.ProfileNames(), proof)
}

// Recognize implements scheme.Scheme: a versioned C1 whose
// registered_proof names a test-scheme profile.
func (*Scheme) Recognize(h scheme.Head) bool {
	p, ok := h.Strings["registered_proof"]
	if !ok || p == "" || !h.Has("version") {
		return false
	}
	_, err := porep.LookupProfile(p)
	return err == nil
}

// Identify implements scheme.Identifier: a test-scheme C1 names its own
// prover and sector, so hints would be ignored: they are refused. The C1
// is checked natively. Its canonical bytes are C1.Encode's (what c2flow
// seal writes): the same C1 reindented, its keys reordered or its hex in
// upper case is the same sector identity.
func (sc *Scheme) Identify(ctx context.Context, name string, raw []byte, h scheme.Hints) (job.Ref, []byte, error) {
	if h.Given() {
		return job.Ref{}, nil, fmt.Errorf("--prover-id and --sector-id are for Filecoin C1s; this is a c2flow test-scheme C1, which names its own prover and sector")
	}
	c1, err := porep.DecodeC1(bytes.NewReader(raw))
	if err != nil {
		return job.Ref{}, nil, err
	}
	if err := c1.Verify(sc.hasher); err != nil {
		return job.Ref{}, nil, fmt.Errorf("does not verify natively, not submitted: %w", err)
	}
	var canon bytes.Buffer
	if err := c1.Encode(&canon); err != nil {
		return job.Ref{}, nil, fmt.Errorf("encode the C1 of sector %d: %w", c1.SectorID, err)
	}
	// The canonical form is what the workers decode, within the bound they
	// read it by.
	if n, limit := int64(canon.Len()), c1.Profile.MaxC1Bytes(); n > limit {
		return job.Ref{}, nil, fmt.Errorf("the C1 of sector %d encodes to %d bytes, over the %s profile's bound of %d", c1.SectorID, n, c1.Profile.Name, limit)
	}
	ref := job.NewRef(c1.ProverID, c1.SectorID, canon.Bytes())
	ref.Proof = c1.Profile.Name
	return ref, canon.Bytes(), nil
}

// C2Ext implements scheme.Scheme: c2flow's own C2 file.
func (*Scheme) C2Ext() string { return ".c2" }

// MaxC1Bytes implements scheme.Scheme.
func (*Scheme) MaxC1Bytes(proof string) (int64, error) {
	if proof == "" {
		return porep.MaxC1Bytes(), nil
	}
	p, err := porep.LookupProfile(proof)
	if err != nil {
		return 0, err
	}
	return p.MaxC1Bytes(), nil
}

// Sector is a decoded test-scheme C1.
type Sector struct {
	C1     *porep.C1
	hasher *porep.Hasher
}

// Proof implements scheme.Sector.
func (s *Sector) Proof() string { return s.C1.Profile.Name }

// String names the sector in messages.
func (s *Sector) String() string { return fmt.Sprintf("sector %d", s.C1.SectorID) }

// Partitions implements scheme.Sector.
func (s *Sector) Partitions() int { return len(s.C1.Partitions) }

// C2Bytes implements scheme.Sector.
func (s *Sector) C2Bytes() int64 { return C2Size(s.C1.Profile.Name, len(s.C1.Partitions)) }

// Verify implements scheme.Sector: replica id and every vanilla proof.
func (s *Sector) Verify(ctx context.Context) error { return s.C1.Verify(s.hasher) }

// Decode implements scheme.Scheme: strict decoding, then the C1 must name
// id's prover, sector and declared profile.
func (sc *Scheme) Decode(raw []byte, id job.Ref) (scheme.Sector, error) {
	c1, err := porep.DecodeC1(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	if c1.SectorID != id.SectorID {
		return nil, fmt.Errorf("sector_id: the C1 is for sector %d, not %d", c1.SectorID, id.SectorID)
	}
	if id.Proof != "" && c1.Profile.Name != id.Proof {
		return nil, fmt.Errorf("registered_proof: the C1 is a %s C1, %s was declared", c1.Profile.Name, id.Proof)
	}
	if p := hex.EncodeToString(c1.ProverID[:]); p != id.ProverID {
		return nil, fmt.Errorf("prover_id: the C1 is for prover %s, not %s", p, id.ProverID)
	}
	return &Sector{C1: c1, hasher: sc.hasher}, nil
}

// PartitionBytes implements scheme.Scheme: the compiled circuit's
// synthesis memory (params.SynthBytes); the circuit of a profile is
// compiled once per process.
func (sc *Scheme) PartitionBytes(ctx context.Context, proof string) (int64, error) {
	p, err := porep.LookupProfile(proof)
	if err != nil {
		return 0, err
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if c, ok := sc.circuits[p.Name]; ok {
		return c.PartitionBytes(), nil
	}
	if n, ok := sc.sizes[p.Name]; ok {
		return n, nil
	}
	ccs, _, err := params.Compile(p)
	if err != nil {
		return 0, err
	}
	n := params.SynthBytes(ccs)
	sc.sizes[p.Name] = n
	return n, nil
}

// Circuit implements scheme.Scheme.
func (sc *Scheme) Circuit(ctx context.Context, proof string) (scheme.Circuit, error) {
	return sc.circuit(ctx, proof)
}

// Verifier implements scheme.Scheme: the circuit (the test scheme's keys
// are small).
func (sc *Scheme) Verifier(ctx context.Context, proof string) (scheme.Verifier, error) {
	return sc.circuit(ctx, proof)
}

func (sc *Scheme) circuit(ctx context.Context, proof string) (*Circuit, error) {
	p, err := porep.LookupProfile(proof)
	if err != nil {
		return nil, err
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if c, ok := sc.circuits[p.Name]; ok {
		return c, nil
	}
	load := params.LoadExisting
	if sc.devSetup {
		load = params.Load
	}
	keys, err := load(ctx, sc.keys, p, sc.log)
	if errors.Is(err, params.ErrNotFound) {
		return nil, fmt.Errorf("%w: %w", scheme.ErrNoKeys, err)
	}
	if err != nil {
		return nil, err
	}
	pk, err := ProverKeys(keys)
	if err != nil {
		return nil, err
	}
	pr, err := prover.New(pk, sc.log)
	if err != nil {
		return nil, err
	}
	pr.EarlyG2 = sc.earlyG2
	c := &Circuit{pr: pr, keys: keys}
	sc.circuits[p.Name] = c
	return c, nil
}

// Circuit is one profile's circuit and keys.
type Circuit struct {
	pr   *prover.Prover
	keys *params.Keys
}

var _ scheme.Circuit = (*Circuit)(nil)

// NewCircuit is the circuit of keys proved by p (a caller holding its own
// keys and prover: direct mode, benchmarks, tests).
func NewCircuit(p *prover.Prover, keys *params.Keys) *Circuit { return &Circuit{pr: p, keys: keys} }

// Prover implements scheme.Circuit.
func (c *Circuit) Prover() *prover.Prover { return c.pr }

// PartitionBytes implements scheme.Circuit.
func (c *Circuit) PartitionBytes() int64 { return params.SynthBytes(c.keys.CCS) }

func sectorOf(s scheme.Sector) (*porep.C1, error) {
	ts, ok := s.(*Sector)
	if !ok {
		return nil, fmt.Errorf("testscheme: a %T is not a test-scheme sector", s)
	}
	return ts.C1, nil
}

// Synthesize implements scheme.Circuit.
func (c *Circuit) Synthesize(ctx context.Context, s scheme.Sector, k int) (*prover.Solution, error) {
	c1, err := sectorOf(s)
	if err != nil {
		return nil, err
	}
	return Synthesize(ctx, c.keys, c1, k)
}

// VerifyPartition implements scheme.Circuit.
func (c *Circuit) VerifyPartition(s scheme.Sector, k int, proof *groth16bls.Proof) error {
	c1, err := sectorOf(s)
	if err != nil {
		return err
	}
	return Verify(c.keys.VK, c1.Statement(), k, proof)
}

// EncodePartition implements scheme.Circuit: a one-proof C2 of the profile.
func (c *Circuit) EncodePartition(proof *groth16bls.Proof) ([]byte, error) {
	one := C2{Profile: c.keys.Profile.Name, Proofs: []*groth16bls.Proof{proof}}
	return one.MarshalBinary()
}

// Assemble implements scheme.Circuit.
func (c *Circuit) Assemble(s scheme.Sector, parts [][]byte) ([]byte, error) {
	c2 := &C2{Profile: s.Proof()}
	for k, b := range parts {
		one, err := UnmarshalC2(b)
		if err != nil {
			return nil, fmt.Errorf("partition %d: decode proof: %w", k, err)
		}
		if len(one.Proofs) != 1 {
			return nil, fmt.Errorf("partition %d: %d proofs where one was expected", k, len(one.Proofs))
		}
		c2.Proofs = append(c2.Proofs, one.Proofs[0])
	}
	return c2.MarshalBinary()
}

// VerifyC2 implements scheme.Circuit.
func (c *Circuit) VerifyC2(s scheme.Sector, data []byte) error {
	c1, err := sectorOf(s)
	if err != nil {
		return err
	}
	c2, err := UnmarshalC2(data)
	if err != nil {
		return err
	}
	return VerifyC2(c.keys.VK, c1.Statement(), c2)
}

// Digests implements scheme.Circuit.
func (c *Circuit) Digests() scheme.Digests {
	k := c.keys
	return scheme.Digests{VK: k.VKSHA256, PK: k.PKSHA256, Circuit: k.Digest}
}

// WriteInfo implements scheme.Scheme: one partition's circuit of the
// profile, compiled: constraints, wires, public inputs, synthesis memory
// and an upper bound of the proving key.
func (*Scheme) WriteInfo(out io.Writer, proof string) error {
	p, err := porep.LookupProfile(proof)
	if err != nil {
		return err
	}
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

	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "profile\t%s (%s)\n", p.Name, p.Note)
	fmt.Fprintf(w, "sector\t%s, %d nodes, %d layers, binary trees of depth %d\n", units.Bytes(p.SectorBytes()), p.Nodes(), p.Layers, p.Depth)
	fmt.Fprintf(w, "partitions\t%d x %d challenges\n", p.Partitions, p.Challenges)
	fmt.Fprintf(w, "circuit digest\t%s\n", digest)
	fmt.Fprintf(w, "constraints / partition\t%d (FFT domain 2^%d)\n", nc, units.Log2(domain))
	fmt.Fprintf(w, "wires\t%d (public %d incl. the constant one, secret %d, internal %d)\n", wires, ccs.GetNbPublicVariables(), ccs.GetNbSecretVariables(), ccs.GetNbInternalVariables())
	fmt.Fprintf(w, "public inputs\t%d\n", ccs.GetNbPublicVariables()-1)
	fmt.Fprintf(w, "synthesis memory\t%s per partition ((wires + 3 x constraints) x 32 B)\n", units.Bytes(synth))
	fmt.Fprintf(w, "proving key (raw)\t<= %s\n", units.Bytes(pk))
	fmt.Fprintf(w, "compile time\t%v\n", compile.Round(time.Millisecond))
	return w.Flush()
}
