package devstack

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	pgschema "go.temporal.io/server/schema/postgresql/v12"

	"github.com/c2flow/c2flow/devstack/pgtest"
)

// On PostgreSQL the server creates its two databases, sets their schemas
// up to this server's versions with Temporal's schema tool, registers the
// namespace, owns the history shards asked for, serves the Web UI, and
// starts again over the same databases.
func TestPostgres(t *testing.T) {
	pg := pgtest.URL(t, pgtest.Base(t))
	var buf syncBuffer
	o := Options{Postgres: pg, HistoryShards: 4, Namespace: "c2flow-pg", UI: "127.0.0.1:0", Log: &buf}
	s, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			s.Stop()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nsc, err := client.NewNamespaceClient(client.Options{HostPort: s.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = nsc.Describe(ctx, "c2flow-pg")
	nsc.Close()
	if err != nil {
		t.Fatalf("namespace c2flow-pg: %v", err)
	}

	db := openDB(t, pg, "")
	var version string
	if err := db.QueryRow(`SELECT curr_version FROM schema_version WHERE version_partition = 0`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version != pgschema.Version {
		t.Errorf("main schema version %s, want %s", version, pgschema.Version)
	}
	if err := openDB(t, pg, "_visibility").QueryRow(`SELECT curr_version FROM schema_version WHERE version_partition = 0`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version != pgschema.VisibilityVersion {
		t.Errorf("visibility schema version %s, want %s", version, pgschema.VisibilityVersion)
	}
	// The history service writes a shard's row when it first acquires the
	// shard, which a loaded machine may not have done yet (loaded run 5:
	// 3 of 4): wait for the rows, within the test's minute.
	var shards int
	for {
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM shards`).Scan(&shards); err != nil {
			t.Fatal(err)
		}
		if shards >= 4 || ctx.Err() != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if shards != 4 {
		t.Errorf("%d history shards in the database, want 4", shards)
	}

	// The UI serves its page, and its API reaches the frontend.
	if s.UIAddr() == "" || strings.HasSuffix(s.UIAddr(), ":0") {
		t.Fatalf("UI address %q", s.UIAddr())
	}
	page := get(t, "http://"+s.UIAddr()+"/")
	if !strings.Contains(page, "<html") {
		t.Fatalf("UI page: %.200s", page)
	}
	var list struct {
		Namespaces []struct {
			NamespaceInfo struct{ Name string } `json:"namespaceInfo"`
		} `json:"namespaces"`
	}
	if err := json.Unmarshal([]byte(get(t, "http://"+s.UIAddr()+"/api/v1/namespaces")), &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range list.Namespaces {
		names = append(names, n.NamespaceInfo.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "c2flow-pg") {
		t.Fatalf("namespaces through the UI's API: %v", names)
	}

	// Again over the same databases: set up already, nothing to do.
	s.Stop()
	stopped = true
	s2, err := Start(o)
	if err != nil {
		t.Fatalf("second start over the same databases: %v\n%s", err, buf.String())
	}
	s2.Stop()
}

// A malformed PostgreSQL URL is refused, naming what is wrong.
func TestPostgresURL(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"mysql://u@h:1/db", "scheme"},
		{"postgres://u@h:1/", "database name"},
		{"postgres://u@h:1/a/b", "database name"},
		{"postgres://h:1/db", "no user"},
		{"postgres://u@:1/db", "no host"},
		{"postgres://u@h:1/db?sslmode=a&sslmode=b", "sslmode given 2 times"},
	} {
		_, err := Start(Options{Postgres: c.url})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.url, err, c.want)
		}
	}
	main, vis, err := postgresConfig("postgres://me:pw@db.example:6543/temporal?sslmode=require")
	if err != nil {
		t.Fatal(err)
	}
	if main.ConnectAddr != "db.example:6543" || main.User != "me" || main.Password != "pw" || main.DatabaseName != "temporal" ||
		vis.DatabaseName != "temporal_visibility" || vis.ConnectAttributes["sslmode"] != "require" {
		t.Fatalf("config %+v, visibility %+v", main, vis)
	}
}

// A UI address that is taken is an error of Start, not an exit.
func TestUIPortTaken(t *testing.T) {
	s, err := Start(Options{UI: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if _, err := Start(Options{UI: s.UIAddr()}); err == nil || !strings.Contains(err.Error(), "web UI on "+s.UIAddr()) {
		t.Fatalf("second UI on %s: %v", s.UIAddr(), err)
	}
}

// openDB opens the test's database (suffix "_visibility": the visibility
// one) through the pq driver the server's plugin registers.
func openDB(t *testing.T, pgURL, suffix string) *sql.DB {
	t.Helper()
	u, err := url.Parse(pgURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path += suffix
	q := u.Query()
	q.Set("sslmode", "disable")
	u.RawQuery = q.Encode()
	db, err := sql.Open("postgres", u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func get(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %.300s", u, resp.Status, b)
	}
	return string(b)
}
