//go:build !unix

package groth

import (
	"fmt"
	"os"
)

// MapFile reads path into memory.
func MapFile(path string) (*MappedFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mapping file: %w", err)
	}
	return &MappedFile{data: b}, nil
}

// Close releases the bytes.
func (m *MappedFile) Close() error { m.data = nil; return nil }
