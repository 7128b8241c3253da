//go:build unix

package groth

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// MappedFile is a file mapped read-only into memory: an io.ReaderAt whose
// points ReadParams and ReadG1 decode in place. Pages are read from disk
// as they are touched and may be dropped again by the kernel, so a file
// larger than RAM can be read.
type MappedFile struct {
	data []byte
}

// MapFile maps path read-only. Close unmaps it; no slice of Bytes may be
// used after that.
func MapFile(path string) (*MappedFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("mapping file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("mapping %s: %w", path, err)
	}
	size := st.Size()
	if size == 0 {
		return &MappedFile{}, nil
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("mapping %s: %d bytes do not fit the address space", path, size)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mapping %s: %w", path, err)
	}
	return &MappedFile{data: data}, nil
}

// Bytes returns the mapped bytes (read-only: writing them faults).
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

// Close unmaps the file.
func (m *MappedFile) Close() error {
	if m.data == nil {
		return nil
	}
	err := syscall.Munmap(m.data)
	m.data = nil
	if err != nil {
		return fmt.Errorf("unmapping file: %w", err)
	}
	return nil
}
