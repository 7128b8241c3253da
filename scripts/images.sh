#!/usr/bin/env bash
# Makes every image docker-compose.yml runs, with no registry: a Debian base
# from Debian's packages (debootstrap into a folder, then docker import),
# the c2flow binaries built here from this repo, then compose's build of
# the c2flow, PostgreSQL and Prometheus images on that base.
#
#   scripts/images.sh            # base (once), binaries, compose build
#   BASE_ONLY=1 scripts/images.sh
#
# The base is made once and kept: its label names the recipe below, and a
# changed recipe makes it again. The binaries and the images above it are
# rebuilt each run (docker's layer cache keeps that to seconds).
set -euo pipefail
cd "$(dirname "$0")/.."
base=c2flow-base:bookworm
suite=bookworm
include=ca-certificates,procps,iproute2
recipe="debootstrap-minbase-$suite-$include-v1"
mirror=${DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
	# The machine's own Debian mirror (deb822 or one-line sources).
	mirror=$(awk '/^URIs:/ {print $2; exit} /^deb / {print $2; exit}' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null | head -1)
	mirror=${mirror:-http://deb.debian.org/debian}
fi
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"

have=$(docker image inspect "$base" --format '{{ index .Config.Labels "c2flow.recipe" }}' 2>/dev/null || true)
if [ "$have" != "$recipe" ]; then
	command -v debootstrap >/dev/null || { $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends debootstrap >/dev/null; }
	dir=$(mktemp -d /tmp/c2flow-base.XXXXXX)
	trap '$sudo rm -rf "$dir"' EXIT
	echo "images: making $base from $mirror (debootstrap $suite, minbase + $include)"
	start=$(date +%s)
	$sudo debootstrap --variant=minbase --include="$include" "$suite" "$dir/root" "$mirror" >"$dir/log" 2>&1 \
		|| { tail -20 "$dir/log" >&2; exit 1; }
	$sudo rm -rf "$dir/root/var/lib/apt/lists/"* "$dir/root/var/cache/apt/"*.bin
	$sudo tar -C "$dir/root" -c . | docker import \
		--change "LABEL c2flow.recipe=$recipe" \
		--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
		--change 'CMD ["/bin/bash"]' - "$base" >/dev/null
	echo "images: $base made in $(($(date +%s) - start)) s"
fi
[ "${BASE_ONLY:-0}" = 1 ] && exit 0

echo "images: building the c2flow binaries into deploy/build/bin"
mkdir -p deploy/build/bin
# Built as the tests build (same cache): on a warm machine this only links.
go build -o deploy/build/bin/ ./cmd/c2flow ./cmd/worker

if docker compose version >/dev/null 2>&1; then
	compose=(docker compose)
else
	compose=(docker-compose)
fi
# compose refuses to read the file without .env's variables; a build needs none.
env_file=.env
[ -e "$env_file" ] || env_file=deploy/build/build.env
# The build's own file is written, or brought up to date (deploy-env.sh
# keeps its values and adds variables a newer compose file needs).
[ "$env_file" = .env ] || scripts/deploy-env.sh "$env_file" >/dev/null 2>&1
"${compose[@]}" --env-file "$env_file" --profile split build
