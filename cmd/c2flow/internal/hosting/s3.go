package hosting

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/cmd/internal/procflags"
	"github.com/c2flow/c2flow/storage/s3server"
)

// RunS3 serves the S3 that `c2flow dev` embeds (versitygw, POSIX backend)
// on its own: the fleet's store in deploy/'s compose stack, where no
// upstream image can be pulled.
func RunS3(ctx context.Context, args []string) error {
	fs := cli.NewFlags("s3")
	address := fs.String("address", "127.0.0.1:7070", "listen address HOST:PORT")
	dir := fs.String("dir", "", "data directory: each bucket a subdirectory (required)")
	certFile := fs.String("tls-cert", "", "serve HTTPS with this certificate (PEM)")
	keyFile := fs.String("tls-key", "", "private key (PEM) of --tls-cert")
	verbose := fs.Bool("verbose", false, "print versitygw's line per request")
	bucket := fs.String("bucket", procflags.Env("C2FLOW_S3_BUCKET", "c2flow"), "with $C2FLOW_S3_WORKER_ACCESS_KEY and $C2FLOW_S3_WORKER_SECRET_KEY: the bucket their account owns, created if missing ($C2FLOW_S3_BUCKET)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *dir == "" {
		return errors.New("--dir is required: the data directory")
	}
	access, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if access == "" || secret == "" {
		return errors.New("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set: the one account this S3 serves")
	}
	// The workers' key, where set: an account that reaches the one bucket
	// (deploy/README.md); the root key above stays the operator's.
	cfg := s3server.Config{Addr: *address, Dir: *dir, AccessKey: access, SecretKey: secret,
		CertFile: *certFile, KeyFile: *keyFile, Verbose: *verbose,
		BucketAccess: os.Getenv("C2FLOW_S3_WORKER_ACCESS_KEY"), BucketSecret: os.Getenv("C2FLOW_S3_WORKER_SECRET_KEY")}
	if cfg.BucketAccess != "" || cfg.BucketSecret != "" {
		cfg.Bucket = *bucket
		fmt.Fprintf(os.Stderr, "c2flow s3: account %s owns bucket %s and reaches no other\n", cfg.BucketAccess, cfg.Bucket)
	}
	fmt.Fprintf(os.Stderr, "c2flow s3: serving %s on %s\n", *dir, *address)
	if err := s3server.Run(ctx, cfg); err != nil {
		return fmt.Errorf("serving S3 on %s: %w", *address, err)
	}
	return nil
}
