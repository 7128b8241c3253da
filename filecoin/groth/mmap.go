package groth

import (
	"fmt"
	"io"
)

// MappedFile is a file's bytes: mapped read-only into memory where the
// system has mmap (mmap_unix.go), read into memory elsewhere. It is an
// io.ReaderAt whose points ReadParams and ReadG1 decode in place. Mapped
// pages are read from disk as they are touched and may be dropped again by
// the kernel, so a file larger than RAM can be read.
type MappedFile struct {
	data []byte
}

// Bytes returns the file's bytes (read-only when mapped: writing faults).
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
