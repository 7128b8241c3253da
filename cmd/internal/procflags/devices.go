package procflags

import (
	"flag"
	"fmt"
	"log/slog"

	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/scheme/testscheme/params"
)

// Devices are the device and key flags of every command that proves in
// its own process: the worker, c2flow prove and bench prover.
type Devices struct {
	Params     string // local parameter cache
	Backend    string // cpu, or cuda (a build with -tags cuda)
	CPUDevices int    // cpu: pseudo-devices sharing the cores
	CUDA       string // cuda: device indices, "0,1"; empty: all visible
	// DeviceMemory caps the device memory a cuda device's backend keeps
	// (resident bases and a call's working space); 0: free memory less a
	// margin. Bases beyond it are streamed in chunks.
	DeviceMemory int64
	// DeviceType is icicle's device type of the cuda backend: CUDA, or
	// CPU (icicle's CPU backend, for tests).
	DeviceType string
	EarlyG2    bool
}

// Add registers the flags.
func (d *Devices) Add(fs *flag.FlagSet) {
	fs.StringVar(&d.Params, "params", params.DefaultDir(), "local parameter cache")
	fs.StringVar(&d.Backend, "backend", "cpu", "device backend: cpu, or cuda (a build with -tags cuda)")
	fs.IntVar(&d.CPUDevices, "cpu-devices", 1, "CPU backend pseudo-devices sharing this host's cores")
	fs.StringVar(&d.CUDA, "devices", "", "cuda: device indices, e.g. 0,1 (default: all visible)")
	fs.Int64Var(&d.DeviceMemory, "device-memory", 0, fmt.Sprintf("cuda: bytes of device memory each device's backend may hold (0: its free memory less 2 GiB; %d on a device that reports none); proving-key bases beyond it are streamed in chunks, and the log says which", gpu.UnreportedDeviceMemory))
	fs.StringVar(&d.DeviceType, "icicle-device", Env(gpu.DeviceTypeEnv, gpu.DeviceCUDA), "cuda: icicle's device type: CUDA (a GPU), or CPU (icicle's CPU backend, to test the CUDA code without a GPU; its timings mean nothing) ($"+gpu.DeviceTypeEnv+")")
	fs.BoolVar(&d.EarlyG2, "early-g2", false, "start the B-in-G2 MSM when the device phase starts")
}

// DeviceIDs parses --devices.
func (d *Devices) DeviceIDs() ([]int, error) { return gpu.ParseDevices(d.CUDA) }

// Slots returns the devices' slots (a build without CUDA says so here,
// before any key loads); a cuda device logs to log its memory when it
// opens and whether each base set is resident or streamed.
func (d *Devices) Slots(log *slog.Logger) (*gpu.Slots, error) {
	ids, err := d.DeviceIDs()
	if err != nil {
		return nil, err
	}
	if d.DeviceMemory < 0 {
		return nil, fmt.Errorf("--device-memory %d: a byte count, 0 for the default", d.DeviceMemory)
	}
	return gpu.NewBackendSlots(d.Backend, ids, d.CPUDevices,
		gpu.WithDeviceMemory(d.DeviceMemory), gpu.WithDeviceType(d.DeviceType), gpu.WithCUDALogger(log))
}
