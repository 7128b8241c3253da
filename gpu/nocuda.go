//go:build !cuda

package gpu

import "errors"

// HasCUDA reports whether this build has the CUDA backend.
const HasCUDA = false

// ErrNoCUDA is returned by CUDASlots in a build without the cuda tag.
var ErrNoCUDA = errors.New("this build has no CUDA backend: rebuild with -tags cuda on a host with icicle's libraries (scripts/build-cuda.sh)")

// CUDASlots is unavailable in this build.
func CUDASlots([]int, ...CUDAOption) (*Slots, error) { return nil, ErrNoCUDA }
