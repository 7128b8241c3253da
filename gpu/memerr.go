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
