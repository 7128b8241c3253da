#!/usr/bin/env bash
# The one-command GPU check: build (scripts/build-cuda.sh), then the CUDA
# backend against the CPU backend, proofs from the CUDA device phase
# verified by gnark, and the device-phase bench, CUDA vs CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${ICICLE_INSTALL:=/usr/local}"
[ -x bin/c2flow ] && [ -n "${SKIP_BUILD:-}" ] || scripts/build-cuda.sh
export ICICLE_BACKEND_INSTALL_DIR="$ICICLE_INSTALL/lib/backend"
export CGO_LDFLAGS="-L$ICICLE_INSTALL/lib -Wl,-rpath,$ICICLE_INSTALL/lib"
export C2FLOW_PARAMS="${C2FLOW_PARAMS:-$PWD/.c2flow/params}"
nvidia-smi -L || true
go test -tags cuda -count=1 -run 'CUDA' -v ./gpu/ ./prover/
for backend in cuda cpu; do
  bin/c2flow bench prover --backend "$backend" --profile "${PROFILE:-256MiB}" --runs "${RUNS:-3}"
done
