package deploy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

const composeFile = "../docker-compose.yml"

// The published ports a fleet may open (deploy/README.md): container
// port -> the bind variable that opens it.
var publishedPorts = map[string]string{
	"7233": "C2FLOW_FLEET_BIND",   // Temporal frontend: workers, clients
	"7070": "C2FLOW_FLEET_BIND",   // S3: workers, clients
	"8080": "C2FLOW_ADMIN_BIND",   // Temporal UI
	"9090": "C2FLOW_ADMIN_BIND",   // Prometheus
	"3000": "C2FLOW_ADMIN_BIND",   // Grafana
	"9820": "C2FLOW_GATEWAY_BIND", // cuzk gateway: Curio (TLS off the box)
}

// secretName matches environment variables that hold credentials.
var secretName = regexp.MustCompile(`(?i)(PASSWORD|PWD|SECRET|ACCESS_KEY|API_KEY|TOKEN)`)

// composeVar is compose's interpolation: ${NAME}, ${NAME:-default},
// ${NAME-default}, ${NAME:?error}, ${NAME?error}; $$ is a literal $.
var composeVar = regexp.MustCompile(`\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}`)

type compose struct {
	Services map[string]service `yaml:"services"`
	Volumes  map[string]any     `yaml:"volumes"`
}

type service struct {
	Image       string                       `yaml:"image"`
	Build       any                          `yaml:"build"`
	Restart     string                       `yaml:"restart"`
	User        string                       `yaml:"user"`
	Privileged  bool                         `yaml:"privileged"`
	NetworkMode string                       `yaml:"network_mode"`
	Pid         string                       `yaml:"pid"`
	CapAdd      []string                     `yaml:"cap_add"`
	Ports       []string                     `yaml:"ports"`
	Environment map[string]string            `yaml:"environment"`
	Volumes     []string                     `yaml:"volumes"`
	DependsOn   map[string]map[string]string `yaml:"depends_on"`
	Healthcheck map[string]any               `yaml:"healthcheck"`
	Command     []string                     `yaml:"command"`
	Entrypoint  []string                     `yaml:"entrypoint"`
	Profiles    []string                     `yaml:"profiles"`
	StopGrace   string                       `yaml:"stop_grace_period"`
}

// interpolate substitutes compose variables from env; unset variables of
// ${X:?msg} are reported in missing.
func interpolate(s string, env map[string]string, missing map[string]string) string {
	return composeVar.ReplaceAllStringFunc(s, func(m string) string {
		if m == "$$" {
			return "$"
		}
		g := composeVar.FindStringSubmatch(m)
		name, op, arg := g[1], g[2], g[3]
		v, set := env[name]
		empty := !set || (strings.HasPrefix(op, ":") && v == "")
		switch {
		case strings.HasSuffix(op, "-") && empty:
			return arg
		case strings.HasSuffix(op, "?") && empty:
			missing[name] = arg
			return ""
		}
		return v
	})
}

// loadCompose reads the compose file with env's values substituted; it
// returns the variables that compose would refuse to start without.
func loadCompose(t *testing.T, env map[string]string) (compose, map[string]string) {
	t.Helper()
	raw, err := os.ReadFile(composeFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", composeFile, err)
	}
	missing := map[string]string{}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
			n.Value = interpolate(n.Value, env, missing)
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&doc)
	var c compose
	if err := doc.Decode(&c); err != nil {
		t.Fatalf("%s: %v", composeFile, err)
	}
	return c, missing
}

// readEnvFile parses a KEY=VALUE file as compose reads .env.
func readEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: line %q is not KEY=VALUE", path, line)
		}
		env[k] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return env
}

// generateEnv runs the setup step (scripts/deploy-env.sh) into a
// temporary file, with the bind variables unset as on a fresh machine.
func generateEnv(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), ".env")
	cmd := exec.Command("sh", "../scripts/deploy-env.sh", path)
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "C2FLOW_") || strings.HasPrefix(kv, "TEMPORAL_")
	})
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("deploy-env.sh: %v\n%s", err, out)
	}
	return path
}

