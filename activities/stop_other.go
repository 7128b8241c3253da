//go:build !unix

package activities

import "errors"

func stopSelf() error { return errors.New("stopping the process needs SIGSTOP (unix)") }
