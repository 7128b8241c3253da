package devstack

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/metrics"
	"go.temporal.io/server/common/persistence"
	"go.temporal.io/server/common/persistence/serialization"
	tsql "go.temporal.io/server/common/persistence/sql"
	"go.temporal.io/server/common/persistence/sql/sqlplugin"
	pgplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql"
	"go.temporal.io/server/common/resolver"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/tools/common/schema"
	sqltool "go.temporal.io/server/tools/sql"
)

// Schema directories of Temporal's embedded PostgreSQL schemas (the
// server module's schema/postgresql/v12, versioned as the server expects).
const (
	pgMainSchema       = "postgresql/v12/temporal"
	pgVisibilitySchema = "postgresql/v12/visibility"
)

// postgresConfig turns a postgres:// URL into the SQL configurations of
// the main database and of its visibility database beside it
// (DBNAME_visibility). Query parameters (sslmode=...) become connection
// attributes.
func postgresConfig(raw string) (main, vis *config.SQL, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("postgres URL: %w", err)
	}
	shown := u.Redacted()
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return nil, nil, fmt.Errorf("postgres URL %s: scheme %q, want postgres://USER@HOST:PORT/DBNAME", shown, u.Scheme)
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" || strings.Contains(db, "/") {
		return nil, nil, fmt.Errorf("postgres URL %s: database name %q, want postgres://USER@HOST:PORT/DBNAME", shown, db)
	}
	if u.User == nil || u.User.Username() == "" {
		return nil, nil, fmt.Errorf("postgres URL %s names no user, want postgres://USER@HOST:PORT/DBNAME", shown)
	}
	if u.Hostname() == "" {
		return nil, nil, fmt.Errorf("postgres URL %s names no host, want postgres://USER@HOST:PORT/DBNAME", shown)
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	pw, ok := u.User.Password()
	if !ok {
		pw = os.Getenv("PGPASSWORD")
	}
	attrs := map[string]string{}
	for k, v := range u.Query() {
		if len(v) != 1 {
			return nil, nil, fmt.Errorf("postgres URL %s: parameter %s given %d times", shown, k, len(v))
		}
		attrs[k] = v[0]
	}
	main = &config.SQL{
		PluginName: pgplugin.PluginName, ConnectProtocol: "tcp",
		ConnectAddr: net.JoinHostPort(u.Hostname(), port), User: u.User.Username(), Password: pw,
		DatabaseName: db, ConnectAttributes: attrs,
		// Temporal's own docker configuration: each service of the server
		// has its pool per store.
		MaxConns: 20, MaxIdleConns: 20, MaxConnLifetime: time.Hour,
	}
	v := *main
	v.DatabaseName = db + "_visibility"
	v.ConnectAttributes = map[string]string{}
	for k, a := range attrs {
		v.ConnectAttributes[k] = a
	}
	return main, &v, nil
}

// setupPostgres does what Temporal's temporal-sql-tool does before a first
// start (create-database, setup-schema -v 0.0, update-schema to the
// embedded versioned schema), for the main and visibility databases, and
// registers the namespace. Each step is idempotent: on a database already
// set up it upgrades the schema if this server is newer, else does
// nothing.
func setupPostgres(main, vis *config.SQL, namespace, cluster string, shards int, logger log.Logger) error {
	for _, db := range []struct {
		cfg    *config.SQL
		schema string
	}{{main, pgMainSchema}, {vis, pgVisibilitySchema}} {
		if err := setupPostgresDB(db.cfg, db.schema, logger); err != nil {
			return fmt.Errorf("postgres database %s at %s: %w", db.cfg.DatabaseName, db.cfg.ConnectAddr, err)
		}
	}
	// Temporal persists the shard count at the first start and then uses
	// that one whatever it is given: another count is refused here, not
	// announced and silently ignored.
	persisted, err := persistedShards(main, cluster, logger)
	if err != nil {
		return fmt.Errorf("postgres database %s at %s: read the persisted history shard count: %w", main.DatabaseName, main.ConnectAddr, err)
	}
	if persisted != 0 && persisted != shards {
		return fmt.Errorf("postgres database %s at %s was created with %d history shards, not %d: Temporal fixes the count at the first start (give --history-shards %d, or use a new database)",
			main.DatabaseName, main.ConnectAddr, persisted, shards, persisted)
	}
	ns, err := sqliteschema.NewNamespaceConfig("active", namespace, false, nil)
	if err != nil {
		return fmt.Errorf("namespace config: %w", err)
	}
	// CreateNamespaces works through the SQL plugin the config names, not
	// SQLite's alone; registering before the services start spares the
	// namespace cache's refresh wait.
	if err := sqliteschema.CreateNamespaces(main, ns); err != nil {
		return fmt.Errorf("register namespace %s in postgres database %s: %w", namespace, main.DatabaseName, err)
	}
	return nil
}

func setupPostgresDB(cfg *config.SQL, schemaName string, logger log.Logger) error {
	// create-database connects to the "postgres" database; a role without
	// CREATEDB may still use a database made for it.
	create := *cfg
	createErr := sqltool.DoCreateDatabase(&create, "postgres", logger)
	conn, err := sqltool.NewConnection(cfg, logger)
	if err != nil {
		return errors.Join(fmt.Errorf("connect: %w", err), createErr)
	}
	defer conn.Close()
	if _, err := conn.ListTables(); err != nil {
		return errors.Join(fmt.Errorf("connect: %w", err), createErr)
	}
	if err := schema.NewSetupSchemaTask(conn, &schema.SetupConfig{InitialVersion: "0.0"}, logger).Run(); err != nil {
		return fmt.Errorf("setup schema: %w", err)
	}
	if err := schema.NewUpdateSchemaTask(conn, &schema.UpdateConfig{DBName: cfg.DatabaseName, SchemaName: schemaName}, logger).Run(); err != nil {
		return fmt.Errorf("update schema %s: %w", schemaName, err)
	}
	return nil
}

// persistedShards returns the history shard count of cluster that a
// previous start persisted in the database's cluster metadata; 0 before
// the first start.
func persistedShards(cfg *config.SQL, cluster string, logger log.Logger) (int, error) {
	db, err := tsql.NewSQLDB(sqlplugin.DbKindMain, cfg, resolver.NewNoopResolver(), logger, metrics.NoopMetricsHandler)
	if err != nil {
		return 0, fmt.Errorf("connect: %w", err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	row, err := db.GetClusterMetadata(ctx, &sqlplugin.ClusterMetadataFilter{ClusterName: cluster})
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("cluster metadata of %s: %w", cluster, err)
	}
	md, err := serialization.NewSerializer().DeserializeClusterMetadata(persistence.NewDataBlob(row.Data, row.DataEncoding))
	if err != nil {
		return 0, fmt.Errorf("decode cluster metadata of %s: %w", cluster, err)
	}
	return int(md.GetHistoryShardCount()), nil
}
