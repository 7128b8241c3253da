// Package devstack runs an embedded Temporal server in this process:
// frontend, history, matching and worker services over one SQLite file
// (journal_mode=wal, one history shard: the development default) or over
// PostgreSQL (the production shape: any number of history shards, the
// schema created and upgraded by Temporal's own SQL schema tool), the
// namespace registered before the services start, and optionally the
// Temporal Web UI. It follows the Temporal CLI's dev server. It is the
// only package that imports go.temporal.io/server, so other packages'
// tests do not link the server.
package devstack

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/c2flow/c2flow/internal/portlock"
)

// Options of the embedded server.
type Options struct {
	// DBFile is the SQLite database; created with its schema if absent,
	// reused (workflows resume) if present. Empty: in memory.
	DBFile    string
	Namespace string // default "default"
	IP        string // default 127.0.0.1
	Port      int    // frontend gRPC port; 0 picks a free one
	// LogLevel is the server's log level: debug, info, warn, error
	// (default error).
	LogLevel string
	// Log receives the server's log lines (zap console format); nil:
	// stderr. A CLI points it at a file so that Temporal's own logs stay
	// out of the user's terminal.
	Log io.Writer
	// QueuePartitions is the matching partitions per task queue (0: 1;
	// Temporal's own default is 4).
	QueuePartitions int
	// TLS, if set, makes the frontend serve mutual TLS (see TLS).
	TLS *TLS
	// Postgres, if set, is the PostgreSQL database the server persists to
	// instead of SQLite (DBFile is then ignored):
	// postgres://USER[:PASSWORD]@HOST:PORT/DBNAME[?sslmode=...]. DBNAME
	// and its visibility database DBNAME_visibility are created if
	// missing and their schemas set up or upgraded to this server's
	// version. A password not in the URL is taken from PGPASSWORD.
	Postgres string
	// HistoryShards is the number of history shards (0: 1). Temporal fixes
	// it when a database is first used: a later start with another number
	// fails.
	HistoryShards int
	// UI, if set, is the host:port the Temporal Web UI serves on. With
	// TLS it serves HTTPS and requires a client certificate of
	// TLS.ClientCAFile, as the frontend does; without, it must be on
	// loopback unless UIInsecure.
	UI string
	// UIInsecure allows a plain-HTTP UI beyond loopback (a warning goes to
	// Warn): whoever reaches it controls the cluster.
	UIInsecure bool
	// Warn receives warnings for the operator (nil: standard error).
	Warn io.Writer
}

// Server is a running embedded Temporal server.
type Server struct {
	srv   temporal.Server
	ui    *uiServer
	addr  string
	ns    string
	level zap.AtomicLevel
	quiet bool        // silence the log while stopping
	tls   *tls.Config // in-process clients' TLS; nil: plaintext
	// internal are the loopback addresses of history, matching and the
	// system worker.
	internal []string
	release  func() // the ports' locks (portlock), dropped at Stop
}

// checkBindable says why ip:port cannot be listened on, if it cannot.
func checkBindable(ip string, port int) error {
	if port < 1 || port > 65535 {
		return fmt.Errorf("port %d is not a port number (1 to 65535)", port)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("port %d on %s: %w", port, ip, err)
	}
	return l.Close()
}

// Start starts the server and returns once the frontend serves. Ports it
// picks itself are free when picked but may be taken before the server
// binds them (other processes pick too): it then tries fresh ones.
func Start(o Options) (*Server, error) {
	for attempt := 1; ; attempt++ {
		s, err := start(o)
		if err == nil || attempt == 5 || !errors.Is(err, syscall.EADDRINUSE) && !strings.Contains(err.Error(), "address already in use") {
			return s, err
		}
	}
}