func TestDeployEnvFile(t *testing.T) {
	path := generateEnv(t)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600: it holds passwords", path, fi.Mode().Perm())
	}
	env := readEnvFile(t, path)
	secrets := map[string]bool{}
	for k, v := range env {
		if !secretName.MatchString(k) {
			continue
		}
		if len(v) < 16 {
			t.Errorf("%s=%q: want a long random value", k, v)
		}
		if secrets[v] {
			t.Errorf("%s repeats another secret's value", k)
		}
		secrets[v] = true
	}
	for _, k := range []string{"C2FLOW_FLEET_BIND", "C2FLOW_ADMIN_BIND", "C2FLOW_GATEWAY_BIND"} {
		if env[k] != "127.0.0.1" {
			t.Errorf("%s=%q, want 127.0.0.1 by default", k, env[k])
		}
	}
	// A second run keeps the file: its passwords are in the volumes.
	before, _ := os.ReadFile(path)
	if out, err := exec.Command("sh", "../scripts/deploy-env.sh", path).CombinedOutput(); err != nil {
		t.Fatalf("second deploy-env.sh: %v\n%s", err, out)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("a second deploy-env.sh replaced the existing env file")
	}
	// A file of an earlier version, without the workers' S3 account, gets
	// it and keeps every value it had.
	var old []string
	for _, l := range strings.Split(string(before), "\n") {
		if !strings.HasPrefix(l, "C2FLOW_S3_WORKER_") {
			old = append(old, l)
		}
	}
	if err := os.WriteFile(path, []byte(strings.Join(old, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("sh", "../scripts/deploy-env.sh", path).CombinedOutput(); err != nil {
		t.Fatalf("deploy-env.sh on an older file: %v\n%s", err, out)
	}
	upgraded := readEnvFile(t, path)
	for k, v := range env {
		if strings.HasPrefix(k, "C2FLOW_S3_WORKER_") {
			if len(upgraded[k]) < 16 || upgraded[k] == v {
				t.Errorf("an older file: %s=%q after deploy-env.sh, want a new random value", k, upgraded[k])
			}
		} else if upgraded[k] != v {
			t.Errorf("an older file: deploy-env.sh changed %s", k)
		}
	}

	// Two setups make two different sets of credentials.
	other := readEnvFile(t, generateEnv(t))
	if other["POSTGRES_PASSWORD"] == env["POSTGRES_PASSWORD"] {
		t.Error("two runs of deploy-env.sh wrote the same PostgreSQL password")
	}
}

// The compose stack is safe by default: nothing published beyond
// 127.0.0.1, no credential in the file, no start without the env file,
// nothing privileged, every dependency waits for health or completion,
// workers restart.
func TestComposeSafeDefaults(t *testing.T) {
	envPath := generateEnv(t)
	env := readEnvFile(t, envPath)

	// Without the env file compose refuses to start, naming the setup step.
	_, missing := loadCompose(t, map[string]string{})
	for _, k := range []string{"POSTGRES_PASSWORD", "C2FLOW_S3_ACCESS_KEY", "C2FLOW_S3_SECRET_KEY", "C2FLOW_S3_WORKER_ACCESS_KEY", "C2FLOW_S3_WORKER_SECRET_KEY", "GRAFANA_ADMIN_PASSWORD"} {
		if !strings.Contains(missing[k], "make deploy-env") {
			t.Errorf("without .env, %s is not required with a message naming `make deploy-env` (got %q)", k, missing[k])
		}
	}

	c, missing := loadCompose(t, env)
	if len(missing) > 0 {
		t.Fatalf("the generated env file lacks %v", missing)
	}
	raw, _ := os.ReadFile(composeFile)
	var literal compose // before interpolation: what the file itself says
	if err := yaml.Unmarshal(raw, &literal); err != nil {
		t.Fatal(err)
	}
	if len(c.Services) < 10 {
		t.Fatalf("%d services; the stack has more", len(c.Services))
	}
	seen := map[string]bool{}
	for name, s := range c.Services {
		for _, p := range s.Ports {
			// host_ip:host_port:container_port[/proto]
			f := strings.Split(strings.TrimSuffix(p, "/tcp"), ":")
			if len(f) != 3 || f[0] != "127.0.0.1" {
				t.Errorf("%s publishes %q: want 127.0.0.1:PORT:PORT by default", name, p)
				continue
			}
			want, ok := publishedPorts[f[2]]
			if !ok {
				t.Errorf("%s publishes port %s, which deploy/README.md does not list", name, f[2])
				continue
			}
			seen[f[2]] = true
			lit := literal.Services[name].Ports
			if !slices.ContainsFunc(lit, func(l string) bool { return strings.HasPrefix(l, "${"+want+":-127.0.0.1}:") }) {
				t.Errorf("%s: port %s is not bound through ${%s:-127.0.0.1}: %v", name, f[2], want, lit)
			}
		}
		if s.NetworkMode == "host" || s.Pid == "host" || s.Privileged || len(s.CapAdd) > 0 {
			t.Errorf("%s runs with host networking, host pid, privileges or added capabilities", name)
		}
		for k := range s.Environment {
			if !secretName.MatchString(k) {
				continue
			}
			v := literal.Services[name].Environment[k]
			if !regexp.MustCompile(`^\$\{[A-Z0-9_]+:\?[^}]+\}$`).MatchString(v) {
				t.Errorf("%s: %s=%q: a credential must come from the env file as ${VAR:?message}, without a default", name, k, v)
			}
		}
		for dep, cond := range s.DependsOn {
			d, ok := c.Services[dep]
			if !ok {
				t.Errorf("%s depends on %s, which does not exist", name, dep)
				continue
			}
			switch cond["condition"] {
			case "service_healthy":
				if d.Healthcheck == nil {
					t.Errorf("%s waits for %s to be healthy; %s has no healthcheck", name, dep, dep)
				}
			case "service_completed_successfully":
				if d.Restart == "unless-stopped" || d.Restart == "always" {
					t.Errorf("%s waits for %s to complete; %s restarts forever", name, dep, dep)
				}
			default:
				t.Errorf("%s depends on %s with condition %q: want service_healthy or service_completed_successfully (started is not ready)", name, dep, cond["condition"])
			}
		}
		for _, v := range s.Volumes {
			src, _, _ := strings.Cut(v, ":")
			if strings.HasPrefix(src, "./") {
				if _, err := os.Stat(filepath.Join("..", src)); err != nil {
					t.Errorf("%s mounts %s: %v", name, src, err)
				}
			}
		}
	}
	for p := range publishedPorts {
		if !seen[p] {
			t.Errorf("port %s is listed as published but no service publishes it", p)
		}
	}
	for _, w := range []string{"orchestrator", "prover", "synth", "gpu"} {
		s := c.Services[w]
		if s.Restart != "unless-stopped" {
			t.Errorf("worker %s: restart %q, want unless-stopped", w, s.Restart)
		}
		for _, dep := range []string{"temporal", "keys", "s3"} {
			if _, ok := s.DependsOn[dep]; !ok {
				t.Errorf("worker %s does not wait for %s", w, dep)
			}
		}
		// A stop must outlast the worker's drain (--drain-timeout, from
		// the env file) and the 30 s its workers give running activities.
		drain := 2 * time.Minute // the flag's default
		if i := slices.Index(s.Command, "--drain-timeout"); i >= 0 && i+1 < len(s.Command) {
			d, err := time.ParseDuration(s.Command[i+1])
			if err != nil {
				t.Errorf("worker %s: --drain-timeout %q: %v", w, s.Command[i+1], err)
			}
			drain = d
		} else if w == "prover" || w == "synth" {
			t.Errorf("worker %s: no --drain-timeout: the env file's C2FLOW_DRAIN_TIMEOUT must reach it", w)
		}
		if d, err := time.ParseDuration(s.StopGrace); err != nil || d < drain+time.Minute {
			t.Errorf("worker %s: stop_grace_period %q: want at least its drain (%v) and a minute for running activities, or docker kills it mid device phase", w, s.StopGrace, drain)
		}
		if s.Environment["C2FLOW_METRICS"] == "" {
			t.Errorf("worker %s serves no metrics", w)
		}
	}
	for _, n := range []string{"postgresql", "temporal", "s3", "prometheus", "grafana", "gateway"} {
		if c.Services[n].Healthcheck == nil {
			t.Errorf("%s has no healthcheck", n)
		}
	}
	checkGateway(t, c, literal)

	// Per-role S3 credentials: only s3 itself holds the root keys; every
	// other service that reaches S3 (the workers, which parse untrusted
	// inputs, the key step, the gateway) has the workers' account, which
	// s3 is given to make.
	for name, s := range literal.Services {
		access := s.Environment["AWS_ACCESS_KEY_ID"]
		switch {
		case access == "":
		case name == "s3":
			if access != "${C2FLOW_S3_ACCESS_KEY:?run make deploy-env to write .env}" {
				t.Errorf("s3: AWS_ACCESS_KEY_ID=%q, want the root key", access)
			}
			for _, k := range []string{"C2FLOW_S3_WORKER_ACCESS_KEY", "C2FLOW_S3_WORKER_SECRET_KEY"} {
				if !strings.HasPrefix(s.Environment[k], "${"+k+":?") {
					t.Errorf("s3 is not given %s: the workers' account is not made", k)
				}
			}
		case !strings.HasPrefix(access, "${C2FLOW_S3_WORKER_ACCESS_KEY:?") || !strings.HasPrefix(s.Environment["AWS_SECRET_ACCESS_KEY"], "${C2FLOW_S3_WORKER_SECRET_KEY:?"):
			t.Errorf("%s: S3 keys %q: want the workers' account, not the root keys", name, access)
		}
	}
	for _, w := range []string{"orchestrator", "prover", "synth", "gpu", "keys", "gateway"} {
		e := c.Services[w].Environment
		if e["AWS_ACCESS_KEY_ID"] != env["C2FLOW_S3_WORKER_ACCESS_KEY"] || e["AWS_SECRET_ACCESS_KEY"] == env["C2FLOW_S3_SECRET_KEY"] {
			t.Errorf("%s does not get the workers' S3 account", w)
		}
	}

	// Real compose, where it is installed: the file validates with the
	// generated env and is refused without it.
	for _, argv := range [][]string{{"docker", "compose"}, {"docker-compose"}} {
		if _, err := exec.LookPath(argv[0]); err != nil {
			continue
		}
		if exec.Command(argv[0], append(argv[1:], "version")...).Run() != nil {
			continue // docker without its compose plugin
		}
		args := append(argv[1:], "-f", composeFile, "--env-file", envPath, "config", "-q")
		if out, err := exec.Command(argv[0], args...).CombinedOutput(); err != nil {
			t.Errorf("%s config: %v\n%s", strings.Join(argv, " "), err, out)
		}
		empty := filepath.Join(t.TempDir(), "empty.env")
		os.WriteFile(empty, nil, 0o600)
		args = append(argv[1:], "-f", composeFile, "--env-file", empty, "config", "-q")
		if out, err := exec.Command(argv[0], args...).CombinedOutput(); err == nil || !strings.Contains(string(out), "make deploy-env") {
			t.Errorf("%s config without the env file: %v, %s; want a refusal naming make deploy-env", strings.Join(argv, " "), err, out)
		}
		t.Logf("validated with %s", strings.Join(argv, " "))
		break
	}
}

// checkGateway: the compose stack serves the cuzk gateway Curio calls,
// after the workers' dependencies; the loopback rule follows the address
// its port is published on (the same ${C2FLOW_GATEWAY_BIND} as the
// port's), so published off the box it needs TLS; no service ever passes
// --insecure-listen; the TLS files' variables reach it, empty by default.
func checkGateway(t *testing.T, c, literal compose) {
	t.Helper()
	g, ok := c.Services["gateway"]
	if !ok {
		t.Fatal("no gateway service: a provider on compose would run Curio's gateway by hand")
	}
	if len(g.Entrypoint) == 0 || g.Entrypoint[0] != "/usr/local/bin/c2flow" || len(g.Command) == 0 || g.Command[0] != "gateway" {
		t.Errorf("gateway runs %v %v, want c2flow gateway", g.Entrypoint, g.Command)
	}
	if g.Restart != "unless-stopped" {
		t.Errorf("gateway: restart %q, want unless-stopped", g.Restart)
	}
	for _, dep := range []string{"temporal", "keys", "s3"} {
		if _, ok := g.DependsOn[dep]; !ok {
			t.Errorf("gateway does not wait for %s", dep)
		}
	}
	flag := func(cmd []string, name string) string {
		if i := slices.Index(cmd, name); i >= 0 && i+1 < len(cmd) {
			return cmd[i+1]
		}
		return ""
	}
	if got := flag(g.Command, "--listen"); got != "0.0.0.0:9820" {
		t.Errorf("gateway --listen %q, want 0.0.0.0:9820 (the container's network; docker publishes that)", got)
	}
	lit := literal.Services["gateway"]
	if got := flag(lit.Command, "--published-on"); got != "${C2FLOW_GATEWAY_BIND:-127.0.0.1}" {
		t.Errorf("gateway --published-on %q, want ${C2FLOW_GATEWAY_BIND:-127.0.0.1}: the loopback rule must follow the port's bind", got)
	}
	if !slices.Contains(lit.Ports, "${C2FLOW_GATEWAY_BIND:-127.0.0.1}:${C2FLOW_GATEWAY_PORT:-9820}:9820") {
		t.Errorf("gateway ports %v: want ${C2FLOW_GATEWAY_BIND:-127.0.0.1}:${C2FLOW_GATEWAY_PORT:-9820}:9820", lit.Ports)
	}
	if got := flag(g.Command, "--published-on"); got != "127.0.0.1" {
		t.Errorf("gateway --published-on %q with the generated env, want 127.0.0.1", got)
	}
	for _, k := range []string{"C2FLOW_GATEWAY_TLS_CERT", "C2FLOW_GATEWAY_TLS_KEY", "C2FLOW_GATEWAY_CLIENT_CA"} {
		if v, ok := lit.Environment[k]; !ok || v != "${"+k+":-}" {
			t.Errorf("gateway: %s=%q, want ${%s:-} (the TLS files, none by default)", k, v, k)
		}
		if g.Environment[k] != "" {
			t.Errorf("gateway: %s=%q by default, want empty", k, g.Environment[k])
		}
	}
	for name, s := range c.Services {
		for _, a := range append(slices.Clone(s.Entrypoint), s.Command...) {
			for _, f := range strings.Fields(a) {
				if f == "--insecure-listen" || strings.HasPrefix(f, "--insecure-listen=") {
					t.Errorf("%s passes %s: a plaintext gateway off loopback", name, f)
				}
			}
		}
	}
}

// goModule is `go list -m` of a module this one requires.
func goModule(t *testing.T, path string) (version, dir string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-json", path).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", path, err)
	}
	var m struct{ Version, Dir string }
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m.Version, m.Dir
}

