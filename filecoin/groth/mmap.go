package groth

import "github.com/c2flow/c2flow/internal/mapped"

// MappedFile is a file's bytes mapped read-only (mapped.Region): an
// io.ReaderAt whose points ReadParams and ReadG1 decode in place.
type MappedFile = mapped.Region

// MapFile maps path read-only (mapped.Map).
func MapFile(path string) (*MappedFile, error) { return mapped.Map(path) }
