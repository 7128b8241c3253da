// Package units formats sizes for people: byte counts in binary units and
// the FFT domain of a constraint count.
package units

import "fmt"

// Bytes formats b in binary units ("15.5 GiB", "512 B").
func Bytes(b uint64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := uint64(unit), 0
	for n := b / unit; n >= unit; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(b)/float64(div), "KMGTPE"[exp])
}

// Log2 is the exponent of the smallest power of two at least n.
func Log2(n int) int {
	k := 0
	for 1<<k < n {
		k++
	}
	return k
}
