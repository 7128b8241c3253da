// Package storage keeps c2flow's artifacts in S3 or any S3-compatible
// server, through aws-sdk-go-v2.
//
// Layout under the configured bucket and prefix:
//
//	c1/<sector-id>.json                      C1 artifact (JSON)
//	c2/<sector-id>.proof                     C2 proof (prover.C2 encoding)
//	c2/<sector-id>.json                      C2 manifest (profile, partitions, vk digest, timings, sha256)
//	params/<profile>/<circuit-digest>/pk     proving key (gnark raw encoding)
//	params/<profile>/<circuit-digest>/vk     verifying key
//	params/<profile>/<circuit-digest>/r1cs   constraint system
//
// Every object carries its SHA-256 in the x-amz-meta-sha256 metadata and,
// for single-part uploads, as the S3 SHA-256 checksum, so the server rejects
// a corrupted upload; reads recompute it and a mismatch is ErrChecksum,
// never silently used. C2 writes are conditional (If-None-Match: *): a
// retried activity never replaces a good stored proof; a corrupt or
// unverifiable one is replaced conditional on its ETag (If-Match).
package storage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	tmtypes "github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"
)

// Errors callers branch on. ErrNotFound also matches fs.ErrNotExist, so
// packages that take the store through a small interface (params.Remote)
// need not import this one.
var (
	ErrNotFound      error = notFound{}
	ErrChecksum            = errors.New("sha-256 mismatch: object is corrupt")
	ErrExists              = errors.New("a different object already exists under this key")
	ErrAuth                = errors.New("S3 rejected the credentials")
	ErrNoBucket            = errors.New("bucket does not exist")
	ErrNoCredentials       = errors.New("no S3 credentials")
	ErrUnreachable         = errors.New("S3 server unreachable")
)

type notFound struct{}

func (notFound) Error() string        { return "object not found" }
func (notFound) Is(target error) bool { return target == fs.ErrNotExist }

// Config says where the objects live.
type Config struct {
	Endpoint  string // empty: AWS's endpoint for Region
	Region    string
	Bucket    string
	Prefix    string // prepended to every key, e.g. "c2flow/"
	AccessKey string // empty: the standard AWS credential chain
	SecretKey string
	PathStyle bool // needed by most S3-compatible servers
	// MaxAttempts per request (0: 20), with jittered exponential backoff
	// capped at MaxBackoff (0: 2s): about 20 s of retrying, enough to ride
	// out a server restart on a loaded host (10 attempts, ~9 s, were not:
	// a restart beside a busy test suite outlasted them).
	MaxAttempts int
	MaxBackoff  time.Duration
	// PartSize of multipart transfers (0: 16 MiB).
	PartSize int64
	// DownloadChunk is the range DownloadFile fetches and records at a
	// time (0: 64 MiB): a cut download resumes from its last chunk.
	DownloadChunk int64
	// CABundle is a PEM file of the CAs trusted for an HTTPS Endpoint
	// instead of the system's; empty: $AWS_CA_BUNDLE if set (the SDK
	// reads it), else the system's.
	CABundle string
}

// Store is an S3 bucket holding c2flow's artifacts.
type Store struct {
	cfg Config
	s3  *s3.Client
	tm  *transfermanager.Client
}

const metaSHA = "sha256"

