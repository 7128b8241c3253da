#!/bin/sh
# One-shot schema step of docker-compose.yml (temporalio/admin-tools), as
# Temporal's own compose files do it since temporalio/auto-setup was
# deprecated: create the databases if missing, set up the versioning tables,
# then upgrade both schemas to the image's version. Every step is
# idempotent, so the service runs on every `docker compose up`, and a newer
# admin-tools image upgrades the schema before the newer server starts.
# temporal-sql-tool reads SQL_PLUGIN, SQL_HOST, SQL_PORT, SQL_USER and
# SQL_PASSWORD from the environment.
set -eu
: "${SQL_HOST:?SQL_HOST is required}"
: "${SQL_USER:?SQL_USER is required}"
: "${SQL_PASSWORD:?SQL_PASSWORD is required (make deploy-env writes it)}"
schema=/etc/temporal/schema/postgresql/v12

echo "waiting for PostgreSQL at ${SQL_HOST}:${SQL_PORT:-5432}"
nc -z -w 10 "${SQL_HOST}" "${SQL_PORT:-5432}"

for db in temporal temporal_visibility; do
	case $db in
	temporal) dir=$schema/temporal/versioned ;;
	*) dir=$schema/visibility/versioned ;;
	esac
	temporal-sql-tool --db "$db" create
	temporal-sql-tool --db "$db" setup-schema -v 0.0
	temporal-sql-tool --db "$db" update-schema -d "$dir"
done
echo "schema ready"
