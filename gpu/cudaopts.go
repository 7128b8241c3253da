package gpu

import (
	"fmt"
	"log/slog"
	"strings"
)

// CUDAOption configures NewCUDA.
type CUDAOption func(*cudaConfig)

type cudaConfig struct {
	deviceMemory int64
	deviceType   string
	log          *slog.Logger
}

// WithDeviceMemory caps the device memory the backend uses, in bytes
// (worker --device-memory). Zero or less takes the default: the device's
// free memory when it is opened, less deviceMargin; on a device that
// reports none (icicle's CPU backend), UnreportedDeviceMemory.
func WithDeviceMemory(bytes int64) CUDAOption {
	return func(c *cudaConfig) { c.deviceMemory = bytes }
}

// WithCUDALogger sets where the backend logs its device memory when it
// opens and whether each base set is resident or streamed.
func WithCUDALogger(l *slog.Logger) CUDAOption {
	return func(c *cudaConfig) { c.log = l }
}

// icicle's device types the cuda backend opens: a GPU, or icicle's CPU
// backend, which runs the same code (conversions, orderings, base cache,
// chunking, thread pinning) on a machine without one, for tests
// (make test-icicle). Its timings say nothing of a GPU's.
const (
	DeviceCUDA = "CUDA"
	DeviceCPU  = "CPU"
)

// DeviceTypeEnv names the environment variable with the icicle device type
// of the cuda-tagged tests and the default of the commands' --icicle-device.
const DeviceTypeEnv = "C2FLOW_ICICLE_DEVICE"

// UnreportedDeviceMemory is the default limit of a device that reports no
// memory (icicle's CPU backend answers ApiNotImplemented): room for the
// test keys' bases resident, small enough to be a host's to spare.
const UnreportedDeviceMemory = 4 << 30

// WithDeviceType opens icicle devices of type t (DeviceCUDA, the default
// when empty, or DeviceCPU); see ParseDeviceType.
func WithDeviceType(t string) CUDAOption {
	return func(c *cudaConfig) { c.deviceType = t }
}

// ParseDeviceType parses an icicle device type, in any case: CUDA or CPU;
// empty is CUDA.
func ParseDeviceType(s string) (string, error) {
	switch t := strings.ToUpper(strings.TrimSpace(s)); t {
	case "", DeviceCUDA:
		return DeviceCUDA, nil
	case DeviceCPU:
		return t, nil
	}
	return "", fmt.Errorf("icicle device type %q: CUDA (a GPU) or CPU (icicle's CPU backend, for tests)", s)
}
