package groth

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/sdr"
	"github.com/c2flow/c2flow/internal/strictjson"
)

// ErrUnsupported is returned (wrapped) for seal records c2flow cannot
// verify: non-interactive PoRep, whose proofs are SnarkPack aggregates.
var ErrUnsupported = errors.New("unsupported seal record")

// maxChallengesPerPartition is filecoin-proofs constants.rs
// MAX_CHALLENGES_PER_PARTITION.
const maxChallengesPerPartition = 18

// PoRepConfig is filecoin-proofs' PoRepConfig (types/porep_config.rs), as
// a seal regression record carries it. It is taken as given: its porep_id
// seeds the graph whatever the sector size, its api_version selects the
// graph's parent derivation and its features the challenge derivation.
type PoRepConfig struct {
	SectorSize uint64
	Partitions int
	PoRepID    proofs.PoRepID
	APIVersion proofs.APIVersion
	Features   proofs.Features
}

// String describes c, e.g. "2048 bytes, 1 partition(s), api 1.2.0, synthetic-porep".
func (c PoRepConfig) String() string {
	s := fmt.Sprintf("%d bytes, %d partition(s), api %v", c.SectorSize, c.Partitions, c.APIVersion)
	if c.Features != 0 {
		s += ", " + c.Features.String()
	}
	return s
}

// Info returns the seal proof parameters of c as filecoin-proofs'
// setup_params derives them: layers and tree shape from the sector size
// (constants.rs LAYERS and the sector shapes), the interactive minimum
// challenge count for the size, challenges per partition
// ceil(minimum / partitions) (select_challenges), and c's partitions,
// porep_id, api version and features. Name and Proof are those of a
// registered proof of the same size and say nothing about c.
func (c PoRepConfig) Info() (proofs.SealProofInfo, error) {
	if c.Features.Has(proofs.FeatureNonInteractivePoRep) {
		return proofs.SealProofInfo{}, fmt.Errorf("porep config %v: non-interactive PoRep (aggregated proofs): %w", c, ErrUnsupported)
	}
	if !c.APIVersion.Valid() {
		return proofs.SealProofInfo{}, fmt.Errorf("porep config %v: unknown api version: %w", c, ErrFormat)
	}
	if c.Partitions < 1 {
		return proofs.SealProofInfo{}, fmt.Errorf("porep config %v: no partitions: %w", c, ErrFormat)
	}
	var info proofs.SealProofInfo
	found := false
	for _, p := range proofs.All() {
		if p.SectorSize == c.SectorSize && p.Features == 0 {
			info, found = p, true
			break
		}
	}
	if !found {
		return proofs.SealProofInfo{}, fmt.Errorf("porep config %v: unknown sector size: %w", c, ErrFormat)
	}
	info.Partitions = c.Partitions
	info.ChallengesPerPartition = (info.MinimumChallenges + c.Partitions - 1) / c.Partitions
	if info.ChallengesPerPartition > maxChallengesPerPartition {
		return proofs.SealProofInfo{}, fmt.Errorf("porep config %v: %d challenges per partition, at most %d: %w",
			c, info.ChallengesPerPartition, maxChallengesPerPartition, ErrFormat)
	}
	info.PoRepID = c.PoRepID
	info.APIVersion = c.APIVersion
	info.Features = c.Features
	info.SyntheticChallenges = 0
	if c.Features.Has(proofs.FeatureSyntheticPoRep) {
		info.SyntheticChallenges = int(sdr.DefaultSynthChallenges(info.Nodes))
	}
	return info, nil
}

// SealRecord is one record of rust-fil-proofs' seal regression files
// (filecoin-proofs/tests/seal_regression_records-v16.json, -v18.json;
// tests/regression.rs SealRegressionRecord): a sector's public data and
// its proof.
type SealRecord struct {
	Config                 PoRepConfig
	CommR, CommD, ProverID [32]byte
	SectorID               uint64
	Ticket, Seed           [32]byte
	Proof                  []byte
}

