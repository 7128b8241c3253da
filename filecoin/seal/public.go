package seal

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/sdr"
	"github.com/c2flow/c2flow/internal/atomicfile"
)

// MaxSectorID is the largest Filecoin sector number: lotus-bench's
// Commit2In carries it as an int64 (the C1 decoder refuses more), so a
// larger one is refused everywhere a sector number comes in.
const MaxSectorID = 1<<63 - 1

// CheckSectorID refuses a sector number above MaxSectorID; what names
// where it came from (a flag, a file name).
func CheckSectorID(id uint64, what string) error {
	if id > MaxSectorID {
		return fmt.Errorf("%s %d: Filecoin sector numbers are at most %d", what, id, uint64(MaxSectorID))
	}
	return nil
}

// SectorPublic is a sector's public data: what the chain knows of it once
// its pre-commit and the interactive randomness are on chain, and what a
// C1 is checked against.
type SectorPublic struct {
	// Proof is the registered seal proof.
	Proof proofs.RegisteredSealProof
	// ProverID is the 32-byte prover id (the miner actor id's bytes in
	// Filecoin; any 32 bytes here).
	ProverID [32]byte
	// SectorID is the sector number.
	SectorID uint64
	// Ticket is the sealing randomness.
	Ticket [32]byte
	// Seed is the interactive PoRep challenge randomness.
	Seed [32]byte
	// CommD is the data commitment (tree D root, a SHA-254 domain).
	CommD [32]byte
	// CommR is the replica commitment (a Poseidon domain).
	CommR [32]byte
}

// ReplicaID returns the replica id the public data determine
// (storage-proofs-porep stacked/vanilla/params.rs generate_replica_id):
// SHA-256(prover_id || sector_id (u64 BE) || ticket || comm_d ||
// porep_id), trimmed to 254 bits.
func (p *SectorPublic) ReplicaID() ([32]byte, error) {
	info, err := proofs.Lookup(p.Proof)
	if err != nil {
		return [32]byte{}, fmt.Errorf("seal: replica id: %w", err)
	}
	return sdr.ReplicaID(p.ProverID, p.SectorID, p.Ticket, p.CommD, info.PoRepID), nil
}

// Manifest is the sectors.json file a seal run writes beside its C1 files:
// each sector's public data, so that the C1 files can be checked later
// (c2flow c1 check). Byte arrays are written as 0x-prefixed lowercase hex.
type Manifest struct {
	// Proof is the registered seal proof's name, e.g. "StackedDrg2KiBV1_1".
	Proof string `json:"proof"`
	// Sectors are the sealed sectors, in sealing order.
	Sectors []ManifestEntry `json:"sectors"`
}

// ManifestEntry is one sector of a Manifest.
type ManifestEntry struct {
	// C1 is the C1 file's name, relative to the manifest's directory.
	C1       string `json:"c1"`
	ProverID string `json:"prover_id"`
	SectorID uint64 `json:"sector_id"`
	Ticket   string `json:"ticket"`
	Seed     string `json:"seed"`
	CommD    string `json:"comm_d"`
	CommR    string `json:"comm_r"`
}

// Hex32 formats b as 0x-prefixed lowercase hex.
func Hex32(b [32]byte) string { return "0x" + hex.EncodeToString(b[:]) }

// ParseHex32 parses 32 bytes written as hex, with or without a 0x prefix.
func ParseHex32(s string) ([32]byte, error) {
	var out [32]byte
	t := strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	b, err := hex.DecodeString(t)
	if err != nil {
		return out, fmt.Errorf("parse %q as 32 hex bytes: %w", s, err)
	}
	if len(b) != 32 {
		return out, fmt.Errorf("parse %q as 32 hex bytes: %d bytes", s, len(b))
	}
	copy(out[:], b)
	return out, nil
}

// EntryOf returns the manifest entry of a sector whose C1 file is named
// c1name.
func EntryOf(pub SectorPublic, c1name string) ManifestEntry {
	return ManifestEntry{
		C1:       c1name,
		ProverID: Hex32(pub.ProverID),
		SectorID: pub.SectorID,
		Ticket:   Hex32(pub.Ticket),
		Seed:     Hex32(pub.Seed),
		CommD:    Hex32(pub.CommD),
		CommR:    Hex32(pub.CommR),
	}
}

// Public returns the entry's public data for the manifest's proof.
func (m *Manifest) Public(e *ManifestEntry) (SectorPublic, error) {
	p, err := proofs.Parse(m.Proof)
	if err != nil {
		return SectorPublic{}, fmt.Errorf("seal: manifest: %w", err)
	}
	if err := CheckSectorID(e.SectorID, "sector_id"); err != nil {
		return SectorPublic{}, fmt.Errorf("seal: manifest: %s: %w", e.C1, err)
	}
	pub := SectorPublic{Proof: p, SectorID: e.SectorID}
	for _, f := range []struct {
		name string
		s    string
		dst  *[32]byte
	}{
		{"prover_id", e.ProverID, &pub.ProverID},
		{"ticket", e.Ticket, &pub.Ticket},
		{"seed", e.Seed, &pub.Seed},
		{"comm_d", e.CommD, &pub.CommD},
		{"comm_r", e.CommR, &pub.CommR},
	} {
		v, err := ParseHex32(f.s)
		if err != nil {
			return SectorPublic{}, fmt.Errorf("seal: manifest: sector %d: %s: %w", e.SectorID, f.name, err)
		}
		*f.dst = v
	}
	return pub, nil
}

// Find returns the entry whose C1 file is named c1name, or nil.
func (m *Manifest) Find(c1name string) *ManifestEntry {
	for i := range m.Sectors {
		if m.Sectors[i].C1 == c1name {
			return &m.Sectors[i]
		}
	}
	return nil
}

// ErrNotManifest is returned (wrapped) by ReadManifest for a JSON file that
// is not a Manifest (e.g. the sectors.json of c2flow's own test scheme,
// which has no "proof" field).
var ErrNotManifest = errors.New("not a Filecoin sector manifest")

// WriteManifest writes m as indented JSON to path (through a temporary
// file renamed into place).
func WriteManifest(path string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("seal: write manifest %s: %w", path, err)
	}
	if err := atomicfile.WriteBytes(path, append(b, '\n')); err != nil {
		return fmt.Errorf("seal: manifest: %w", err)
	}
	return nil
}

// ReadManifest reads a Manifest written by WriteManifest. A JSON object
// without a "proof" field yields an error wrapping ErrNotManifest.
func ReadManifest(path string) (*Manifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("seal: read manifest: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("seal: read manifest %s: %w", path, err)
	}
	if m.Proof == "" {
		return nil, fmt.Errorf("seal: read manifest %s: %w", path, ErrNotManifest)
	}
	if _, err := proofs.Parse(m.Proof); err != nil {
		return nil, fmt.Errorf("seal: read manifest %s: %w", path, err)
	}
	return &m, nil
}
