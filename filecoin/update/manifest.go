package update

// Manifest is updates.json, what c2flow's test updater (c2flow update,
// the SnapDeals scheme's SealTest) writes: per sector
// its proofs, the three commitments (hex of the 32 bytes, and as the CIDs
// Curio holds) and its files.
type Manifest struct {
	Sectors []ManifestSector `json:"sectors"`
}

// ManifestSector is one updated sector of a manifest.
type ManifestSector struct {
	ProverID    string `json:"prover_id"`
	SectorID    uint64 `json:"sector_id"`
	SealProof   string `json:"seal_proof"`
	UpdateProof string `json:"update_proof"`
	H           int    `json:"h"`
	CommROld    string `json:"comm_r_old"`
	CommRNew    string `json:"comm_r_new"`
	CommDNew    string `json:"comm_d_new"`
	SectorKey   string `json:"sector_key_cid"` // comm_r_old as a CID
	SealedCID   string `json:"sealed_cid"`     // comm_r_new
	UnsealedCID string `json:"unsealed_cid"`   // comm_d_new
	Vanilla     string `json:"vanilla"`        // <id>.snap-vproof.json, as Curio stores it
	Input       string `json:"input"`          // <id>.update.json, the UpdateInput c2flow proves
}
