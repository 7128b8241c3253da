package gpu

import "testing"

func TestParseDeviceType(t *testing.T) {
	for in, want := range map[string]string{"": DeviceCUDA, "cuda": DeviceCUDA, " CPU ": DeviceCPU, "cpu": DeviceCPU} {
		if got, err := ParseDeviceType(in); err != nil || got != want {
			t.Errorf("ParseDeviceType(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"gpu", "METAL", "cuda0"} {
		if _, err := ParseDeviceType(in); err == nil {
			t.Errorf("ParseDeviceType(%q) accepted", in)
		}
	}
}
