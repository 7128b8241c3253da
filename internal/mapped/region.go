package mapped

import (
	"fmt"
	"io"
)

// Region is a file's bytes: mapped read-only into memory where the
// system has mmap (region_unix.go), read into memory elsewhere. It is an
// io.ReaderAt (filecoin/groth decodes .params points from one in place). Mapped
// pages are read from disk as they are touched and may be dropped again by
// the kernel, so a file larger than RAM can be read.
type Region struct {
	data []byte
}

// Bytes returns the file's bytes (read-only when mapped: writing faults).
func (m *Region) Bytes() []byte { return m.data }

// Size returns the file's size.
func (m *Region) Size() int64 { return int64(len(m.data)) }

// ReadAt implements io.ReaderAt.
func (m *Region) ReadAt(p []byte, off int64) (int, error) {
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
