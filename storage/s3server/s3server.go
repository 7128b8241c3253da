// Package s3server runs versitygw's S3 gateway with its POSIX backend in
// this process: the embedded S3-compatible storage of `c2flow dev`, so the
// same S3 client code runs in development as in production.
//
// versitygw's POSIX backend changes the process's working directory to the
// data directory, and only one gateway may run per process: callers make
// every other path absolute before Run (cmd/c2flow does).
package s3server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/versity/versitygw/auth"
	"github.com/versity/versitygw/backend/meta"
	"github.com/versity/versitygw/backend/posix"
	"github.com/versity/versitygw/embedgw"
)

// Config of the embedded server.
type Config struct {
	Addr      string // host:port to listen on, e.g. 127.0.0.1:9000
	Dir       string // data directory (buckets are its subdirectories)
	AccessKey string
	SecretKey string
	// Verbose lets versitygw print its per-request lines on stdout; off,
	// the server prints nothing.
	Verbose bool
	// CertFile and KeyFile (PEM), both or neither, make the server speak
	// HTTPS.
	CertFile, KeyFile string
}

// Run serves S3 on cfg.Addr until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	if cfg.AccessKey == "" || cfg.SecretKey == "" {
		return errors.New("s3server: access and secret key are required")
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return err
	}
	if err := absTLS(&cfg); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("s3server: data dir: %w", err)
	}
	var ms meta.MetadataStorer = meta.XattrMeta{}
	opts := posix.PosixOpts{Concurrency: 5000, CopyObjectThreshold: 5 << 30}
	if err := (meta.XattrMeta{}).Test(dir); err != nil {
		// No user xattrs on this filesystem: keep metadata in a sidecar
		// directory beside (not inside) the data directory.
		side := dir + ".meta"
		if err := os.MkdirAll(side, 0o755); err != nil {
			return err
		}
		sc, err := meta.NewSideCar(side)
		if err != nil {
			return fmt.Errorf("s3server: sidecar metadata: %w", err)
		}
		ms, opts.SideCarDir = sc, side
	}
	opts.SetNewDirPerm(0o755)
	opts.SetNewFilePerm(0o644)
	be, err := posix.New(dir, ms, opts)
	if err != nil {
		return fmt.Errorf("s3server: posix backend: %w", err)
	}
	defer be.Shutdown()
	gw := &embedgw.Config{
		RootUserAccess: cfg.AccessKey, RootUserSecret: cfg.SecretKey, Region: "us-east-1",
		Ports: []string{cfg.Addr}, MaxConnections: 250000, MaxRequests: 100000,
		MultipartMaxParts: 10000, Quiet: !cfg.Verbose, CertFile: cfg.CertFile, KeyFile: cfg.KeyFile,
	}
	// The single-account IAM the gateway would pick itself, made here:
	// versitygw's own choice prints "No IAM service configured, enabling
	// single account mode" on stdout.
	gw.IAMService = auth.NewIAMServiceSingle(gw.IamOpts().RootAccount)
	err = embedgw.RunVersityGW(ctx, be, gw)
	if err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
		return fmt.Errorf("s3server: %w", err)
	}
	return nil
}

// WaitReady polls addr until it accepts TCP connections.
func WaitReady(ctx context.Context, addr string) error {
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("s3 server at %s not ready: %w", addr, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// FreeAddr returns a loopback address with a free port.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// absTLS checks the certificate and key and makes their paths absolute:
// the POSIX backend changes the working directory before they are read.
func absTLS(cfg *Config) error {
	if (cfg.CertFile == "") != (cfg.KeyFile == "") {
		return errors.New("s3server: TLS needs both a certificate and a key")
	}
	if cfg.CertFile == "" {
		return nil
	}
	if _, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile); err != nil {
		return fmt.Errorf("s3server: TLS certificate %s and key %s: %w", cfg.CertFile, cfg.KeyFile, err)
	}
	var err error
	if cfg.CertFile, err = filepath.Abs(cfg.CertFile); err != nil {
		return err
	}
	cfg.KeyFile, err = filepath.Abs(cfg.KeyFile)
	return err
}
