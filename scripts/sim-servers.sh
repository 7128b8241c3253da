#!/usr/bin/env bash
# The README's saturation table: `c2flow sim` against the embedded SQLite
# server and against `c2flow server` on PostgreSQL with 1, 4 and 16 history
# shards, the server in its own process so that its CPU and peak RSS are
# its own, PostgreSQL a throwaway cluster (scripts/pg-throwaway.sh) whose
# CPU is counted too. Run it on a quiet machine: the partitions/s is the
# CPU these processes got.
#
#   scripts/sim-servers.sh [RUNS] [SIM FLAGS...]
#   default: 2 runs of each, --workers 8 --devices-per-worker 4 --scale 0.125
#
# One line per run: server, partitions/s, overhead median, server CPU and
# PostgreSQL CPU per partition (ms), peak RSS of the server.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-2}
shift || true
sim=("$@")
[ ${#sim[@]} -gt 0 ] || sim=(--workers 8 --devices-per-worker 4 --scale 0.125)
go build -o bin/c2flow ./cmd/c2flow

tmp=$(mktemp -d)
chmod 755 "$tmp" # the cluster may run as the postgres user
pgdir=$tmp/pg
cleanup() {
	[ -z "${srv:-}" ] || kill "$srv" 2>/dev/null || true
	scripts/pg-throwaway.sh stop "$pgdir" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
env=$(scripts/pg-throwaway.sh start "$pgdir")
eval "$env"
tck=$(getconf CLK_TCK)

# cpu PID...: utime+stime (+ reaped children's) of the processes, in ticks.
cpu() {
	local t=0 p f
	for p in "$@"; do
		[ -r /proc/$p/stat ] || continue
		f=($(sed 's/^.*) //' /proc/$p/stat))
		t=$((t + f[11] + f[12] + f[13] + f[14]))
	done
	echo $t
}
# pgcpu: the cluster's postmaster (whose reaped backends count in its
# children's time) and its live children.
pgcpu() {
	local pm
	pm=$(head -1 "$pgdir/data/postmaster.pid")
	cpu "$pm" $(pgrep -P "$pm" || true)
}

# report NAME LOG SERVER_TICKS PG_TICKS RSS_KB
report() {
	local parts pps over
	parts=$(sed -n 's/.* = \([0-9]*\) partitions,.*/\1/p' "$2" | tail -1)
	pps=$(sed -n 's/.*throughput \([0-9.]*\) partitions\/s.*/\1/p' "$2" | tail -1)
	over=$(sed -n 's/.*overhead per partition: median \([0-9]*\) ms.*/\1/p' "$2" | tail -1)
	awk -v n="$1" -v parts="$parts" -v pps="$pps" -v over="$over" -v s="$3" -v pg="$4" -v rss="$5" -v tck="$tck" 'BEGIN {
		printf "%-22s %7s p/s  overhead median %6s ms  server %5.1f ms/partition  postgres %5.1f ms/partition  server peak RSS %d MiB\n",
			n, pps, over, s * 1000 / tck / parts, pg * 1000 / tck / parts, rss / 1024 }'
}

for run in $(seq "$runs"); do
	# SQLite: the server is in the sim's process; its CPU is the process's.
	/usr/bin/time -f "%U %S %M" -o "$tmp/time" bin/c2flow sim "${sim[@]}" >"$tmp/sim.log" 2>&1
	read -r u s m <"$tmp/time"
	report "sqlite (in-process)" "$tmp/sim.log" "$(awk -v u="$u" -v s="$s" -v t="$tck" 'BEGIN { print int((u + s) * t) }')" 0 "$m"
	for shards in 1 4 16; do
		port=$((20000 + RANDOM % 10000))
		db="${C2FLOW_TEST_POSTGRES}/sim_${shards}_${run}_$$"
		bin/c2flow server --db "$db" --history-shards "$shards" --address "127.0.0.1:$port" --ui "" >"$tmp/server.log" 2>&1 &
		srv=$!
		for _ in $(seq 120); do
			grep -q "server up" "$tmp/server.log" && break
			kill -0 "$srv" || { cat "$tmp/server.log"; exit 1; }
			sleep 0.5
		done
		s0=$(cpu "$srv") p0=$(pgcpu)
		bin/c2flow sim "${sim[@]}" --temporal "127.0.0.1:$port" >"$tmp/sim.log" 2>&1
		s1=$(cpu "$srv") p1=$(pgcpu)
		rss=$(awk '/VmHWM/ { print $2 }' /proc/$srv/status)
		kill "$srv"
		wait "$srv" || true
		srv=
		report "postgres, $shards shard(s)" "$tmp/sim.log" $((s1 - s0)) $((p1 - p0)) "$rss"
	done
done