// Open returns a store over cfg; it does not contact the server.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("storage: bucket is required")
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = 20
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = 2 * time.Second
	}
	if cfg.PartSize == 0 {
		cfg.PartSize = 16 << 20
	}
	opts := []func(*config.LoadOptions) error{
		config.WithRegion(cfg.Region),
		// The transfer manager logs checksum notices at debug through the
		// SDK's default logger; c2flow reports errors itself.
		config.WithLogger(logging.Nop{}),
		// A buildable client, not a plain *http.Client: with AWS_CA_BUNDLE
		// set, LoadDefaultConfig needs to adjust its transport.
		config.WithHTTPClient(awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
			t.MaxIdleConnsPerHost = 64
		})),
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = cfg.MaxAttempts
				o.MaxBackoff = cfg.MaxBackoff
				o.RateLimiter = ratelimit.None // a restart fails many requests at once; do not run out of retry tokens
				o.Retryables = append([]retry.IsErrorRetryable{retry.IsErrorRetryableFunc(noRetryCertErrors)}, o.Retryables...)
			})
		}),
	}
	if cfg.CABundle != "" {
		o, err := caBundleOption(cfg.CABundle)
		if err != nil {
			return nil, err
		}
		opts = append(opts, o)
	}
	if cfg.Endpoint != "" {
		// A custom endpoint is not AWS: probing the EC2 metadata service
		// for credentials only delays the "no credentials" error.
		opts = append(opts, config.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	}
	if cfg.AccessKey != "" {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(cfg.AccessKey, cfg.SecretKey, "")))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("storage: aws config: %w", err)
	}
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.UsePathStyle = cfg.PathStyle
	})
	tm := transfermanager.New(client, func(o *transfermanager.Options) {
		o.PartSizeBytes = cfg.PartSize
		o.MultipartUploadThreshold = cfg.PartSize
		o.Concurrency = 4
	})
	return &Store{cfg: cfg, s3: client, tm: tm}, nil
}

// Config returns the store's configuration.
func (s *Store) Config() Config { return s.cfg }

func (s *Store) key(k string) string { return s.cfg.Prefix + k }

// CheckBucket says whether the bucket exists and is reachable: a worker
// or client never creates one (a mistyped --s3-bucket would otherwise
// become a new, empty bucket and every C1 "missing"). A missing bucket,
// refused credentials, no credentials and an unreachable server are told
// apart (ErrNoBucket, ErrAuth, ErrNoCredentials, ErrUnreachable).
func (s *Store) CheckBucket(ctx context.Context) error {
	_, err := s.s3.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &s.cfg.Bucket})
	if err == nil {
		return nil
	}
	op := "head bucket"
	// A HEAD answer has no body, only a status, and servers differ in it
	// (versitygw answers an unknown access key with 404): a GET names the
	// error.
	var re *awshttp.ResponseError
	if errors.As(err, &re) && (re.HTTPStatusCode() == http.StatusNotFound || re.HTTPStatusCode() == http.StatusForbidden) {
		if _, lerr := s.s3.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &s.cfg.Bucket, MaxKeys: aws.Int32(1)}); lerr != nil {
			op, err = "list bucket", lerr
		}
	}
	err = s.classify(op, "", err)
	if errors.Is(err, ErrNoBucket) || errors.Is(err, ErrNotFound) {
		return fmt.Errorf("bucket %q does not exist at %s (create it first; `c2flow dev` creates its own): %w", s.cfg.Bucket, s.endpoint(), err)
	}
	return fmt.Errorf("check bucket %q at %s: %w", s.cfg.Bucket, s.endpoint(), err)
}

// EnsureBucket creates the bucket if it does not exist.
func (s *Store) EnsureBucket(ctx context.Context) error {
	_, err := s.s3.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &s.cfg.Bucket})
	if err == nil {
		return nil
	}
	if err := s.classify("head bucket", "", err); !errors.Is(err, ErrNoBucket) && !errors.Is(err, ErrNotFound) {
		return err
	}
	_, err = s.s3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &s.cfg.Bucket})
	var owned *types.BucketAlreadyOwnedByYou
	if err != nil && !errors.As(err, &owned) {
		return s.classify("create bucket", "", err)
	}
	return nil
}

