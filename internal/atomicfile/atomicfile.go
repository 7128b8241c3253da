// Package atomicfile writes files whole or not at all: through a
// temporary file in the same directory, renamed into place, so a reader
// (another process, a restart after a crash) never sees a partial file.
package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write writes path with write, buffered, through a temporary file
// renamed into place. On any error path is left as it was and the
// temporary file removed; the error names path.
func Write(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(f.Name()) // a no-op once renamed
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	// CreateTemp makes the file 0600; what c2flow writes (C1s, proofs,
	// parameters) is for other processes too, as os.WriteFile's 0644.
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WriteBytes writes b to path whole or not at all.
func WriteBytes(path string, b []byte) error {
	return Write(path, func(w io.Writer) error { _, err := w.Write(b); return err })
}