// recordJSON is a record as serde_json writes it: byte arrays as arrays of
// numbers, the sector id a number, the api version and features by
// variant name.
type recordJSON struct {
	PoRepConfig *struct {
		SectorSize  *uint64   `json:"sector_size"`
		Partitions  *uint8    `json:"partitions"`
		PoRepID     *[32]byte `json:"porep_id"`
		APIVersion  *string   `json:"api_version"`
		APIFeatures *[]string `json:"api_features"`
	} `json:"porep_config"`
	CommR    *[32]byte `json:"comm_r"`
	CommD    *[32]byte `json:"comm_d"`
	ProverID *[32]byte `json:"prover_id"`
	SectorID *uint64   `json:"sector_id"`
	Ticket   *[32]byte `json:"ticket"`
	Seed     *[32]byte `json:"seed"`
	Proof    *[]uint8  `json:"proof"`
}

// ParseSealRecord parses one line of a seal regression file. Every field
// must be present; unknown fields are an error.
func ParseSealRecord(line []byte) (*SealRecord, error) {
	var j recordJSON
	if err := strictjson.Decode(line, &j); err != nil {
		return nil, fmt.Errorf("parsing seal record: %w: %w", ErrFormat, err)
	}
	missing := func(name string) error {
		return fmt.Errorf("parsing seal record: %s missing: %w", name, ErrFormat)
	}
	c := j.PoRepConfig
	switch {
	case c == nil:
		return nil, missing("porep_config")
	case c.SectorSize == nil:
		return nil, missing("porep_config.sector_size")
	case c.Partitions == nil:
		return nil, missing("porep_config.partitions")
	case c.PoRepID == nil:
		return nil, missing("porep_config.porep_id")
	case c.APIVersion == nil:
		return nil, missing("porep_config.api_version")
	case c.APIFeatures == nil:
		return nil, missing("porep_config.api_features")
	case j.CommR == nil:
		return nil, missing("comm_r")
	case j.CommD == nil:
		return nil, missing("comm_d")
	case j.ProverID == nil:
		return nil, missing("prover_id")
	case j.SectorID == nil:
		return nil, missing("sector_id")
	case j.Ticket == nil:
		return nil, missing("ticket")
	case j.Seed == nil:
		return nil, missing("seed")
	case j.Proof == nil:
		return nil, missing("proof")
	}
	v, err := proofs.ParseAPIVersion(*c.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("parsing seal record: %w: %w", ErrFormat, err)
	}
	var feats proofs.Features
	for _, f := range *c.APIFeatures {
		switch f {
		case "SyntheticPoRep":
			feats |= proofs.FeatureSyntheticPoRep
		case "NonInteractivePoRep":
			feats |= proofs.FeatureNonInteractivePoRep
		default:
			return nil, fmt.Errorf("parsing seal record: unknown api feature %q: %w", f, ErrFormat)
		}
	}
	return &SealRecord{
		Config: PoRepConfig{
			SectorSize: *c.SectorSize, Partitions: int(*c.Partitions),
			PoRepID: *c.PoRepID, APIVersion: v, Features: feats,
		},
		CommR: *j.CommR, CommD: *j.CommD, ProverID: *j.ProverID, SectorID: *j.SectorID,
		Ticket: *j.Ticket, Seed: *j.Seed, Proof: *j.Proof,
	}, nil
}

