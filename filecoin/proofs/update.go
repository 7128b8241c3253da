package proofs

import (
	"fmt"
	"strings"
)

// RegisteredUpdateProof is filecoin-proofs-api's RegisteredUpdateProof
// (src/registry.rs, append-only): the SnapDeals empty-sector-update proof
// of one sector size, with go-state-types' numbering (the enum's order).
type RegisteredUpdateProof int64

// The registered update proofs. Each is API version 1.1.0 ("StackedDrg*V1
// maps to api version V1_1").
const (
	UpdateStackedDrg2KiBV1 RegisteredUpdateProof = iota
	UpdateStackedDrg8MiBV1
	UpdateStackedDrg512MiBV1
	UpdateStackedDrg32GiBV1
	UpdateStackedDrg64GiBV1
)

// UpdateProofInfo is what c2flow needs of a registered update proof.
type UpdateProofInfo struct {
	Proof      RegisteredUpdateProof
	Name       string // as filecoin-proofs-api names it: "StackedDrg32GiBV1"
	SectorSize uint64
	APIVersion APIVersion
	// PoRepID is registry.rs porep_id: the proof's id and nonce 0, little
	// endian, in the first 16 of 32 bytes.
	PoRepID PoRepID
}

var updateTable = buildUpdateTable()

func buildUpdateTable() [5]UpdateProofInfo {
	t := [...]UpdateProofInfo{
		{Proof: UpdateStackedDrg2KiBV1, Name: "StackedDrg2KiBV1", SectorSize: 2 << 10},
		{Proof: UpdateStackedDrg8MiBV1, Name: "StackedDrg8MiBV1", SectorSize: 8 << 20},
		{Proof: UpdateStackedDrg512MiBV1, Name: "StackedDrg512MiBV1", SectorSize: 512 << 20},
		{Proof: UpdateStackedDrg32GiBV1, Name: "StackedDrg32GiBV1", SectorSize: 32 << 30},
		{Proof: UpdateStackedDrg64GiBV1, Name: "StackedDrg64GiBV1", SectorSize: 64 << 30},
	}
	for i := range t {
		t[i].APIVersion = APIVersion1_1_0
		t[i].PoRepID = NewPoRepID(uint64(t[i].Proof), 0)
	}
	return t
}

// String is the proof's registry name.
func (p RegisteredUpdateProof) String() string {
	if p >= 0 && int(p) < len(updateTable) {
		return updateTable[p].Name
	}
	return fmt.Sprintf("RegisteredUpdateProof(%d)", int64(p))
}

// LookupUpdate returns the info of a registered update proof.
func LookupUpdate(p RegisteredUpdateProof) (UpdateProofInfo, error) {
	if p < 0 || int(p) >= len(updateTable) {
		return UpdateProofInfo{}, fmt.Errorf("registered update proof %d: not one of %s", int64(p), strings.Join(UpdateNames(), ", "))
	}
	return updateTable[p], nil
}

// UpdateByName returns the registered update proof named name.
func UpdateByName(name string) (UpdateProofInfo, error) {
	for _, u := range updateTable {
		if u.Name == name {
			return u, nil
		}
	}
	return UpdateProofInfo{}, fmt.Errorf("registered update proof %q: not one of %s", name, strings.Join(UpdateNames(), ", "))
}

// UpdateNames lists the registered update proofs.
func UpdateNames() []string {
	out := make([]string, len(updateTable))
	for i, u := range updateTable {
		out[i] = u.Name
	}
	return out
}

// UpdateForSectorSize returns the registered update proof of sectors of
// size bytes (a sealed sector of any seal proof of that size is updated
// with it).
func UpdateForSectorSize(size uint64) (UpdateProofInfo, error) {
	for _, u := range updateTable {
		if u.SectorSize == size {
			return u, nil
		}
	}
	return UpdateProofInfo{}, fmt.Errorf("no registered update proof for %d-byte sectors (%s)", size, strings.Join(UpdateNames(), ", "))
}
