#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests: initdb into DIR, its own port on
# 127.0.0.1, its unix socket in DIR, trust authentication for the
# "postgres" role, nothing outside DIR touched.
#
#   scripts/pg-throwaway.sh start DIR   # prints: export C2FLOW_TEST_POSTGRES=postgres://postgres@127.0.0.1:PORT
#   scripts/pg-throwaway.sh stop DIR    # stops it (DIR is left for the caller to remove)
#   scripts/pg-throwaway.sh restart DIR # stops it if running, starts it again on its port
#
#   eval "$(scripts/pg-throwaway.sh start "$d")"; trap 'scripts/pg-throwaway.sh stop "$d"' EXIT
#
# The URL names no database: each test creates its own. Binaries: pg_config
# --bindir, else the newest /usr/lib/postgresql/*/bin, else apt-get install
# postgresql (as root). initdb refuses to run as root: as root the cluster
# runs as the "postgres" user (Debian's package creates it), else "nobody".
set -euo pipefail

die() { echo "pg-throwaway: $*" >&2; exit 1; }

bindir() {
	local d
	if command -v pg_config >/dev/null && d=$(pg_config --bindir) && [ -x "$d/initdb" ]; then
		echo "$d"; return
	fi
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
	if [ -n "$d" ] && [ -x "$d/initdb" ]; then
		echo "$d"; return
	fi
	return 1
}

find_bindir() {
	local d
	if d=$(bindir); then echo "$d"; return; fi
	[ "$(id -u)" = 0 ] || die "no PostgreSQL server binaries (pg_config --bindir, /usr/lib/postgresql/*/bin); install the postgresql package"
	echo "pg-throwaway: installing postgresql with apt-get" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >&2 ||
		{ apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >&2; } ||
		die "apt-get install postgresql failed"
	d=$(bindir) || die "postgresql installed, but no initdb found"
	echo "$d"
}

# as USER CMD...: runs CMD as the cluster's owner.
as() {
	local user=$1; shift
	if [ "$(id -u)" = 0 ]; then
		runuser -u "$user" -- "$@"
	else
		"$@"
	fi
}

owner() {
	if [ "$(id -u)" != 0 ]; then id -un; return; fi
	if id postgres >/dev/null 2>&1; then echo postgres; else echo nobody; fi
}

port_free() { ! (echo >"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

pg_start() {
	local dir=$1 bin=$2 user=$3 port=$4
	as "$user" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
		-o "-p $port -k $dir -c listen_addresses=127.0.0.1" start >/dev/null
}

start() {
	local dir=$1 bin user port tries
	bin=$(find_bindir)
	user=$(owner)
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	[ ! -e "$dir/data" ] || die "$dir/data exists: stop and remove the old cluster first"
	[ "$(id -u)" != 0 ] || chown "$user" "$dir"
	as "$user" "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 ||
		die "initdb failed (as $user), see $dir/initdb.log: $(tail -3 "$dir/initdb.log")"
	# Temporal's services each keep a pool per store (up to 20 connections);
	# several servers may share the cluster in a test run.
	echo "max_connections = 500" >>"$dir/data/postgresql.conf"
	for tries in 1 2 3 4 5; do
		port=$((20000 + RANDOM % 30000))
		port_free "$port" || continue
		if pg_start "$dir" "$bin" "$user" "$port"; then
			echo "$bin" >"$dir/bindir"
			echo "$user" >"$dir/owner"
			echo "$port" >"$dir/port"
			echo "export C2FLOW_TEST_POSTGRES=postgres://postgres@127.0.0.1:$port"
			return
		fi
	done
	die "could not start PostgreSQL (5 ports tried), see $dir/server.log: $(tail -3 "$dir/server.log")"
}

stop() {
	local dir=$1
	[ -f "$dir/bindir" ] || return 0
	as "$(cat "$dir/owner")" "$(cat "$dir/bindir")/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
}

restart() {
	local dir=$1
	[ -f "$dir/bindir" ] || die "$dir: no cluster started by this script"
	local bin user port
	bin=$(cat "$dir/bindir") user=$(cat "$dir/owner") port=$(cat "$dir/port")
	if as "$user" "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
		as "$user" "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
	fi
	pg_start "$dir" "$bin" "$user" "$port"
}

case "${1:-}" in
start | stop | restart)
	[ $# -eq 2 ] || die "usage: $0 start|stop|restart DIR"
	"$1" "$2"
	;;
*) die "usage: $0 start|stop|restart DIR" ;;
esac