func start(o Options) (_ *Server, err error) {
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.IP == "" {
		o.IP = "127.0.0.1"
	}
	if o.LogLevel == "" {
		o.LogLevel = "error"
	}
	// Temporal exits the process when a service cannot bind its port, and
	// a port freed from the ephemeral range can be taken by any outgoing
	// connection (to PostgreSQL, S3, a test's client) before the service
	// binds it (one test run lost its binary so): ports below that range
	// are only taken by listeners.
	// Each port is held under portlock until Stop, so that no other
	// process of this project (a parallel test binary) picks it meanwhile.
	var releases []func()
	releaseAll := func() {
		for _, r := range releases {
			r()
		}
	}
	defer func() {
		if err != nil {
			releaseAll()
		}
	}()
	reserve := func(ip string) (int, error) {
		p, release, err := portlock.Reserve(ip)
		if err != nil {
			return 0, err
		}
		releases = append(releases, release)
		return p, nil
	}
	if o.Port == 0 {
		if o.Port, err = reserve(o.IP); err != nil {
			return nil, err
		}
	} else if err := checkBindable(o.IP, o.Port); err != nil {
		// A port the user gave: Temporal would exit the process, its
		// reason in the server's log only.
		return nil, fmt.Errorf("temporal frontend: %w", err)
	}
	// The frontend (gRPC and HTTP API) serves on o.IP; the services behind
	// it (history, matching, the system worker) bind loopback only: they
	// take no client authentication, and only this process talks to them.
	const internalIP = "127.0.0.1"
	ports := make([]int, 4) // frontend HTTP, history, matching, worker
	for i := range ports {
		ip := internalIP
		if i == 0 {
			ip = o.IP
		}
		if ports[i], err = reserve(ip); err != nil {
			return nil, err
		}
	}
	level := zap.NewAtomicLevelAt(log.ParseZapLevel(o.LogLevel))
	logger := log.NewZapLogger(newZapLogger(o.Log, level))
	shards := max(1, o.HistoryShards)
	const clusterName = "active"
	stores := map[string]config.DataStore{}
	if o.Postgres != "" {
		main, vis, err := postgresConfig(o.Postgres)
		if err != nil {
			return nil, err
		}
		if err := setupPostgres(main, vis, o.Namespace, clusterName, shards, logger); err != nil {
			return nil, err
		}
		stores["postgres-default"], stores["postgres-visibility"] = config.DataStore{SQL: main}, config.DataStore{SQL: vis}
	} else {
		sqlConf, err := sqlConfig(o)
		if err != nil {
			return nil, err
		}
		stores["sqlite-default"] = config.DataStore{SQL: sqlConf}
	}
	hostport := func(p int) string { return net.JoinHostPort(o.IP, strconv.Itoa(p)) }
	internal := func(p int) string { return net.JoinHostPort(internalIP, strconv.Itoa(p)) }
	svc := func(ip string, grpc, http int) config.Service {
		var s config.Service
		s.RPC.GRPCPort, s.RPC.HTTPPort, s.RPC.BindOnIP = grpc, http, ip
		return s
	}
	var conf config.Config
	conf.Global.Membership.MaxJoinDuration = 30 * time.Second
	conf.Global.Membership.BroadcastAddress = o.IP
	conf.Persistence.DefaultStore, conf.Persistence.VisibilityStore = "sqlite-default", "sqlite-default"
	if o.Postgres != "" {
		conf.Persistence.DefaultStore, conf.Persistence.VisibilityStore = "postgres-default", "postgres-visibility"
	}
	conf.Persistence.NumHistoryShards = int32(shards)
	conf.Persistence.DataStores = stores
	conf.ClusterMetadata = &cluster.Config{
		FailoverVersionIncrement: 10, MasterClusterName: clusterName, CurrentClusterName: clusterName,
		ClusterInformation: map[string]cluster.ClusterInformation{clusterName: {
			Enabled: true, InitialFailoverVersion: 1, // ClusterID empty: Temporal makes a UUID at the first start
			RPCAddress: hostport(o.Port), HTTPAddress: hostport(ports[0]),
		}},
	}
	conf.DCRedirectionPolicy.Policy = "noop"
	conf.Services = map[string]config.Service{
		"frontend": svc(o.IP, o.Port, ports[0]),
		"history":  svc(internalIP, ports[1], 0),
		"matching": svc(internalIP, ports[2], 0),
		"worker":   svc(internalIP, ports[3], 0),
	}
	conf.Archival.History.State = "disabled"
	conf.Archival.Visibility.State = "disabled"
	conf.NamespaceDefaults.Archival.History.State = "disabled"
	conf.NamespaceDefaults.Archival.Visibility.State = "disabled"
	conf.PublicClient.HostPort = hostport(o.Port)
	var st *serverTLS
	if o.TLS != nil {
		if st, err = o.TLS.build(o.IP); err != nil {
			return nil, err
		}
		conf.Global.TLS = st.root
	}
	// The UI is bound here, before the server starts: a taken port is an
	// error of Start.
	var ui *uiServer
	if o.UI != "" {
		// Bound before the server starts: a taken port is an error here,
		// not an exit of the process inside the UI server.
		host, _, err := net.SplitHostPort(o.UI)
		if err != nil {
			return nil, fmt.Errorf("web UI address %q: %w", o.UI, err)
		}
		if o.TLS == nil && !loopbackHost(host) {
			if !o.UIInsecure {
				return nil, fmt.Errorf("web UI on %s: not a loopback address, and without --tls-* the UI is plain HTTP with full control of the cluster: bind it to 127.0.0.1, serve mutual TLS, or pass --ui-insecure-listen", o.UI)
			}
			w := o.Warn
			if w == nil {
				w = os.Stderr
			}
			fmt.Fprintf(w, "WARNING: the Temporal Web UI serves plain HTTP on %s (--ui-insecure-listen): whoever reaches it can terminate and cancel every workflow\n", o.UI)
		}
		if ui, err = newUIServer(o.UI, net.JoinHostPort(o.IP, strconv.Itoa(o.Port)), o.Namespace); err != nil {
			return nil, err
		}
	}
	if st != nil {
		ui.useTLS(st.ui, st.uiListener) // the UI is a client of the frontend too, and its door requires what the frontend's does
	}

	dyn := dynamicconfig.StaticClient{
		dynamicconfig.HistoryCacheHostLevelMaxSize.Key():                 8096,
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
		// Priority keys need no switch: v1.32.1's matcher with priority
		// levels (matching.useNewMatcher) is on by default, with 5 levels
		// (TestPriorityKeysOrderDispatch).
		// One matching partition per task queue: a one-host server gains
		// nothing from four, and one keeps each queue first-come within a
		// priority (older sectors' syntheses first).
		dynamicconfig.MatchingNumTaskqueueReadPartitions.Key():  max(1, o.QueuePartitions),
		dynamicconfig.MatchingNumTaskqueueWritePartitions.Key(): max(1, o.QueuePartitions),
	}
	srv, err := temporal.NewServer(
		temporal.WithConfig(&conf),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithStaticHosts(map[primitives.ServiceName]static.Hosts{
			primitives.FrontendService: static.SingleLocalHost(hostport(o.Port)),
			primitives.HistoryService:  static.SingleLocalHost(internal(ports[1])),
			primitives.MatchingService: static.SingleLocalHost(internal(ports[2])),
			primitives.WorkerService:   static.SingleLocalHost(internal(ports[3])),
		}),
		temporal.WithLogger(logger),
		temporal.WithDynamicConfigClient(dyn),
	)
	if err != nil {
		ui.stop()
		return nil, fmt.Errorf("temporal server: %w", err)
	}
	if err := srv.Start(); err != nil {
		ui.stop()
		return nil, fmt.Errorf("temporal server start: %w", err)
	}
	// Start's contract is a frontend that accepts connections; the UI,
	// made next, dials it at once and backs off for seconds if refused.
	if err := waitListening(hostport(o.Port), time.Minute); err != nil {
		ui.stop()
		srv.Stop()
		return nil, fmt.Errorf("temporal frontend: %w", err)
	}
	if err := ui.start(); err != nil {
		ui.stop()
		srv.Stop()
		return nil, err
	}
	quiet := level.Level() > zap.InfoLevel
	s := &Server{srv: srv, ui: ui, addr: hostport(o.Port), ns: o.Namespace, level: level, quiet: quiet, release: releaseAll,
		internal: []string{internal(ports[1]), internal(ports[2]), internal(ports[3])}}
	if st != nil {
		s.tls = st.client
	}
	return s, nil
}

