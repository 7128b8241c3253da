package procflags

import (
	"flag"
	"testing"

	"github.com/c2flow/c2flow/gpu"
)

// --icicle-device defaults to $C2FLOW_ICICLE_DEVICE (the tests' choice),
// else CUDA; the flag overrides it. (That prove and bench prover log the
// device memory through Slots' logger is TestCUDAProveLogsDeviceMemory's,
// under make test-icicle.)
func TestIcicleDeviceFlag(t *testing.T) {
	for _, tc := range []struct {
		env  string
		args []string
		want string
	}{
		{"", nil, gpu.DeviceCUDA},
		{"CPU", nil, gpu.DeviceCPU},
		{"CPU", []string{"--icicle-device", "CUDA"}, gpu.DeviceCUDA},
	} {
		t.Setenv(gpu.DeviceTypeEnv, tc.env)
		fs := flag.NewFlagSet("prove", flag.ContinueOnError)
		var d Devices
		d.Add(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if d.DeviceType != tc.want {
			t.Errorf("env %q, args %q: device type %q, want %q", tc.env, tc.args, d.DeviceType, tc.want)
		}
	}
}
