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
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
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
	// BucketAccess and BucketSecret, both or neither, add a second account
	// (versitygw's role "user") that owns Bucket, created if missing: its
	// key reaches that bucket alone, never another bucket, a new bucket or
	// the account API, which stay the root key's. The accounts are kept in
	// Dir+".iam" (mode 700); a changed secret replaces the stored one.
	BucketAccess, BucketSecret, Bucket string
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
	if cfg.BucketAccess != "" || cfg.BucketSecret != "" {
		iam, err := bucketAccount(ctx, be, gw.IamOpts().RootAccount, dir+".iam", cfg)
		if err != nil {
			return err
		}
		gw.IAMService = iam
	}
	err = embedgw.RunVersityGW(ctx, be, gw)
	if err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
		return fmt.Errorf("s3server: %w", err)
	}
	return nil
}

// bucketAccount opens the file-based IAM with the bucket's account in it
// (role user: it may not create buckets) and makes that account the
// bucket's owner, creating the bucket if missing.
func bucketAccount(ctx context.Context, be *posix.Posix, root auth.Account, iamDir string, cfg Config) (auth.IAMService, error) {
	switch {
	case cfg.BucketAccess == "" || cfg.BucketSecret == "" || cfg.Bucket == "":
		return nil, errors.New("s3server: a bucket account needs its access key, secret key and bucket")
	case cfg.BucketAccess == cfg.AccessKey:
		return nil, errors.New("s3server: the bucket account's access key is the root's")
	}
	if err := os.MkdirAll(iamDir, 0o700); err != nil {
		return nil, fmt.Errorf("s3server: accounts dir: %w", err)
	}
	iam, err := auth.NewInternal(root, iamDir)
	if err != nil {
		return nil, fmt.Errorf("s3server: accounts: %w", err)
	}
	acct, err := iam.GetUserAccount(cfg.BucketAccess)
	switch {
	case errors.Is(err, auth.ErrNoSuchUser):
		err = iam.CreateAccount(auth.Account{Access: cfg.BucketAccess, Secret: cfg.BucketSecret, Role: auth.RoleUser})
	case err == nil && (acct.Secret != cfg.BucketSecret || acct.Role != auth.RoleUser):
		secret := cfg.BucketSecret
		err = iam.UpdateUserAccount(cfg.BucketAccess, auth.MutableProps{Secret: &secret, Role: auth.RoleUser})
	}
	if err != nil {
		return nil, fmt.Errorf("s3server: account %s: %w", cfg.BucketAccess, err)
	}
	bucket := cfg.Bucket
	if _, err := be.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &bucket}); err != nil {
		acl, err := json.Marshal(auth.ACL{Owner: cfg.BucketAccess})
		if err != nil {
			return nil, err
		}
		noLock := false
		in := &s3.CreateBucketInput{Bucket: &bucket, ObjectLockEnabledForBucket: &noLock, CreateBucketConfiguration: &s3types.CreateBucketConfiguration{}}
		if err := be.CreateBucket(ctx, in, acl); err != nil {
			return nil, fmt.Errorf("s3server: create bucket %s: %w", bucket, err)
		}
	}
	// At every start, so an account renamed in .env takes the bucket over.
	// versitygw's owner change also removes a bucket policy: this bucket
	// has none of c2flow's.
	if err := be.ChangeBucketOwner(ctx, bucket, cfg.BucketAccess); err != nil {
		return nil, fmt.Errorf("s3server: bucket %s owned by %s: %w", bucket, cfg.BucketAccess, err)
	}
	return iam, nil
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
