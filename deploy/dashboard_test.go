package deploy

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/c2flow/c2flow/scheme/testscheme/params/paramstest"
)

const dashboardFile = "grafana/dashboards/c2flow.json"

type dashboard struct {
	UID        string  `json:"uid"`
	Title      string  `json:"title"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string     `json:"name"`
			Datasource datasource `json:"datasource"`
			Query      struct {
				Query string `json:"query"`
			} `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type datasource struct{ Type, UID string }

type panel struct {
	ID         int        `json:"id"`
	Type       string     `json:"type"`
	Title      string     `json:"title"`
	Datasource datasource `json:"datasource"`
	Targets    []struct {
		RefID      string     `json:"refId"`
		Expr       string     `json:"expr"`
		Datasource datasource `json:"datasource"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a row's panels
}

// panels are the dashboard's panels, those inside rows included.
func (d dashboard) panels() []panel {
	var out []panel
	var walk func(ps []panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if p.Type == "row" {
				walk(p.Panels)
				continue
			}
			out = append(out, p)
		}
	}
	walk(d.Panels)
	return out
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if d.UID == "" || d.Title == "" || len(d.panels()) == 0 {
		t.Fatalf("%s: no uid, title or panels", dashboardFile)
	}
	ids := map[int]bool{}
	for _, p := range d.panels() {
		if ids[p.ID] {
			t.Errorf("panel id %d repeats", p.ID)
		}
		ids[p.ID] = true
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			if tg.Expr == "" || tg.RefID == "" || tg.Datasource != p.Datasource {
				t.Errorf("panel %q target %q: empty query or another datasource", p.Title, tg.RefID)
			}
		}
	}
	return d
}

// Panels that a proved batch must move above zero somewhere in its time
// range (the others may stay at zero: retries and failures of a clean
// batch, witness bytes between two scrapes).
var mustMove = []string{
	"Workers up", "Partitions proved", "Partitions per second by phase", "Phase duration (p50, p90)",
	"Partition budget: in flight vs max", "Device busy", "Queue wait", "Worker memory (RSS)", "Free task slots",
}

// TestDashboardAgainstWorker runs the stack's shape for real: the c2flow
// binaries built from this tree (`c2flow dev` as Temporal and S3 with the
// workflow role, a `worker --roles prove --metrics ...` as the prover), a
// Prometheus scraping that worker every second, and a small 2KiB batch
// submitted with `c2flow submit`. Then every query of every dashboard
// panel is evaluated through Prometheus's HTTP API over the batch's time
// range and must return data; the panels of mustMove must show a value
// above zero; and every c2flow_* metric the worker exports must be on
// some panel.
func TestDashboardAgainstWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries and proves a batch")
	}
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("prometheus is not installed; CI must install it (.ci/run: apt-get install -y prometheus)")
		}
		t.Skip("prometheus is not installed (Debian: apt-get install -y --no-install-recommends prometheus)")
	}
	d := loadDashboard(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	dir := t.TempDir()
	t0 := time.Now()

	// Keys of the 2KiB profile in the shared test cache, made once under
	// its lock (other packages' tests may set up the same profile), so the
	// dev stack only publishes them to its S3.
	paramstest.Keys(t, "2KiB")

	bin := filepath.Join(dir, "bin")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin+"/", "./cmd/c2flow", "./cmd/worker")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	tBuild := time.Since(t0)

	temporalAddr, s3Addr, metricsAddr, promAddr := freeAddr(t), freeAddr(t), freeAddr(t), freeAddr(t)
	_, temporalPort, _ := net.SplitHostPort(temporalAddr)
	s3Flags := []string{"--s3-endpoint", "http://" + s3Addr, "--s3-access-key", "c2flow-dev", "--s3-secret-key", "c2flow-dev-secret"}

	// The stack: Temporal and S3 with an orchestrating worker.
	t1 := time.Now()
	dev := start(t, ctx, dir, "dev", filepath.Join(bin, "c2flow"), "dev", "--dir", filepath.Join(dir, "dev"),
		"--temporal-port", temporalPort, "--s3-listen", s3Addr, "--ui", "", "--roles", "workflow", "--profiles", "2KiB", "--params", paramstest.Dir())
	dev.waitFor(t, "c2flow dev stack up", 3*time.Minute)

	// Prometheus, scraping the prover under the job name of the deploy
	// configuration, before the prover starts: its first scrape sees
	// every series at zero.
	promCfg := filepath.Join(dir, "prometheus.yml")
	writeFile(t, promCfg, fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: c2flow\n    static_configs:\n      - targets: [%q]\n", metricsAddr))
	start(t, ctx, dir, "prometheus", promBin, "--config.file="+promCfg, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	prom := promClient{base: "http://" + promAddr}
	waitUntil(t, ctx, "prometheus ready", 30*time.Second, func() (bool, string) {
		resp, err := http.Get(prom.base + "/-/ready")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})

	// The prover, as compose runs it (its own empty key cache: keys come
	// from S3).
	start(t, ctx, dir, "worker", filepath.Join(bin, "worker"), append([]string{"--address", temporalAddr, "--roles", "prove", "--profiles", "2KiB",
		"--partition-workers", "2", "--params", filepath.Join(dir, "worker-params"), "--metrics", metricsAddr}, s3Flags...)...)
	waitUntil(t, ctx, "prometheus scraping the worker", time.Minute, func() (bool, string) {
		v, err := prom.scalar(ctx, `sum(up{job="c2flow"})`)
		return err == nil && v == 1, fmt.Sprint(v, err)
	})
	tStack := time.Since(t1)

	// A small batch, through the CLI.
	c1 := filepath.Join(dir, "c1")
	if out, err := exec.CommandContext(ctx, filepath.Join(bin, "c2flow"), "seal", "--profile", "2KiB", "--sectors", "2", "--out", c1).CombinedOutput(); err != nil {
		t.Fatalf("seal: %v\n%s", err, out)
	}
	batchStart := time.Now()
	submit := exec.CommandContext(ctx, filepath.Join(bin, "c2flow"), append([]string{"submit", "--address", temporalAddr, "--c1", c1, "--wait",
		"--params", filepath.Join(dir, "submit-params")}, s3Flags...)...)
	if out, err := submit.CombinedOutput(); err != nil || strings.Count(string(out), ": proved") != 2 {
		t.Fatalf("submit: %v\n%s", err, out)
	}
	tBatch := time.Since(batchStart)

	// Prometheus has scraped the batch's end: its finalize count is the
	// worker's own.
	var fams map[string]bool
	waitUntil(t, ctx, "prometheus holding the batch's last scrape", time.Minute, func() (bool, string) {
		var n float64
		n, fams = scrapeFinalized(t, "http://"+metricsAddr+"/metrics")
		v, err := prom.scalar(ctx, `sum(c2flow_partition_phase_seconds_count{phase="finalize"})`)
		return err == nil && n > 0 && v == n, fmt.Sprintf("worker %v, prometheus %v (%v)", n, v, err)
	})
	end := time.Now().Add(2 * time.Second)
	time.Sleep(time.Until(end))

	// Every panel's queries over the batch's time range, as Grafana sends
	// them: its variables replaced by what it would put there.
	rangeLen := fmt.Sprintf("%ds", int(time.Since(t1).Seconds())+1)
	vars := strings.NewReplacer(`$__rate_interval`, "30s", `$__range`, rangeLen, `$__interval`, "1s", `$instance`, ".*")
	moving := map[string]bool{}
	for _, p := range d.panels() {
		moved := false
		for _, tg := range p.Targets {
			q := vars.Replace(tg.Expr)
			if strings.Contains(q, "$") {
				t.Errorf("panel %q %s: a variable the test does not know: %s", p.Title, tg.RefID, q)
				continue
			}
			series, finite, max, err := prom.rangeQuery(ctx, q, t1, end)
			switch {
			case err != nil:
				t.Errorf("panel %q %s: %s: %v", p.Title, tg.RefID, q, err)
			case series == 0 || finite == 0:
				t.Errorf("panel %q %s: no data (%d series, %d finite samples): %s", p.Title, tg.RefID, series, finite, q)
			default:
				t.Logf("panel %q %s: %d series, max %.3g", p.Title, tg.RefID, series, max)
			}
			moved = moved || max > 0
		}
		moving[p.Title] = moved
	}
	for _, title := range mustMove {
		moved, ok := moving[title]
		switch {
		case !ok:
			t.Errorf("no panel titled %q", title)
		case !moved:
			t.Errorf("panel %q stayed at zero through a proved batch", title)
		}
	}

	// The worker variable lists the worker.
	for _, v := range d.Templating.List {
		vals, err := prom.labelValues(ctx, v.Query.Query)
		if err != nil || !slices.Contains(vals, metricsAddr) {
			t.Errorf("variable %s (%s) = %v, %v; want the worker %s among them", v.Name, v.Query.Query, vals, err, metricsAddr)
		}
	}

	// Every c2flow metric the worker exports is on the dashboard.
	var all strings.Builder
	for _, p := range d.panels() {
		for _, tg := range p.Targets {
			all.WriteString(tg.Expr + "\n")
		}
	}
	for f := range fams {
		if strings.HasPrefix(f, "c2flow_") && !strings.Contains(all.String(), f) {
			t.Errorf("the worker exports %s; no panel shows it", f)
		}
	}
	t.Logf("build %v, stack up %v, batch of 2 2KiB sectors %v, whole test %v",
		tBuild.Round(time.Second), tStack.Round(time.Second), tBatch.Round(time.Second), time.Since(t0).Round(time.Second))
}

// scrapeFinalized reads the worker's endpoint: its finalize count and its
// metric family names.
func scrapeFinalized(t *testing.T, u string) (float64, map[string]bool) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("worker metrics at %s: %v", u, err)
	}
	names := map[string]bool{}
	for n := range fams {
		names[n] = true
	}
	var n float64
	if f := fams["c2flow_partition_phase_seconds"]; f != nil {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "phase" && l.GetValue() == "finalize" {
					n += float64(m.GetHistogram().GetSampleCount())
				}
			}
		}
	}
	return n, names
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// freeAddr is a 127.0.0.1 address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func waitUntil(t *testing.T, ctx context.Context, what string, limit time.Duration, ok func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(limit)
	last := ""
	for {
		var done bool
		if done, last = ok(); done {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("waiting for %s: not after %v (last: %s)", what, limit, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// proc is a child process whose output goes to a file of the test's
// directory; it is stopped (SIGINT, then killed) when the test ends.
type proc struct {
	name, log string
	cmd       *exec.Cmd
	lines     chan string // stdout
	done      chan struct{}
}

func start(t *testing.T, ctx context.Context, dir, name, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, log: filepath.Join(dir, name+".log"), done: make(chan struct{})}
	logf, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stderr = logf
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p.lines = make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(io.TeeReader(out, logf))
		for sc.Scan() {
			select {
			case p.lines <- sc.Text():
			default: // nobody waits for lines any more
			}
		}
		p.cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.stop(t)
		if t.Failed() {
			b, _ := os.ReadFile(p.log)
			if len(b) > 4000 {
				b = b[len(b)-4000:]
			}
			t.Logf("--- %s (%s), its end:\n%s", name, p.log, b)
		}
	})
	return p
}

// waitFor waits for a line of the process's stdout containing s.
func (p *proc) waitFor(t *testing.T, s string, limit time.Duration) {
	t.Helper()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		select {
		case l := <-p.lines:
			if strings.Contains(l, s) {
				return
			}
		case <-p.done:
			t.Fatalf("%s exited before printing %q (log %s)", p.name, s, p.log)
		case <-timer.C:
			t.Fatalf("%s: no %q after %v (log %s)", p.name, s, limit, p.log)
		}
	}
}

// stop interrupts the process and waits for it, killing it after 30 s.
func (p *proc) stop(t *testing.T) {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Logf("%s did not stop on SIGINT in 30 s; killed", p.name)
		p.cmd.Process.Kill()
		<-p.done
	}
}

// promClient is Prometheus's HTTP API.
type promClient struct{ base string }

type promResponse struct {
	Status    string          `json:"status"`
	Error     string          `json:"error"`
	ErrorType string          `json:"errorType"`
	Data      json.RawMessage `json:"data"`
}

func (c promClient) get(ctx context.Context, path string, q url.Values, data any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path+"?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var r promResponse
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return fmt.Errorf("%s: %s: %w", path, resp.Status, err)
	}
	if r.Status != "success" {
		return fmt.Errorf("%s: %s: %s", path, r.ErrorType, r.Error)
	}
	return json.Unmarshal(r.Data, data)
}

// scalar evaluates q now; it must return one series.
func (c promClient) scalar(ctx context.Context, q string) (float64, error) {
	var data struct {
		Result []struct {
			Value [2]any `json:"value"`
		} `json:"result"`
	}
	if err := c.get(ctx, "/api/v1/query", url.Values{"query": {q}}, &data); err != nil {
		return 0, err
	}
	if len(data.Result) != 1 {
		return 0, fmt.Errorf("%s: %d series", q, len(data.Result))
	}
	s, _ := data.Result[0].Value[1].(string)
	return strconv.ParseFloat(s, 64)
}

// rangeQuery evaluates q from start to end every second: the number of
// series, of finite samples, and the largest finite sample.
func (c promClient) rangeQuery(ctx context.Context, q string, start, end time.Time) (series, finite int, max float64, err error) {
	var data struct {
		Result []struct {
			Values [][2]any `json:"values"`
		} `json:"result"`
	}
	v := url.Values{"query": {q}, "start": {strconv.FormatInt(start.Unix(), 10)}, "end": {strconv.FormatInt(end.Unix()+1, 10)}, "step": {"1"}}
	if err := c.get(ctx, "/api/v1/query_range", v, &data); err != nil {
		return 0, 0, 0, err
	}
	max = math.Inf(-1)
	for _, r := range data.Result {
		for _, s := range r.Values {
			str, _ := s[1].(string)
			f, err := strconv.ParseFloat(str, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				continue
			}
			finite++
			max = math.Max(max, f)
		}
	}
	return len(data.Result), finite, max, nil
}

// labelValues answers a Grafana label_values(METRIC, LABEL) variable query.
func (c promClient) labelValues(ctx context.Context, q string) ([]string, error) {
	var metric, label string
	if _, err := fmt.Sscanf(strings.NewReplacer("(", " ", ")", " ", ",", " ").Replace(q), "label_values %s %s", &metric, &label); err != nil {
		return nil, fmt.Errorf("variable query %q is not label_values(METRIC, LABEL): %w", q, err)
	}
	var vals []string
	err := c.get(ctx, "/api/v1/label/"+label+"/values", url.Values{"match[]": {metric}}, &vals)
	return vals, err
}
