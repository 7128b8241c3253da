package mapped

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/c2flow/c2flow/internal/atomicfile"
)

// Stamps remembers what was computed of a file (its digest, a check that
// passed) against a cheap stamp of it: size, modification and change
// times and inode. A value is returned only while the file's stamp is the
// one it was recorded with, so a full hash runs once per change of the
// file, not once per process start. A file replaced (renamed over,
// rewritten, touched) has a new stamp. Dir "" remembers nothing.
type Stamps struct{ Dir string }

// stamp is a file's cheap identity.
type stamp struct {
	Size     int64  `json:"size"`
	ModNs    int64  `json:"mod_ns"`
	ChangeNs int64  `json:"change_ns"`
	Inode    uint64 `json:"inode"`
}

func stampOf(fi fs.FileInfo) stamp {
	s := stamp{Size: fi.Size(), ModNs: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ChangeNs = st.Ctim.Sec*1e9 + st.Ctim.Nsec
		s.Inode = st.Ino
	}
	return s
}

type record struct {
	Path  string          `json:"path"`
	Stamp stamp           `json:"stamp"`
	Value json.RawMessage `json:"value"`
}

func (s Stamps) file(path string) string {
	sum := sha256.Sum256([]byte(path))
	return filepath.Join(s.Dir, hex.EncodeToString(sum[:16])+".stamp")
}

// Stat returns path's stamp now, for Put after the value is computed.
func Stat(path string) (Stamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Stamp{}, fmt.Errorf("stamp of %s: %w", path, err)
	}
	return Stamp{stampOf(fi)}, nil
}

// Stamp is a file's stamp taken before its value was computed.
type Stamp struct{ s stamp }

// Get fills v with the value recorded for path and reports whether there
// was one for the file as it is now.
func (s Stamps) Get(path string, v any) bool {
	if s.Dir == "" {
		return false
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	b, err := os.ReadFile(s.file(abs))
	if err != nil {
		return false
	}
	var r record
	if json.Unmarshal(b, &r) != nil || r.Path != abs {
		return false
	}
	now, err := Stat(abs)
	if err != nil || now.s != r.Stamp {
		return false
	}
	return json.Unmarshal(r.Value, v) == nil
}

// Put records v for path, whose stamp before v was computed was before:
// nothing is recorded if the file changed since (v may be of neither
// version).
func (s Stamps) Put(path string, before Stamp, v any) error {
	if s.Dir == "" {
		return nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("stamping %s: %w", path, err)
	}
	now, err := Stat(abs)
	if err != nil {
		return err
	}
	if now != before {
		return fmt.Errorf("stamping %s: %w", path, ErrChanged)
	}
	val, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("stamping %s: %w", path, err)
	}
	b, err := json.Marshal(record{Path: abs, Stamp: before.s, Value: val})
	if err != nil {
		return fmt.Errorf("stamping %s: %w", path, err)
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return fmt.Errorf("stamping %s: %w", path, err)
	}
	return atomicfile.WriteBytes(s.file(abs), b)
}

// ErrChanged is wrapped when a file changed while it was read.
var ErrChanged = errors.New("the file changed while it was read")