// classify turns SDK errors into the package's errors with a message that
// says what to fix.
func (s *Store) classify(op, key string, err error) error {
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	var nsb *types.NoSuchBucket
	where := fmt.Sprintf("s3 %s %s/%s", op, s.cfg.Bucket, s.key(key))
	var ae smithy.APIError
	switch {
	case errors.As(err, &nsb):
		return fmt.Errorf("%s: %w (%s at %s)", where, ErrNoBucket, s.cfg.Bucket, s.endpoint())
	case key == "" && errors.As(err, &nf):
		// A bucket-level request's bare 404: the bucket.
		return fmt.Errorf("%s: %w (%s at %s)", where, ErrNoBucket, s.cfg.Bucket, s.endpoint())
	case errors.As(err, &nsk), errors.As(err, &nf):
		return fmt.Errorf("%s: %w", where, ErrNotFound)
	case errors.As(err, &ae):
		switch ae.ErrorCode() {
		case "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "InvalidToken", "ExpiredToken", "Forbidden", "XAdminUserNotFound": // the last: versitygw's unknown access key
			return fmt.Errorf("%s: %w (%s: check the access key and secret for %s)", where, ErrAuth, ae.ErrorCode(), s.endpoint())
		case "NoSuchBucket":
			return fmt.Errorf("%s: %w (%s at %s)", where, ErrNoBucket, s.cfg.Bucket, s.endpoint())
		case "NoSuchKey", "NotFound":
			return fmt.Errorf("%s: %w", where, ErrNotFound)
		}
	}
	if strings.Contains(err.Error(), "get identity: ") {
		// The SDK found no credentials (it wraps this without a type).
		return fmt.Errorf("%s: %w (give an access key and secret, or AWS credentials in the environment): %w", where, ErrNoCredentials, err)
	}
	var dns *net.DNSError
	var ne *net.OpError
	if errors.As(err, &dns) || (errors.As(err, &ne) && ne.Op == "dial") {
		return fmt.Errorf("%s: %w (%s: check the endpoint and that the server runs): %w", where, ErrUnreachable, s.endpoint(), err)
	}
	if p := certProblem(err, s.endpoint()); p != "" {
		return fmt.Errorf("%s: %s: %w", where, p, err)
	}
	return fmt.Errorf("%s: %w", where, err)
}

func (s *Store) endpoint() string {
	if s.cfg.Endpoint != "" {
		return s.cfg.Endpoint
	}
	return "AWS " + s.cfg.Region
}

func sum(b []byte) (hexSum, b64Sum string) {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:]), base64.StdEncoding.EncodeToString(h[:])
}

// Put writes a small object in one request with its SHA-256 as metadata and
// as the S3 checksum.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	hx, b64 := sum(data)
	_, err := s.s3.PutObject(ctx, s.putInput(key, data, hx, b64))
	if err != nil {
		return s.classify("put", key, err)
	}
	return nil
}

func (s *Store) putInput(key string, data []byte, hx, b64 string) *s3.PutObjectInput {
	return &s3.PutObjectInput{
		Bucket: &s.cfg.Bucket, Key: aws.String(s.key(key)), Body: bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))), ChecksumSHA256: aws.String(b64),
		ChecksumAlgorithm: types.ChecksumAlgorithmSha256, Metadata: map[string]string{metaSHA: hx},
	}
}

// PutIfAbsent writes the object only if the key is free (If-None-Match: *).
// Writing the same bytes again succeeds with created=false; different bytes
// under an existing key are ErrExists and the stored object is kept.
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte) (created bool, err error) {
	hx, b64 := sum(data)
	in := s.putInput(key, data, hx, b64)
	in.IfNoneMatch = aws.String("*")
	_, err = s.s3.PutObject(ctx, in)
	if err == nil {
		return true, nil
	}
	var ae smithy.APIError
	if errors.As(err, &ae) && (ae.ErrorCode() == "PreconditionFailed" || ae.ErrorCode() == "ConditionalRequestConflict") {
		head, herr := s.Head(ctx, key)
		if herr != nil {
			return false, herr
		}
		if head == hx {
			return false, nil
		}
		return false, fmt.Errorf("s3 put %s/%s: %w (stored sha256 %s, new %s)", s.cfg.Bucket, s.key(key), ErrExists, head, hx)
	}
	return false, s.classify("put", key, err)
}

