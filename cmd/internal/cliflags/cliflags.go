// Package cliflags holds the flags shared by c2flow's binaries: Temporal,
// S3 and the worker host (procflags has logging and devices). Every flag
// has an environment variable default, so a container sets them once.
package cliflags

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v5"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/c2flow/c2flow/activities"
	"github.com/c2flow/c2flow/cmd/internal/procflags"
	"github.com/c2flow/c2flow/internal/sdklog"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/retention"
	"github.com/c2flow/c2flow/storage"
)

// Temporal are the Temporal connection flags.
type Temporal struct {
	Address   string
	Namespace string
	Auth      TemporalAuth // TLS and credentials (tls.go)
}

// Add registers the flags.
func (t *Temporal) Add(fs *flag.FlagSet) {
	fs.StringVar(&t.Address, "address", procflags.Env("TEMPORAL_ADDRESS", "127.0.0.1:7233"), "Temporal frontend host:port ($TEMPORAL_ADDRESS)")
	fs.StringVar(&t.Namespace, "namespace", procflags.Env("TEMPORAL_NAMESPACE", "default"), "Temporal namespace ($TEMPORAL_NAMESPACE)")
	t.Auth.add(fs)
}

// Dial connects to Temporal, logging through log at warn and above; mh,
// if set, receives the SDK's metrics. A dial refused for TLS is a
// *TLSError.
func (t *Temporal) Dial(ctx context.Context, log *slog.Logger, mh ...client.MetricsHandler) (client.Client, error) {
	o := client.Options{HostPort: t.Address, Namespace: t.Namespace,
		Logger: tlog.NewStructuredLogger(slog.New(sdklog.Handler(log.Handler())))}
	if len(mh) > 0 && mh[0] != nil {
		o.MetricsHandler = mh[0]
	}
	if err := t.Auth.apply(&o); err != nil {
		return nil, fmt.Errorf("temporal at %s: %w", t.Address, err)
	}
	c, err := client.DialContext(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("temporal at %s: %w", t.Address, t.Auth.explain(ctx, t.Address, o.ConnectionOptions.TLS, err))
	}
	return c, nil
}

// DialRetry is Dial retried with exponential backoff (1 s, doubling to
// 15 s, jittered) for at most wait, each failed try logged at warn: a
// worker started before its server waits for it instead of exiting. It
// returns the last try's error, wrapped, when wait is spent, and ctx's
// when ctx ends.
func (t *Temporal) DialRetry(ctx context.Context, log *slog.Logger, wait time.Duration, mh ...client.MetricsHandler) (client.Client, error) {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval, b.MaxInterval = time.Second, 15*time.Second
	try := 0
	c, err := backoff.Retry(ctx, func() (client.Client, error) {
		try++
		c, err := t.Dial(ctx, log, mh...)
		var tlsErr *TLSError
		if errors.As(err, &tlsErr) {
			// A refused certificate is refused again: retrying never helps.
			return nil, backoff.Permanent(err)
		}
		return c, err
	}, backoff.WithBackOff(b), backoff.WithMaxElapsedTime(wait), backoff.WithNotify(func(err error, next time.Duration) {
		log.Warn("temporal not reachable yet; retrying", "address", t.Address, "try", try, "next_in", next.Round(100*time.Millisecond), "gives_up_after", wait, "error", err)
	}))
	if err != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("gave up after %d tries in %v: %w", try, wait, err)
	}
	return c, err
}

// S3 are the storage flags.
type S3 struct {
	Endpoint, Region, Bucket, Prefix string
	AccessKey, SecretKey             string
	PathStyle                        bool
	CABundle                         string
}

