//go:build unix

package activities

import "syscall"

// stopSelf stops this process until a SIGCONT (Hooks.StopInDevice).
func stopSelf() error { return syscall.Kill(syscall.Getpid(), syscall.SIGSTOP) }
