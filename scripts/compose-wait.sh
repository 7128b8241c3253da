#!/usr/bin/env bash
# Waits until every container of the compose project is healthy (or, for a
# one-shot step, exited 0), as Compose v2's `up --wait` does; Debian's
# docker-compose (v1) has no --wait. Fails at once on a step that exited
# non-zero, and after TIMEOUT seconds (default 300) naming what is not ready.
#
#   scripts/compose-wait.sh [docker-compose options: -p NAME --env-file F ...]
set -euo pipefail
cd "$(dirname "$0")/.."
timeout=${TIMEOUT:-300}
if docker compose version >/dev/null 2>&1; then compose=(docker compose "$@"); else compose=(docker-compose "$@"); fi
deadline=$(($(date +%s) + timeout))
while :; do
	ids=$("${compose[@]}" ps -q)
	[ -n "$ids" ] || { echo "compose-wait: no containers (run up -d first)" >&2; exit 1; }
	waiting=""
	while read -r name status health code restarts; do
		case "$status/$health" in
		running/healthy) ;;
		exited/*)
			if [ "$code" != 0 ]; then
				echo "compose-wait: $name exited $code" >&2
				exit 1
			fi
			;;
		*) waiting="$waiting ${name#/}($status/$health)" ;;
		esac
	done < <(docker inspect --format '{{.Name}} {{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}} {{.State.ExitCode}} {{.RestartCount}}' $ids)
	[ -z "$waiting" ] && { echo "compose-wait: every service healthy"; exit 0; }
	if [ "$(date +%s)" -ge "$deadline" ]; then
		echo "compose-wait: not ready after ${timeout}s:$waiting" >&2
		exit 1
	fi
	sleep 2
done
