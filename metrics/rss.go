package metrics

import (
	"os"
	"strconv"
	"strings"
)

// RSS is the process's resident set now (VmRSS).
func RSS() int64 { return procStatusKB("VmRSS:") * 1024 }

// PeakRSS is the process's peak resident set (VmHWM), sampled by the
// kernel; 0 where /proc is not available.
func PeakRSS() int64 { return procStatusKB("VmHWM:") * 1024 }

// ResetPeakRSS makes the peak resident set (VmHWM) the resident set now,
// so that PeakRSS tells the peak of what comes next (Linux's clear_refs;
// an error where it is not available).
func ResetPeakRSS() error {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

func procStatusKB(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, field) {
			f := strings.Fields(line[len(field):])
			if len(f) > 0 {
				v, _ := strconv.ParseInt(f[0], 10, 64)
				return v
			}
		}
	}
	return 0
}
