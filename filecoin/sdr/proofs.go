package sdr

import "fmt"

// SealProof is a registered seal proof (rust-filecoin-proofs-api
// src/registry.rs RegisteredSealProof); its value is the registered proof id
// that starts the porep_id (REGISTERED_PROOF_IDS), which is also the
// numbering of Filecoin's abi.RegisteredSealProof.
type SealProof uint64

// Registered seal proofs.
const (
	StackedDrg2KiBV1 SealProof = iota
	StackedDrg8MiBV1
	StackedDrg512MiBV1
	StackedDrg32GiBV1
	StackedDrg64GiBV1

	StackedDrg2KiBV1_1
	StackedDrg8MiBV1_1
	StackedDrg512MiBV1_1
	StackedDrg32GiBV1_1
	StackedDrg64GiBV1_1

	StackedDrg2KiBV1_1_Feat_SyntheticPoRep
	StackedDrg8MiBV1_1_Feat_SyntheticPoRep
	StackedDrg512MiBV1_1_Feat_SyntheticPoRep
	StackedDrg32GiBV1_1_Feat_SyntheticPoRep
	StackedDrg64GiBV1_1_Feat_SyntheticPoRep

	StackedDrg2KiBV1_2_Feat_NonInteractivePoRep
	StackedDrg8MiBV1_2_Feat_NonInteractivePoRep
	StackedDrg512MiBV1_2_Feat_NonInteractivePoRep
	StackedDrg32GiBV1_2_Feat_NonInteractivePoRep
	StackedDrg64GiBV1_2_Feat_NonInteractivePoRep

	numSealProofs
)

// Published sector sizes (filecoin-proofs src/constants.rs).
const (
	SectorSize2KiB   uint64 = 1 << 11
	SectorSize8MiB   uint64 = 1 << 23
	SectorSize512MiB uint64 = 1 << 29
	SectorSize32GiB  uint64 = 1 << 35
	SectorSize64GiB  uint64 = 1 << 36
)

var sectorSizeByIndex = [5]uint64{SectorSize2KiB, SectorSize8MiB, SectorSize512MiB, SectorSize32GiB, SectorSize64GiB}

// Valid reports whether p is a known registered seal proof.
func (p SealProof) Valid() bool { return p < numSealProofs }

func (p SealProof) check() error {
	if !p.Valid() {
		return fmt.Errorf("seal proof %d: unknown registered seal proof", uint64(p))
	}
	return nil
}

// SectorSize returns the sector size in bytes.
func (p SealProof) SectorSize() (uint64, error) {
	if err := p.check(); err != nil {
		return 0, err
	}
	return sectorSizeByIndex[p%5], nil
}

// APIVersion returns the proof's API version (V1: 1.0.0, V1_1: 1.1.0,
// synthetic and non-interactive: 1.2.0).
func (p SealProof) APIVersion() (APIVersion, error) {
	if err := p.check(); err != nil {
		return 0, err
	}
	switch {
	case p < StackedDrg2KiBV1_1:
		return V1_0_0, nil
	case p < StackedDrg2KiBV1_1_Feat_SyntheticPoRep:
		return V1_1_0, nil
	}
	return V1_2_0, nil
}

// PoRepID returns the proof's porep_id (id u64 LE, nonce 0).
func (p SealProof) PoRepID() (PoRepID, error) {
	if err := p.check(); err != nil {
		return PoRepID{}, err
	}
	return NewPoRepID(uint64(p), 0), nil
}

// ChallengeMode returns how the proof derives its PoRep challenges.
func (p SealProof) ChallengeMode() (ChallengeMode, error) {
	if err := p.check(); err != nil {
		return 0, err
	}
	switch {
	case p >= StackedDrg2KiBV1_2_Feat_NonInteractivePoRep:
		return NonInteractive, nil
	case p >= StackedDrg2KiBV1_1_Feat_SyntheticPoRep:
		return Synthetic, nil
	}
	return Interactive, nil
}

func isLargeSector(size uint64) bool { return size >= SectorSize32GiB }

// Layers returns the number of SDR layers (filecoin-proofs LAYERS: 2 for the
// test sizes, 11 for 32GiB and 64GiB).
func (p SealProof) Layers() (int, error) {
	size, err := p.SectorSize()
	if err != nil {
		return 0, err
	}
	if isLargeSector(size) {
		return 11, nil
	}
	return 2, nil
}

// Partitions returns the number of SNARK partitions: POREP_PARTITIONS (1,
// or 10 for 32GiB/64GiB) for interactive and synthetic proofs,
// get_porep_non_interactive_partitions (13, or 126) for non-interactive.
func (p SealProof) Partitions() (int, error) {
	size, err := p.SectorSize()
	if err != nil {
		return 0, err
	}
	mode, _ := p.ChallengeMode()
	large := isLargeSector(size)
	switch {
	case mode == NonInteractive && large:
		return 126, nil
	case mode == NonInteractive:
		return 13, nil
	case large:
		return 10, nil
	}
	return 1, nil
}

// MinimumChallenges returns the minimum total number of PoRep challenges
// (get_porep_interactive_minimum_challenges: 2 or 176;
// get_porep_non_interactive_minimum_challenges: 26 or 2253).
func (p SealProof) MinimumChallenges() (int, error) {
	size, err := p.SectorSize()
	if err != nil {
		return 0, err
	}
	mode, _ := p.ChallengeMode()
	large := isLargeSector(size)
	switch {
	case mode == NonInteractive && large:
		return 2253, nil
	case mode == NonInteractive:
		return 26, nil
	case large:
		return 176, nil
	}
	return 2, nil
}

// ChallengesPerPartition returns ceil(MinimumChallenges / Partitions)
// (filecoin-proofs parameters.rs select_challenges): 2 for the test sizes,
// 18 for 32GiB/64GiB, in every mode.
func (p SealProof) ChallengesPerPartition() (int, error) {
	minimum, err := p.MinimumChallenges()
	if err != nil {
		return 0, err
	}
	parts, _ := p.Partitions()
	return 1 + (minimum-1)/parts, nil
}

// Graph returns the proof's SDR graph.
func (p SealProof) Graph() (*Graph, error) {
	size, err := p.SectorSize()
	if err != nil {
		return nil, err
	}
	v, _ := p.APIVersion()
	id, _ := p.PoRepID()
	return NewGraphForSectorSize(size, id, v)
}
