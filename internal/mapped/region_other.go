//go:build !unix

package mapped

import (
	"fmt"
	"os"
)

// MapFile reads path into memory.
func Map(path string) (*Region, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mapping file: %w", err)
	}
	return &Region{data: b}, nil
}

// Close releases the bytes.
func (m *Region) Close() error { m.data = nil; return nil }