// The stack pulls nothing by default: every service it starts is built
// here (the c2flow, PostgreSQL and Prometheus images on the Debian base of
// scripts/images.sh), and Temporal is the server c2flow embeds (`c2flow
// server`, which sets up its own schema and namespace), not another build.
func TestComposeBuildsItsOwnImages(t *testing.T) {
	c, _ := loadCompose(t, map[string]string{})
	for name, s := range c.Services {
		if len(s.Profiles) > 0 {
			continue // opt-in (grafana: Debian packages none)
		}
		if s.Build == nil || !strings.HasSuffix(s.Image, ":local") {
			t.Errorf("%s runs %q without building it here: a machine with no registry cannot start it", name, s.Image)
		}
	}
	tm := c.Services["temporal"]
	if tm.Image != "c2flow:local" || !strings.Contains(strings.Join(tm.Command, " "), "c2flow server") {
		t.Errorf("temporal runs %s %q; want the c2flow image's `c2flow server` (the Temporal build c2flow embeds)", tm.Image, tm.Command)
	}
	for _, f := range []string{"images/postgresql/Dockerfile", "images/prometheus/Dockerfile"} {
		df, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`(?m)^FROM \$\{BASE\}$`).Match(df) {
			t.Errorf("%s is not built FROM ${BASE} (the Debian base of scripts/images.sh)", f)
		}
	}
}