// Add registers the flags.
func (s *S3) Add(fs *flag.FlagSet) {
	fs.StringVar(&s.Endpoint, "s3-endpoint", procflags.Env("C2FLOW_S3_ENDPOINT", ""), "S3 endpoint URL; empty: AWS ($C2FLOW_S3_ENDPOINT)")
	fs.StringVar(&s.Region, "s3-region", procflags.Env("AWS_REGION", "us-east-1"), "S3 region ($AWS_REGION)")
	fs.StringVar(&s.Bucket, "s3-bucket", procflags.Env("C2FLOW_S3_BUCKET", "c2flow"), "bucket ($C2FLOW_S3_BUCKET)")
	fs.StringVar(&s.Prefix, "s3-prefix", procflags.Env("C2FLOW_S3_PREFIX", ""), "key prefix ($C2FLOW_S3_PREFIX)")
	fs.StringVar(&s.AccessKey, "s3-access-key", procflags.Env("AWS_ACCESS_KEY_ID", ""), "access key; empty: the AWS credential chain ($AWS_ACCESS_KEY_ID)")
	s.SecretKey = procflags.Env("AWS_SECRET_ACCESS_KEY", "")
	fs.Var(secretFlag{&s.SecretKey}, "s3-secret-key", "secret key (default from $AWS_SECRET_ACCESS_KEY; never printed)")
	fs.StringVar(&s.CABundle, "s3-ca", "", "CA certificates (PEM) trusted for an https:// --s3-endpoint instead of the system's; empty: $AWS_CA_BUNDLE if set")
	fs.BoolVar(&s.PathStyle, "s3-path-style", procflags.Env("C2FLOW_S3_PATH_STYLE", "true") == "true", "path-style addressing, for S3-compatible servers ($C2FLOW_S3_PATH_STYLE)")
}

// Config returns the storage configuration.
func (s *S3) Config() storage.Config {
	return storage.Config{Endpoint: s.Endpoint, Region: s.Region, Bucket: s.Bucket, Prefix: s.Prefix,
		AccessKey: s.AccessKey, SecretKey: s.SecretKey, PathStyle: s.PathStyle, CABundle: s.CABundle}
}

// placeholderSecret is the example environment's stand-in for a
// credential: refused, so that no example credential works as shipped.
const placeholderSecret = "change-me"

// Open opens the store and checks that its bucket exists; it never
// creates one (only the dev stack and setup do).
func (s *S3) Open(ctx context.Context) (*storage.Store, error) {
	if s.AccessKey == placeholderSecret || s.SecretKey == placeholderSecret {
		return nil, fmt.Errorf("S3 at %s: the access key or secret is %q, the example environment's placeholder (deploy/systemd/c2flow.env.example): put the store's keys in $AWS_ACCESS_KEY_ID and $AWS_SECRET_ACCESS_KEY", s.Endpoint, placeholderSecret)
	}
	st, err := storage.Open(ctx, s.Config())
	if err == nil {
		err = st.CheckBucket(ctx)
	}
	if err != nil && s.Endpoint == "" {
		// The usual mistake: a command run next to `c2flow dev` without
		// its endpoint goes to AWS and fails on credentials.
		return nil, fmt.Errorf("S3 at AWS (no --s3-endpoint or $C2FLOW_S3_ENDPOINT given; for the local stack of `c2flow dev` use --s3-endpoint http://127.0.0.1:9000 --s3-access-key c2flow-dev --s3-secret-key c2flow-dev-secret): %w", err)
	}
	if errors.Is(err, storage.ErrNoCredentials) {
		return nil, fmt.Errorf("S3 at %s (give --s3-access-key and --s3-secret-key, or $AWS_ACCESS_KEY_ID and $AWS_SECRET_ACCESS_KEY): %w", s.Endpoint, err)
	}
	if err != nil {
		return nil, fmt.Errorf("S3 at %s: %w", s.Endpoint, err)
	}
	return st, nil
}

// Host is a worker host's configuration as its flags give it: the host's
// own, and where its proof schemes find their keys.
type Host struct {
	activities.Config
	Keys registry.Options
}

// Over returns the host's configuration with its schemes (registry.Schemes
// over Keys) reading the keys Keys' directories lack from store, and
// publishing there the ones found only locally.
func (h Host) Over(store *storage.Store) activities.Config {
	c, k := h.Config, h.Keys
	if store != nil {
		k.Remote = store
	}
	if k.Log == nil {
		k.Log = c.Log
	}
	c.Schemes = registry.Schemes(k)
	return c
}

