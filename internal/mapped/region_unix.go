//go:build unix

package mapped

import (
	"fmt"
	"os"
	"syscall"
)

// MapFile maps path read-only. Close unmaps it; no slice of Bytes may be
// used after that.
func Map(path string) (*Region, error) {
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
		return &Region{}, nil
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("mapping %s: %d bytes do not fit the address space", path, size)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mapping %s: %w", path, err)
	}
	return &Region{data: data}, nil
}

// Close unmaps the file.
func (m *Region) Close() error {
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
