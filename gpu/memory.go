package gpu

import "fmt"

// MemoryError is a device operation that failed for want of device
// memory: an allocation refused, or the operation's own scratch. It says
// how much was asked and what the backend held; it is not a fault of the
// device (Faulted leaves it as it is, and no device is quarantined for
// it), and the work may be tried again, on this host once the device has
// room or on another.
type MemoryError struct {
	Device string
	What   string
	Bytes  int64 // asked for (0: the operation's own, unknown)
	// Resident, Working and Limit are what the backend held of the
	// device when it failed: bases kept, running quotients' vectors, its
	// cap.
	Resident, Working, Limit int64
	Err                      error
}

func (e *MemoryError) Error() string {
	return fmt.Sprintf("device %s: %s: %d bytes not allocated (held: %d bytes of resident bases, %d of running quotients; limit %d): %v",
		e.Device, e.What, e.Bytes, e.Resident, e.Working, e.Limit, e.Err)
}

func (e *MemoryError) Unwrap() error { return e.Err }

// DeviceMemory is a device's accounting, as its backend keeps it: what it
// may hold (Limit) and what it holds: resident bases (in ResidentSets
// sets), running quotients' vectors and the NTT domain's twiddles. icicle's
// MSM scratch and the CUDA context live in the margin the limit leaves.
type DeviceMemory struct {
	Limit        int64 `json:"limit_bytes"`
	Resident     int64 `json:"resident_bytes"`
	ResidentSets int   `json:"resident_sets"`
	Working      int64 `json:"working_bytes"`
	Twiddles     int64 `json:"twiddle_bytes"`
}

// MemoryReporter is a backend that accounts for its device's memory.
type MemoryReporter interface {
	Memory() DeviceMemory
}

// Memory returns the accounting of each device whose backend keeps one.
func (s *Slots) Memory() map[string]DeviceMemory {
	var out map[string]DeviceMemory
	for _, d := range s.all { // fixed when the slots are made
		if m, ok := d.(MemoryReporter); ok {
			if out == nil {
				out = map[string]DeviceMemory{}
			}
			out[d.Name()] = m.Memory()
		}
	}
	return out
}