// AddHost registers the worker's flags and returns a function building
// the configuration after parsing.
func AddHost(fs *flag.FlagSet) (func() (Host, error), error) {
	var c activities.Config
	var keys registry.Options
	roles := fs.String("roles", "workflow,prove", "comma-separated roles: workflow (workflows, C1 validation, C2 storage), prove (synthesis, device phase, finalize on this host), synth (synthesis only, witnesses spilled), device (device phase and finalize of spilled witnesses)")
	fs.StringVar(&c.Spill, "spill", "", "where roles synth and device pass witnesses: dir:PATH (a disk every such host mounts) or s3 (the artifact store)")
	profiles := fs.String("profiles", "32KiB", "profiles whose keys are loaded at start (they size --memory-budget)")
	fs.StringVar(&c.ID, "id", "", "worker id, unique per process (default hostname-pid-random)")
	fs.IntVar(&c.PartitionWorkers, "partition-workers", 2, "partition budget: synthesized partitions in flight on this host")
	fs.Int64Var(&c.MemoryBudget, "memory-budget", 0, "bytes of synthesized partitions in flight (overrides --partition-workers)")
	fs.Int64Var(&c.UrgentBudget, "urgent-budget", activities.DefaultUrgentBudget, "bytes of --memory-budget kept for priority-1 syntheses (WinningPoSt), counted in it; with --partition-workers one partition beside them; negative: none")
	fs.IntVar(&c.FinalizeSlots, "finalize-slots", 0, "concurrent CPU finalizes (default: one per device)")
	fs.DurationVar(&c.WitnessTTL, "witness-ttl", 15*time.Minute, "drop witnesses idle for longer")
	fs.DurationVar(&c.DrainTimeout, "drain-timeout", 2*time.Minute, "on SIGTERM: time, counted from the signal, the partitions synthesized here get to finish their device phase and finalize before the worker stops (what is left is synthesized again elsewhere); then 30 s for running activities. A supervisor's stop timeout (docker's stop_grace_period, systemd's TimeoutStopSec) must exceed both")
	fs.StringVar(&keys.FilecoinParams, "filecoin-params", registry.FilecoinParamsDir(), "Filecoin's parameter directory (.params, .vk, parameters.json; $FIL_PROOFS_PARAMETER_CACHE); files it lacks are downloaded from storage's params/filecoin/")
	fs.StringVar(&c.StatsFile, "stats-file", "", "write JSON stats here every second")
	fs.DurationVar(&c.Retention.Inputs, "retention-inputs", retention.DefaultInputs, "role workflow: delete a stored input (C1) this long after the last job of its identity ended, unless a proof of it is stored (kept then: the proof is verified against it)")
	fs.DurationVar(&c.Retention.Spills, "retention-spills", retention.DefaultSpills, fmt.Sprintf("delete spilled witnesses (s3, or this host's dir: spill) older than this: orphans of a synthesis host that died (at least %v)", retention.MinSpills))
	fs.DurationVar(&c.RetentionEvery, "retention-every", retention.DefaultEvery, "how often the sweep runs (negative: never)")
	var dv procflags.Devices
	dv.Add(fs)
	return func() (Host, error) {
		// 0 or less would admit no partition (or, in places, mean "no
		// limit"): refused rather than guessed.
		if c.PartitionWorkers < 1 {
			return Host{}, fmt.Errorf("--partition-workers %d: at least 1 partition in flight", c.PartitionWorkers)
		}
		if c.DrainTimeout <= 0 {
			return Host{}, fmt.Errorf("--drain-timeout %v: a positive duration", c.DrainTimeout)
		}
		if c.Retention.Inputs <= 0 || c.Retention.Spills < retention.MinSpills || c.RetentionEvery == 0 {
			return Host{}, fmt.Errorf("--retention-inputs %v, --retention-spills %v, --retention-every %v: inputs kept a positive duration, spills at least %v, a sweep interval not 0", c.Retention.Inputs, c.Retention.Spills, c.RetentionEvery, retention.MinSpills)
		}
		ids, err := dv.DeviceIDs()
		if err != nil {
			return Host{}, err
		}
		if dv.DeviceMemory < 0 {
			return Host{}, fmt.Errorf("--device-memory %d: a byte count, 0 for the default", dv.DeviceMemory)
		}
		c.Devices, c.Backend, c.CPUDevices = ids, dv.Backend, dv.CPUDevices
		keys.ParamsDir, keys.EarlyG2 = dv.Params, dv.EarlyG2
		c.DeviceMemory, c.DeviceType = dv.DeviceMemory, dv.DeviceType
		c.Roles = split(*roles)
		c.Profiles = split(*profiles)
		return Host{Config: c, Keys: keys}, nil
	}, nil
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// secretFlag is a flag whose value is never printed: usage shows no
// default (flag prints a default from String, and a flag error prints the
// usage: a compose worker's bad setting would put the secret in its logs).
type secretFlag struct{ p *string }

func (f secretFlag) String() string { return "" }

func (f secretFlag) Set(v string) error {
	*f.p = v
	return nil
}