// The image runs as an unprivileged user and its build context leaves out
// build outputs, local state, git and secrets.
func TestDockerImage(t *testing.T) {
	df, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(df), "\n")
	last := -1
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "FROM ") {
			last = i
		}
	}
	user := ""
	for _, l := range lines[last+1:] {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "USER" {
			user = f[1]
		}
	}
	if u, _, _ := strings.Cut(user, ":"); u == "" || u == "root" || u == "0" {
		t.Errorf("the final image's USER is %q: want an unprivileged user", user)
	}
	di, err := os.ReadFile("../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	ignored := strings.Fields(string(di))
	for _, want := range []string{"bin/", ".c2flow/", ".git", ".env"} {
		if !slices.Contains(ignored, want) {
			t.Errorf(".dockerignore does not name %s", want)
		}
	}
}

// Prometheus scrapes the workers where compose serves their metrics, and
// Grafana reads the dashboard from where compose mounts it.
func TestPrometheusAndGrafanaWiring(t *testing.T) {
	c, _ := loadCompose(t, map[string]string{})
	if p, err := exec.LookPath("promtool"); err == nil {
		if out, err := exec.Command(p, "check", "config", "prometheus/prometheus.yml").CombinedOutput(); err != nil {
			t.Errorf("promtool check config: %v\n%s", err, out)
		}
	}
	var prom struct {
		ScrapeConfigs []struct {
			JobName      string `yaml:"job_name"`
			DNSSDConfigs []struct {
				Names []string `yaml:"names"`
				Port  int      `yaml:"port"`
			} `yaml:"dns_sd_configs"`
		} `yaml:"scrape_configs"`
	}
	readYAML(t, "prometheus/prometheus.yml", &prom)
	scraped := map[string]int{}
	for _, sc := range prom.ScrapeConfigs {
		for _, d := range sc.DNSSDConfigs {
			for _, n := range d.Names {
				scraped[n] = d.Port
			}
		}
	}
	for _, w := range []string{"orchestrator", "prover"} {
		_, port, _ := strings.Cut(c.Services[w].Environment["C2FLOW_METRICS"], ":")
		if fmt.Sprint(scraped[w]) != port {
			t.Errorf("worker %s serves metrics on port %q; Prometheus scrapes it on %d", w, port, scraped[w])
		}
	}

	var ds struct {
		Datasources []struct{ UID, Type, URL string } `yaml:"datasources"`
	}
	readYAML(t, "grafana/provisioning/datasources/prometheus.yml", &ds)
	if len(ds.Datasources) != 1 || ds.Datasources[0].Type != "prometheus" || ds.Datasources[0].URL != "http://prometheus:9090" {
		t.Fatalf("Grafana datasources %+v: want the stack's Prometheus", ds.Datasources)
	}
	var prov struct {
		Providers []struct {
			Options struct{ Path string } `yaml:"options"`
		} `yaml:"providers"`
	}
	readYAML(t, "grafana/provisioning/dashboards/c2flow.yml", &prov)
	mounts := strings.Join(c.Services["grafana"].Volumes, "\n")
	if len(prov.Providers) != 1 || !strings.Contains(mounts, "./deploy/grafana/dashboards:"+prov.Providers[0].Options.Path+":ro") {
		t.Errorf("Grafana's dashboard provider reads %+v; compose mounts %s", prov.Providers, mounts)
	}
	if !strings.Contains(mounts, "./deploy/grafana/provisioning:/etc/grafana/provisioning:ro") {
		t.Errorf("compose does not mount the Grafana provisioning: %s", mounts)
	}
	d := loadDashboard(t)
	for _, p := range d.panels() {
		if p.Datasource.UID != ds.Datasources[0].UID {
			t.Errorf("panel %q reads datasource %q; the provisioned one is %q", p.Title, p.Datasource.UID, ds.Datasources[0].UID)
		}
	}
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
