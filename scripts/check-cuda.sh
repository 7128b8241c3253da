#!/usr/bin/env bash
# The one-command GPU check: build (scripts/build-cuda.sh); every
# cuda-tagged test (make test-icicle's, there on ICICLE's CPU backend) on
# the CUDA device: the backend against gnark-crypto's MSMs and NTTs, the
# bases streamed, proofs from the CUDA device phase verified by gnark,
# c2flow prove's device log; then the CUDA device phase against c2flow's
# CPU backend (gnark-crypto) on 256MiB (bench prover, test scheme) and on
# a Filecoin 2KiB sector (c2flow prove; needs Filecoin's 2KiB parameters
# in $FIL_PROOFS_PARAMETER_CACHE), and a table to paste into
# docs/performance.md. Output and logs: .c2flow/check-cuda/.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${ICICLE_INSTALL:=/usr/local}"
[ -x bin/c2flow ] && [ -n "${SKIP_BUILD:-}" ] || scripts/build-cuda.sh
export ICICLE_BACKEND_INSTALL_DIR="$ICICLE_INSTALL/lib/backend"
export CGO_LDFLAGS="-L$ICICLE_INSTALL/lib -Wl,-rpath,$ICICLE_INSTALL/lib"
export C2FLOW_PARAMS="${C2FLOW_PARAMS:-$PWD/.c2flow/params}"
export C2FLOW_ICICLE_DEVICE=CUDA # a GPU, whatever the environment said
nvidia-smi -L || true
scripts/test-icicle.sh CUDA "$ICICLE_INSTALL"

out=.c2flow/check-cuda
rm -rf "$out" && mkdir -p "$out"
profile="${PROFILE:-256MiB}"
for backend in cuda cpu; do
	bin/c2flow bench prover --backend "$backend" --profile "$profile" --runs "${RUNS:-3}" | tee "$out/bench-$backend.txt"
done

# Filecoin 2KiB: one sector sealed here, proved on each backend (one
# partition; c2flow prove verifies it before writing it).
fil=""
bin/c2flow seal --proof StackedDrg2KiBV1_1 --sectors 1 --first-id 1 --out "$out/fil2k"
for backend in cuda cpu; do
	if ! bin/c2flow prove --c1 "$out/fil2k/1.c1.json" --out "$out/fil2k/1.$backend.proof" --backend "$backend" \
		>"$out/prove-$backend.txt" 2>"$out/prove-$backend.err"; then
		fil="n/a: c2flow prove --backend $backend failed ($(tail -1 "$out/prove-$backend.err")); Filecoin's 2KiB parameters: curio fetch-params 2KiB"
		break
	fi
	cat "$out/prove-$backend.err" "$out/prove-$backend.txt"
done

# bench prover prints medians in ms: "device phase", "NTT (H)", "G1 MSMs",
# "split prove (total)".
bench() { # file label -> ms
	awk -v l="$2" 'index($0, l) { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/) { print $i; exit } }' "$1"
}
# c2flow prove prints Go durations: "partition ..: synth 1.2s, device
# 850ms (NTT 120ms, MSM 700ms), finalize .." on stderr, "... proved and
# verified in 2.1s (..." on stdout.
prove() { # file pattern -> ms
	grep -ho "$2 [0-9.hmsµun]*" "$1" | head -1 | awk '{ d = $NF; t = 0
		while (match(d, /^[0-9.]+(h|ms|m|s|µs|us|ns)/)) {
			n = substr(d, 1, RLENGTH) + 0; u = substr(d, 1, RLENGTH); sub(/^[0-9.]+/, "", u); d = substr(d, RLENGTH + 1)
			t += n * (u == "h" ? 3600000 : u == "m" ? 60000 : u == "s" ? 1000 : u == "ms" ? 1 : u == "ns" ? 1e-6 : 1e-3)
		}
		printf "%.0f\n", t }'
}
row() { # label cuda cpu
	awk -v l="$1" -v g="$2" -v c="$3" 'BEGIN {
		r = (g > 0 && c > 0) ? sprintf("%.1fx", c / g) : "-"
		printf "| %-30s | %10s | %10s | %8s |\n", l, g, c, r }'
}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
{
	echo
	echo "CUDA device phase vs c2flow's CPU backend, $(date -u +%F), ${gpu:-GPU unknown}, $(nproc) host cores (ms; bench prover: medians of ${RUNS:-3})"
	echo
	echo "| measure                        |       CUDA |        CPU | CPU/CUDA |"
	echo "|--------------------------------|-----------:|-----------:|---------:|"
	for m in "NTT (H)" "G1 MSMs" "device phase" "split prove (total)"; do
		row "$profile $m" "$(bench "$out/bench-cuda.txt" "$m")" "$(bench "$out/bench-cpu.txt" "$m")"
	done
	if [ -z "$fil" ]; then
		for m in NTT MSM device; do
			row "Filecoin 2KiB $m" "$(prove "$out/prove-cuda.err" "$m")" "$(prove "$out/prove-cpu.err" "$m")"
		done
		row "Filecoin 2KiB proof" "$(prove "$out/prove-cuda.txt" "verified in")" "$(prove "$out/prove-cpu.txt" "verified in")"
	else
		echo "| Filecoin 2KiB                  | $fil |"
	fi
} | tee "$out/table.md"
echo "table: $out/table.md"