// Head returns the object's recorded SHA-256 (hex).
func (s *Store) Head(ctx context.Context, key string) (string, error) {
	out, err := s.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.cfg.Bucket, Key: aws.String(s.key(key))})
	if err != nil {
		return "", s.classify("head", key, err)
	}
	return out.Metadata[metaSHA], nil
}

// Size returns an object's size in bytes without reading it.
func (s *Store) Size(ctx context.Context, key string) (int64, error) {
	out, err := s.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.cfg.Bucket, Key: aws.String(s.key(key))})
	if err != nil {
		return 0, s.classify("head", key, err)
	}
	return aws.ToInt64(out.ContentLength), nil
}

// Get reads a small object and checks its SHA-256.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	data, _, err := s.getTagged(ctx, key)
	return data, err
}

// getTagged is Get that also returns the object's ETag, even when its
// bytes fail the checksum, so a corrupt object can be replaced with a
// write conditional on being that very object.
func (s *Store) getTagged(ctx context.Context, key string) (data []byte, etag string, err error) {
	out, err := s.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.cfg.Bucket, Key: aws.String(s.key(key))})
	if err != nil {
		return nil, "", s.classify("get", key, err)
	}
	defer out.Body.Close()
	etag = aws.ToString(out.ETag)
	data, err = io.ReadAll(out.Body)
	if err != nil {
		return nil, etag, s.readErr("get", key, err)
	}
	want := out.Metadata[metaSHA]
	if hx, _ := sum(data); want == "" || hx != want {
		return nil, etag, fmt.Errorf("s3 get %s/%s: %w (recorded %q, read %s)", s.cfg.Bucket, s.key(key), ErrChecksum, want, hx)
	}
	return data, etag, nil
}

// replaceIfMatch overwrites the object only while it is still the one
// with ETag etag (If-Match): a replacement never clobbers an object
// written since it was read, and the key is never left empty.
func (s *Store) replaceIfMatch(ctx context.Context, key, etag string, data []byte) error {
	if etag == "" {
		return fmt.Errorf("s3 replace %s/%s: the stored object has no ETag to condition on", s.cfg.Bucket, s.key(key))
	}
	hx, b64 := sum(data)
	in := s.putInput(key, data, hx, b64)
	in.IfMatch = aws.String(etag)
	_, err := s.s3.PutObject(ctx, in)
	var ae smithy.APIError
	if errors.As(err, &ae) && (ae.ErrorCode() == "PreconditionFailed" || ae.ErrorCode() == "ConditionalRequestConflict") {
		return fmt.Errorf("s3 replace %s/%s: %w (it changed since it was read as %s)", s.cfg.Bucket, s.key(key), ErrExists, etag)
	}
	if err != nil {
		return s.classify("replace", key, err)
	}
	return nil
}

// Open streams an object (large files: Filecoin's parameters). Its bytes
// are not checked here: the caller checks what it read against the digest
// it trusts (parameters.json). A missing object is ErrNotFound.
func (s *Store) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	out, err := s.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.cfg.Bucket, Key: aws.String(s.key(key))})
	if err != nil {
		return nil, s.classify("open", key, err)
	}
	return out.Body, nil
}

// readErr names a checksum failure the SDK found while streaming.
func (s *Store) readErr(op, key string, err error) error {
	if strings.Contains(strings.ToLower(err.Error()), "checksum") {
		return fmt.Errorf("s3 %s %s/%s: %w: %v", op, s.cfg.Bucket, s.key(key), ErrChecksum, err)
	}
	return s.classify(op, key, err)
}