// newZapLogger is the Temporal CLI's console logger (log.BuildZapLogger)
// writing to w at a level that Stop can raise.
func newZapLogger(w io.Writer, level zap.AtomicLevel) *zap.Logger {
	if w == nil {
		w = os.Stderr
	}
	enc := log.DefaultZapEncoderConfig
	enc.CallerKey, enc.EncodeCaller = zapcore.OmitKey, nil
	return zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.Lock(zapcore.AddSync(w)), level),
		zap.ErrorOutput(zapcore.Lock(zapcore.AddSync(w))), zap.AddStacktrace(zap.ErrorLevel))
}

func sqlConfig(o Options) (*config.SQL, error) {
	c := &config.SQL{PluginName: sqliteplugin.PluginName}
	if o.DBFile == "" {
		c.ConnectAttributes = map[string]string{"mode": "memory", "cache": "shared"}
		c.DatabaseName = fmt.Sprintf("c2flow-%d", time.Now().UnixNano())
	} else {
		abs, err := filepath.Abs(o.DBFile)
		if err != nil {
			return nil, err
		}
		c.ConnectAttributes = map[string]string{"mode": "rwc", "journal_mode": "wal", "synchronous": "normal"}
		c.DatabaseName = abs
		if _, err := os.Stat(abs); os.IsNotExist(err) {
			if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
				return nil, err
			}
			if err := sqliteschema.SetupSchema(c); err != nil {
				return nil, fmt.Errorf("sqlite schema: %w", err)
			}
		}
	}
	ns, err := sqliteschema.NewNamespaceConfig("active", o.Namespace, false, nil)
	if err != nil {
		return nil, fmt.Errorf("namespace config: %w", err)
	}
	if err := sqliteschema.CreateNamespaces(c, ns); err != nil {
		return nil, fmt.Errorf("create namespace: %w", err)
	}
	return c, nil
}

// Addr is the frontend's host:port.
func (s *Server) Addr() string { return s.addr }

// Namespace is the namespace the server was started with.
func (s *Server) Namespace() string { return s.ns }

// Stop stops the server. Below LogLevel info it first silences the
// server's log: stopping, its services report one another's closing as
// errors ("Queue reader unable to retrieve tasks ... shard closed", with a
// stack trace) that say nothing about the work. At debug or info they are
// kept.
func (s *Server) Stop() {
	if s.quiet {
		s.level.SetLevel(zap.FatalLevel)
	}
	s.ui.stop()
	s.srv.Stop()
	s.release()
}

// UIURL is the Web UI's URL (https when it requires client
// certificates); empty without Options.UI.
func (s *Server) UIURL() string {
	if s.ui == nil {
		return ""
	}
	if s.ui.tls != nil {
		return "https://" + s.ui.addr + " (a client certificate of the client CA required)"
	}
	return "http://" + s.ui.addr
}

// UIAddr is the Web UI's host:port; empty without Options.UI.
func (s *Server) UIAddr() string {
	if s.ui == nil {
		return ""
	}
	return s.ui.addr
}
