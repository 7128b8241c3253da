#!/usr/bin/env bash
# Runs every cuda-tagged test on icicle device type $1 over the icicle
# libraries installed under $2: CPU (ICICLE's CPU backend, make test-icicle,
# any machine) or CUDA (a GPU, scripts/check-cuda.sh). The tests are the
# TestCUDA* tests of every package with a cuda-tagged test file; a skipped
# test, or fewer passes than there are such tests, fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
typ="${1:?usage: scripts/test-icicle.sh CPU|CUDA ICICLE_PREFIX}"
prefix="${2:?usage: scripts/test-icicle.sh CPU|CUDA ICICLE_PREFIX}"
export ICICLE_BACKEND_INSTALL_DIR="$prefix/lib/backend"
export CGO_LDFLAGS="-L$prefix/lib -Wl,-rpath,$prefix/lib"
export C2FLOW_ICICLE_DEVICE="$typ"

mapfile -t files < <(grep -rl --include='*_test.go' '^//go:build cuda' --exclude-dir=.c2flow . | sort)
[ "${#files[@]}" -gt 0 ] || { echo "no cuda-tagged test files" >&2; exit 1; }
# -run selects by name: a cuda-tagged test of another name would not run.
if other=$(grep -h '^func Test' "${files[@]}" | grep -v '^func TestCUDA'); then
	echo "cuda-tagged tests must be named TestCUDA*, or make test-icicle would not run them:" >&2
	echo "$other" >&2
	exit 1
fi
want=$(grep -h '^func TestCUDA' "${files[@]}" | wc -l)
mapfile -t pkgs < <(for f in "${files[@]}"; do dirname "$f"; done | sort -u)

mkdir -p .c2flow
log=.c2flow/test-icicle.log
echo "icicle device $typ: $want cuda-tagged tests in ${pkgs[*]} (log: $log)"
set +e
go test -tags cuda -count=1 -v -timeout 40m -run '^TestCUDA' "${pkgs[@]}" 2>&1 | tee "$log" |
	grep --line-buffered -E '^(=== RUN|--- |ok |FAIL|panic)|_test\.go:[0-9]+:'
rc=${PIPESTATUS[0]}
set -e
[ "$rc" = 0 ] || { echo "cuda-tagged tests failed on $typ (rc $rc): see $log" >&2; exit "$rc"; }
if grep -q -- '--- SKIP' "$log"; then
	echo "cuda-tagged tests skipped on $typ: nothing may skip here" >&2
	exit 1
fi
passed=$(grep -cE '^\s*--- PASS: TestCUDA[^/ ]* ' "$log" || true)
[ "$passed" -ge "$want" ] || { echo "$passed of $want cuda-tagged tests passed on $typ" >&2; exit 1; }
echo "icicle device $typ: all $passed cuda-tagged tests passed"
