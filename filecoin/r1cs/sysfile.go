package r1cs

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/c2flow/c2flow/internal/mapped"
	"github.com/c2flow/c2flow/prover/packed"
)

// systemKind names a circuit's recorded constraint system as a mapped
// file (internal/mapped).
const systemKind = "c2flow.system.v1"

// systemMeta is a system file's metadata: the circuit's digest (its
// shape's, [SystemDigest]) and input count, and the arrays' layout.
type systemMeta struct {
	Digest string        `json:"digest"`
	Inputs int           `json:"inputs"`
	Layout packed.Layout `json:"layout"`
}

// SaveSystem writes sys, the system of the circuit named digest with
// inputs inputs, to path as a file a process maps instead of rebuilding
// it (MapSystem), whole or not at all.
func SaveSystem(path string, sys *packed.System, inputs int, digest string) error {
	l, secs := sys.Sections()
	return mapped.Write(path, systemKind, systemMeta{Digest: digest, Inputs: inputs, Layout: l}, secs...)
}

// MappedSystem is a circuit's constraint system over a mapped file: the
// kernel's page cache holds one copy for every process of the box.
type MappedSystem struct {
	*packed.System
	Digest string
	Inputs int
	file   *mapped.File
}

// Close unmaps the system: it must not be used after.
func (m *MappedSystem) Close() error { return m.file.Close() }

// FileBytes is the size of the mapped file.
func (m *MappedSystem) FileBytes() int64 { return m.file.Size() }

// MapSystem maps the system SaveSystem wrote at path. The file's digest
// is checked in full when stamps has not seen it as it is now.
func MapSystem(ctx context.Context, path string, stamps mapped.Stamps) (*MappedSystem, error) {
	f, err := mapped.Open(ctx, path, systemKind, stamps)
	if err != nil {
		return nil, err
	}
	var m systemMeta
	if err := json.Unmarshal(f.Meta, &m); err != nil || !validDigest(m.Digest) || m.Inputs < 1 {
		f.Close()
		return nil, fmt.Errorf("map %s: metadata %s: %w", path, f.Meta, mapped.ErrBadFile)
	}
	sys, err := packed.SystemFrom(m.Layout, f.Sections)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("map %s: %w: %w", path, err, mapped.ErrBadFile)
	}
	if m.Inputs > sys.Wires() || m.Inputs > sys.Rows() {
		f.Close()
		return nil, fmt.Errorf("map %s: %d inputs in a system of %d wires and %d rows: %w", path, m.Inputs, sys.Wires(), sys.Rows(), mapped.ErrBadFile)
	}
	return &MappedSystem{System: sys, Digest: m.Digest, Inputs: m.Inputs, file: f}, nil
}

// Touch reads every page of the mapped file (mapped.File.Touch).
func (m *MappedSystem) Touch() int64 { return m.file.Touch() }
