#!/bin/sh
# One-shot step of docker-compose.yml (temporalio/admin-tools): wait until
# the server is healthy, then create the namespace the workers use if it
# does not exist. Workers start only after it succeeded.
set -eu
ns=${DEFAULT_NAMESPACE:-default}
addr=${TEMPORAL_ADDRESS:-temporal:7233}
tries=${TRIES:-60}

i=1
until temporal operator cluster health --address "$addr" >/dev/null 2>&1; do
	[ "$i" -ge "$tries" ] && { echo "temporal at $addr not healthy after $tries tries" >&2; exit 1; }
	echo "waiting for temporal at $addr ($i/$tries)"
	i=$((i + 1))
	sleep 2
done

if temporal operator namespace describe -n "$ns" --address "$addr" >/dev/null 2>&1; then
	echo "namespace $ns exists"
else
	temporal operator namespace create -n "$ns" --retention "${RETENTION:-72h}" --address "$addr"
	echo "namespace $ns created"
fi
