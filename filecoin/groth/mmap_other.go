//go:build !unix

package groth

import (
	"fmt"
	"io"
	"os"
)

// MappedFile holds a file's bytes. Without mmap (non-unix systems) the
// file is read into memory.
type MappedFile struct {
	data []byte
}

// MapFile reads path into memory.
func MapFile(path string) (*MappedFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mapping file: %w", err)
	}
	return &MappedFile{data: b}, nil
}

// Bytes returns the file's bytes.
func (m *MappedFile) Bytes() []byte { return m.data }

// Size returns the file's size.
func (m *MappedFile) Size() int64 { return int64(len(m.data)) }

// ReadAt implements io.ReaderAt.
func (m *MappedFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("mapped file: negative offset %d", off)
	}
	if off >= int64(len(m.data)) {
		return 0, io.EOF
	}
	n := copy(p, m.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Close releases the bytes.
func (m *MappedFile) Close() error { m.data = nil; return nil }
