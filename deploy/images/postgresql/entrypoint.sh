#!/bin/sh
# First start: a cluster whose superuser is $POSTGRES_USER with
# $POSTGRES_PASSWORD (scram-sha-256 over the network, trust on the local
# socket inside the container). Later starts keep the data as it is.
set -eu
: "${POSTGRES_USER:?POSTGRES_USER is required}"
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required (make deploy-env writes it)}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
	pw=$(mktemp)
	printf '%s' "$POSTGRES_PASSWORD" >"$pw"
	initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pw" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
	rm -f "$pw"
	echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
	echo "c2flow-postgresql: cluster made in $PGDATA"
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -c max_connections=200
