#!/bin/sh
# Writes the env file of docker-compose.yml (default .env beside it, which
# compose reads by itself): random PostgreSQL, Grafana and S3 credentials,
# and the bind addresses, 127.0.0.1 unless set in the environment. The file
# is readable by its owner only. An existing file is kept (its passwords
# are already in the volumes); FORCE=1 replaces it.
#
#   scripts/deploy-env.sh [FILE]
#   C2FLOW_FLEET_BIND=10.0.0.2 scripts/deploy-env.sh   # workers on other hosts
set -eu
out=${1:-$(dirname "$0")/../.env}
# 24 random bytes as 48 hex digits: safe in URLs, YAML and shells.
rand() { od -An -tx1 -N24 /dev/urandom | tr -d ' \n'; }
workerkeys() {
	cat <<EOK
# The workers' S3 account (workers, the key step and the gateway): c2flow s3
# makes it the owner of the c2flow bucket, reaching no other.
C2FLOW_S3_WORKER_ACCESS_KEY=c2flowworker$(od -An -tx1 -N8 /dev/urandom | tr -d ' \n')
C2FLOW_S3_WORKER_SECRET_KEY=$(rand)
EOK
}
if [ -e "$out" ] && [ "${FORCE:-0}" != 1 ]; then
	# A file of an earlier version gets the variables added since, and
	# keeps every value it has.
	if ! grep -q '^C2FLOW_S3_WORKER_ACCESS_KEY=' "$out"; then
		workerkeys >>"$out"
		echo "$out exists; kept, and the workers' S3 account added" >&2
		exit 0
	fi
	echo "$out exists; kept (FORCE=1 to replace it: the running stack's passwords change)" >&2
	exit 0
fi
umask 077
tmp="$out.tmp.$$"
cat >"$tmp" <<EOT
# docker-compose.yml's settings, written by scripts/deploy-env.sh on $(date -u +%Y-%m-%dT%H:%M:%SZ).
# Secrets: keep this file private (mode 600), never commit it.

# Where published ports listen. Fleet: Temporal 7233 and S3 7070, for
# workers and clients on other hosts (their network's address, never
# 0.0.0.0 on a public interface). Admin: the UI 8080, Grafana 3000 and
# Prometheus 9090, for operators (keep 127.0.0.1 and use an SSH tunnel).
C2FLOW_FLEET_BIND=${C2FLOW_FLEET_BIND:-127.0.0.1}
C2FLOW_ADMIN_BIND=${C2FLOW_ADMIN_BIND:-127.0.0.1}
# The cuzk gateway 9820, for Curio: plaintext on 127.0.0.1 (Curio on this
# box). Another address needs TLS, or the gateway refuses to start:
# C2FLOW_GATEWAY_TLS_CERT, _KEY and C2FLOW_GATEWAY_CLIENT_CA, paths under
# /etc/c2flow/gateway-tls (deploy/gateway-tls/README.md).
C2FLOW_GATEWAY_BIND=${C2FLOW_GATEWAY_BIND:-127.0.0.1}

# The profile whose keys the setup step publishes and the workers load.
C2FLOW_PROFILE=${C2FLOW_PROFILE:-32KiB}
TEMPORAL_HISTORY_SHARDS=${TEMPORAL_HISTORY_SHARDS:-4}

# A stopped worker (restart, upgrade, scale-in) first lets the partitions
# it holds finish (--drain-timeout); docker kills it after the stop grace,
# which must exceed the drain by a minute (running activities get 30 s).
# Raise both where a device phase is long or the hosts are loaded.
C2FLOW_DRAIN_TIMEOUT=${C2FLOW_DRAIN_TIMEOUT:-2m}
C2FLOW_STOP_GRACE=${C2FLOW_STOP_GRACE:-3m}

POSTGRES_PASSWORD=$(rand)
GRAFANA_ADMIN_PASSWORD=$(rand)
# S3 root credentials: c2flow s3 itself and the operator's clients (c2flow
# submit: --s3-access-key / --s3-secret-key or AWS_ACCESS_KEY_ID /
# AWS_SECRET_ACCESS_KEY). Workers get their own account, below.
C2FLOW_S3_ACCESS_KEY=c2flow$(od -An -tx1 -N8 /dev/urandom | tr -d ' \n')
C2FLOW_S3_SECRET_KEY=$(rand)
$(workerkeys)
EOT
mv "$tmp" "$out"
echo "wrote $out (mode 600)"
