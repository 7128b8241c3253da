// Package c1 reads and writes Filecoin's Commit-1 (C1) artifact exactly as
// filecoin-ffi writes it: rust-filecoin-proofs-api's SealCommitPhase1Output
// serialized by serde_json::to_vec (filecoin-ffi rust/src/proofs/api.rs
// seal_commit_phase1, read back by seal_commit_phase2), optionally wrapped
// in lotus-bench's Commit2In {SectorNum, Phase1Out (base64), SectorSize}.
//
// The Go types mirror the Rust types field for field, in declaration order
// (which is serde's JSON field order):
//
//	SealCommitPhase1Output  rust-filecoin-proofs-api src/seal.rs
//	VanillaSealProof        src/seal.rs (enum keyed by sector size)
//	Proof, ReplicaColumnProof   storage-proofs-porep src/stacked/vanilla/params.rs
//	ColumnProof, Column     stacked/vanilla/column_proof.rs, column.rs
//	LabelingProof, EncodingProof  stacked/vanilla/labeling_proof.rs, encoding_proof.rs
//	MerkleProof, ProofData, SingleProof, SubProof, TopProof,
//	InclusionPath, PathElement   storage-proofs-core src/merkle/proof.rs
//
// serde's conventions fix the JSON: byte arrays ([u8; 32], Sha256Domain,
// PoseidonDomain) are arrays of 32 numbers; enums are externally tagged
// ({"Variant": value}, unit variants as "Variant"); Column's PhantomData
// field _h is written as null, the PhantomData fields marked #[serde(skip)]
// (LabelingProof, EncodingProof, PathElement) are absent.
//
// Domains are [32]byte. Poseidon domains (tree R, tree C, labels,
// replica_id, comm_r) hold a BLS12-381 scalar in little-endian canonical
// form; SHA-256 domains (tree D, comm_d) have the top two bits of byte 31
// clear. The package checks structure and encodings only: it does not hash
// or verify Merkle paths or labels.
package c1

import "github.com/c2flow/c2flow/filecoin/proofs"

// SealCommitPhase1Output is the C1 artifact.
type SealCommitPhase1Output struct {
	// RegisteredProof is the seal proof; JSON: its name as a string.
	RegisteredProof proofs.RegisteredSealProof
	// VanillaProofs are the vanilla proofs of every partition.
	VanillaProofs VanillaSealProof
	// CommR is the replica commitment (a Poseidon domain).
	CommR [32]byte
	// CommD is the data commitment (a SHA-256 domain).
	CommD [32]byte
	// ReplicaID is the replica id (a Poseidon domain).
	ReplicaID [32]byte
	// Seed is the interactive challenge randomness.
	Seed [32]byte
	// Ticket is the sealing randomness.
	Ticket [32]byte
}

// VanillaSealProof is the enum VanillaSealProof: one variant per sector
// size, holding the proofs as [partition][challenge].
type VanillaSealProof struct {
	// Key is the variant name, e.g. "StackedDrg2KiBV1"
	// (proofs.SealProofInfo.VanillaProofsKey).
	Key string
	// Partitions holds each partition's proofs, one per challenge.
	Partitions [][]Proof
}

// Proof is one challenge's vanilla proof (stacked::Proof).
type Proof struct {
	// CommDProofs opens the challenged node in tree D (binary SHA-256).
	CommDProofs MerkleProof
	// CommRLastProof opens the challenged node in tree R (Poseidon).
	CommRLastProof MerkleProof
	// ReplicaColumnProofs open the challenge's and its parents' columns in
	// tree C.
	ReplicaColumnProofs ReplicaColumnProof
	// LabelingProofs has one entry per layer, layer 1 first.
	LabelingProofs []LabelingProof
	// EncodingProof is the last layer's key derivation.
	EncodingProof EncodingProof
}

// ReplicaColumnProof holds the column openings of a challenge: its own
// column, then its DRG parents' and its expander parents' columns.
type ReplicaColumnProof struct {
	CX         ColumnProof
	DrgParents []ColumnProof
	ExpParents []ColumnProof
}

// ColumnProof is a column and its tree C inclusion proof.
type ColumnProof struct {
	Column         Column
	InclusionProof MerkleProof
}

// Column is a node's labels on every layer. Its Rust PhantomData field
// _h is written as JSON null and has no Go counterpart.
type Column struct {
	Index uint32
	Rows  [][32]byte
}

// LabelingProof is a node's label derivation at one layer: the
// TotalParents parent labels, the layer (1-based) and the node.
type LabelingProof struct {
	Parents    [][32]byte
	LayerIndex uint32
	Node       uint64
}

// EncodingProof is the encoding key derivation for the last layer, laid
// out as LabelingProof.
type EncodingProof struct {
	Parents    [][32]byte
	LayerIndex uint32
	Node       uint64
}

// MerkleProof is a Merkle inclusion proof; exactly one of Data's
// variants is set.
type MerkleProof struct {
	Data ProofData
}

// ProofData is the enum ProofData. Exactly one field is non-nil: Single
// for a tree of base arity only, Sub for base and sub arity, Top for base,
// sub and top arity.
type ProofData struct {
	Single *SingleProof
	Sub    *SubProof
	Top    *TopProof
}

// SingleProof is a proof in a single (base-arity) tree.
type SingleProof struct {
	Root [32]byte
	Leaf [32]byte
	Path InclusionPath
}

// SubProof is a proof in a tree of base trees joined by a sub level.
type SubProof struct {
	BaseProof InclusionPath
	SubProof  InclusionPath
	Root      [32]byte
	Leaf      [32]byte
}

// TopProof is a proof in a tree of sub trees joined by a top level.
type TopProof struct {
	BaseProof InclusionPath
	SubProof  InclusionPath
	TopProof  InclusionPath
	Root      [32]byte
	Leaf      [32]byte
}

// InclusionPath is the path from a leaf towards the root.
type InclusionPath struct {
	Path []PathElement
}

// PathElement is one level of a path: the siblings (arity-1 hashes) and
// the position (0 to arity-1) of the path's node among them.
type PathElement struct {
	Hashes [][32]byte
	Index  uint64
}

// Root returns the proof's root, or the zero value if no variant is set.
func (m *MerkleProof) Root() [32]byte {
	switch {
	case m.Data.Single != nil:
		return m.Data.Single.Root
	case m.Data.Sub != nil:
		return m.Data.Sub.Root
	case m.Data.Top != nil:
		return m.Data.Top.Root
	}
	return [32]byte{}
}

// Leaf returns the proof's leaf, or the zero value if no variant is set.
func (m *MerkleProof) Leaf() [32]byte {
	switch {
	case m.Data.Single != nil:
		return m.Data.Single.Leaf
	case m.Data.Sub != nil:
		return m.Data.Sub.Leaf
	case m.Data.Top != nil:
		return m.Data.Top.Leaf
	}
	return [32]byte{}
}

// Path returns the proof's path elements from the leaf up: the base path,
// then the sub and top elements if any (as MerkleProofTrait::path). The
// elements are shared with m, the slice is new.
func (m *MerkleProof) Path() []PathElement {
	var parts [][]PathElement
	switch {
	case m.Data.Single != nil:
		parts = [][]PathElement{m.Data.Single.Path.Path}
	case m.Data.Sub != nil:
		parts = [][]PathElement{m.Data.Sub.BaseProof.Path, m.Data.Sub.SubProof.Path}
	case m.Data.Top != nil:
		parts = [][]PathElement{m.Data.Top.BaseProof.Path, m.Data.Top.SubProof.Path, m.Data.Top.TopProof.Path}
	}
	var out []PathElement
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
