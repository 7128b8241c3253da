package gpu

import "log/slog"

// CUDAOption configures NewCUDA.
type CUDAOption func(*cudaConfig)

type cudaConfig struct {
	deviceMemory int64
	log          *slog.Logger
}

// WithDeviceMemory caps the device memory the backend uses, in bytes
// (worker --device-memory). Zero or less takes the default: the device's
// free memory when it is opened, less deviceMargin.
func WithDeviceMemory(bytes int64) CUDAOption {
	return func(c *cudaConfig) { c.deviceMemory = bytes }
}

// WithCUDALogger sets where the backend says whether each base set is
// resident or streamed.
func WithCUDALogger(l *slog.Logger) CUDAOption {
	return func(c *cudaConfig) { c.log = l }
}