// GetRange reads length bytes at offset (no checksum: a part of an object
// cannot be checked against the whole object's digest).
func (s *Store) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	out, err := s.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.cfg.Bucket, Key: aws.String(s.key(key)),
		Range: aws.String(fmt.Sprintf("bytes=%d-%d", offset, offset+length-1))})
	if err != nil {
		return nil, s.classify("get range", key, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, s.readErr("get range", key, err)
	}
	return b, nil
}

// List returns the keys under a prefix (relative to the store's prefix).
func (s *Store) List(ctx context.Context, prefix string) ([]string, error) {
	objs, err := s.ListObjects(ctx, prefix)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(objs))
	for i, o := range objs {
		keys[i] = o.Key
	}
	return keys, nil
}

// Object is a listed object: its key (relative to the store's prefix),
// size and last modification.
type Object struct {
	Key      string
	Size     int64
	Modified time.Time
}

// ListObjects returns the objects under a prefix (relative to the store's
// prefix), with their sizes and modification times.
func (s *Store) ListObjects(ctx context.Context, prefix string) ([]Object, error) {
	var objs []Object
	p := s3.NewListObjectsV2Paginator(s.s3, &s3.ListObjectsV2Input{Bucket: &s.cfg.Bucket, Prefix: aws.String(s.key(prefix))})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, s.classify("list", prefix, err)
		}
		for _, o := range page.Contents {
			objs = append(objs, Object{Key: strings.TrimPrefix(aws.ToString(o.Key), s.cfg.Prefix), Size: aws.ToInt64(o.Size), Modified: aws.ToTime(o.LastModified)})
		}
	}
	return objs, nil
}

// Delete removes an object (absent is not an error).
func (s *Store) Delete(ctx context.Context, key string) error {
	_, err := s.s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.cfg.Bucket, Key: aws.String(s.key(key))})
	if err != nil {
		return s.classify("delete", key, err)
	}
	return nil
}

// UploadFile streams a large file with the transfer manager (multipart past
// PartSize). The SHA-256 is computed first so it can travel as metadata.
func (s *Store) UploadFile(ctx context.Context, key, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("hash %s: %w", file, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err = s.tm.UploadObject(ctx, &transfermanager.UploadObjectInput{
		Bucket: &s.cfg.Bucket, Key: aws.String(s.key(key)), Body: f,
		ChecksumAlgorithm: tmtypes.ChecksumAlgorithmCrc32,
		Metadata:          map[string]string{metaSHA: hex.EncodeToString(h.Sum(nil))},
	})
	if err != nil {
		return s.classify("upload", key, err)
	}
	return nil
}

// PutStream uploads the size bytes write writes under key, streamed
// through the transfer manager: multipart past PartSize, each part with a
// CRC32 checksum the server checks, and never more in memory than the
// parts in flight (Concurrency+1 of PartSize). The object carries no
// SHA-256 metadata, which would have to be known before the first byte:
// what is streamed must check itself (a spilled witness ends with its
// SHA-256). A write error aborts the upload; nothing is stored.
func (s *Store) PutStream(ctx context.Context, key string, size int64, write func(io.Writer) error) error {
	pr, pw := io.Pipe()
	werr := make(chan error, 1)
	go func() {
		err := write(pw)
		pw.CloseWithError(err) // nil: EOF for the uploader
		werr <- err
	}()
	_, err := s.tm.UploadObject(ctx, &transfermanager.UploadObjectInput{
		Bucket: &s.cfg.Bucket, Key: aws.String(s.key(key)), Body: pr, ContentLength: aws.Int64(size),
		ChecksumAlgorithm: tmtypes.ChecksumAlgorithmCrc32,
	})
	pr.CloseWithError(errUploadEnded) // unblocks a writer the upload left
	if wErr := <-werr; wErr != nil && !errors.Is(wErr, errUploadEnded) {
		return fmt.Errorf("s3 upload %s/%s: %w", s.cfg.Bucket, s.key(key), wErr) // the writer's own failure
	}
	if err != nil {
		return s.classify("upload", key, err)
	}
	return nil
}

var errUploadEnded = errors.New("upload ended")