// MarshalJSON writes r in the record format ParseSealRecord reads (byte
// arrays as arrays of numbers, as serde_json writes them).
func (r *SealRecord) MarshalJSON() ([]byte, error) {
	nums := func(b []byte) []int {
		out := make([]int, len(b))
		for i, x := range b {
			out[i] = int(x)
		}
		return out
	}
	feats := []string{}
	if r.Config.Features.Has(proofs.FeatureSyntheticPoRep) {
		feats = append(feats, "SyntheticPoRep")
	}
	if r.Config.Features.Has(proofs.FeatureNonInteractivePoRep) {
		feats = append(feats, "NonInteractivePoRep")
	}
	a, b, c := r.Config.APIVersion.Semver()
	type cfg struct {
		SectorSize  uint64   `json:"sector_size"`
		Partitions  int      `json:"partitions"`
		PoRepID     []int    `json:"porep_id"`
		APIVersion  string   `json:"api_version"`
		APIFeatures []string `json:"api_features"`
	}
	return json.Marshal(struct {
		PoRepConfig cfg    `json:"porep_config"`
		CommR       []int  `json:"comm_r"`
		CommD       []int  `json:"comm_d"`
		ProverID    []int  `json:"prover_id"`
		SectorID    uint64 `json:"sector_id"`
		Ticket      []int  `json:"ticket"`
		Seed        []int  `json:"seed"`
		Proof       []int  `json:"proof"`
	}{
		PoRepConfig: cfg{r.Config.SectorSize, r.Config.Partitions, nums(r.Config.PoRepID[:]),
			fmt.Sprintf("V%d_%d_%d", a, b, c), feats},
		CommR: nums(r.CommR[:]), CommD: nums(r.CommD[:]), ProverID: nums(r.ProverID[:]), SectorID: r.SectorID,
		Ticket: nums(r.Ticket[:]), Seed: nums(r.Seed[:]), Proof: nums(r.Proof),
	})
}

// ReplicaID returns the record's replica id (generate_replica_id with the
// config's porep_id).
func (r *SealRecord) ReplicaID() [32]byte {
	return sdr.ReplicaID(r.ProverID, r.SectorID, r.Ticket, r.CommD, r.Config.PoRepID)
}

// PublicInputs returns every partition's public inputs (without ONE),
// computed from the record's public data alone as verify_seal computes
// them: the replica id, then per partition StackedCompound's
// generate_public_inputs over the config's graph and challenges. It checks
// what verify_seal checks first: nonzero comm_d and comm_r, both valid
// field elements.
func (r *SealRecord) PublicInputs() ([][]fr.Element, error) {
	info, err := r.Config.Info()
	if err != nil {
		return nil, err
	}
	var zero [32]byte
	if r.CommD == zero {
		return nil, fmt.Errorf("seal record: all-zero comm_d: %w", ErrFormat)
	}
	if r.CommR == zero {
		return nil, fmt.Errorf("seal record: all-zero comm_r: %w", ErrFormat)
	}
	for _, c := range []struct {
		name string
		b    [32]byte
	}{{"comm_d", r.CommD}, {"comm_r", r.CommR}} {
		if _, err := hash.ElementFromLE(c.b); err != nil {
			return nil, fmt.Errorf("seal record: %s is not a field element: %w: %w", c.name, ErrFormat, err)
		}
	}
	replicaID := r.ReplicaID()
	out := make([][]fr.Element, info.Partitions)
	for k := range out {
		if out[k], err = circuit.PublicInputsOf(info, replicaID, r.CommD, r.CommR, r.Seed, k); err != nil {
			return nil, fmt.Errorf("seal record: partition %d: %w", k, err)
		}
	}
	return out, nil
}

// VerifySeal verifies a seal record with a verifying key as
// filecoin-proofs' verify_seal does: the proof bytes hold exactly one
// proof per partition, each decoded with curve and subgroup checks, and
// each verifies against its partition's public inputs. It returns nil for
// a valid record; otherwise the error says why (ErrInvalidProof for a
// proof that does not verify, ErrMismatch for a key whose input count
// does not fit the record's circuit, ErrFormat and ErrPoint for malformed
// data, ErrUnsupported for non-interactive records).
func VerifySeal(pvk *PreparedVerifyingKey, r *SealRecord) error {
	inputs, err := r.PublicInputs()
	if err != nil {
		return err
	}
	if want := len(inputs[0]) + 1; len(pvk.VK.IC) != want {
		return fmt.Errorf("verifying seal: the verifying key has %d IC points, the record's circuit %d inputs (a key for another sector size?): %w",
			len(pvk.VK.IC), want, ErrMismatch)
	}
	ps, err := DecodeProofs(r.Proof, len(inputs))
	if err != nil {
		return fmt.Errorf("verifying seal: %w", err)
	}
	if err := pvk.VerifyPartitions(ps, inputs); err != nil {
		return fmt.Errorf("verifying seal: %w", err)
	}
	return nil
}
