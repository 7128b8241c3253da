#!/usr/bin/env bash
# Builds icicle's CUDA backend and BLS12-381 libraries from the
# icicle-gnark/v3 module's own sources (cmake + nvcc), installs them, then
# builds c2flow with -tags cuda. For a GPU host with the CUDA toolkit; the
# default build and CI need none of this.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${CUDA_HOME:=/usr/local/cuda}"
: "${ICICLE_INSTALL:=/usr/local}"
command -v cmake >/dev/null || { echo "cmake is required (apt-get install cmake)"; exit 1; }
[ -x "$CUDA_HOME/bin/nvcc" ] || { echo "nvcc not found under CUDA_HOME=$CUDA_HOME"; exit 1; }
go mod download github.com/ingonyama-zk/icicle-gnark/v3
src="$(go list -m -f '{{.Dir}}' github.com/ingonyama-zk/icicle-gnark/v3)/icicle"
build="${ICICLE_BUILD_DIR:-$PWD/.icicle-build}"
rm -rf "$build" && mkdir -p "$build"
cp -r "$src" "$build/src" && chmod -R u+w "$build/src" # the module cache is read-only
cmake -S "$build/src" -B "$build/out" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_COMPILER="$CUDA_HOME/bin/nvcc" -DCURVE=bls12_381 -DMSM=ON -DNTT=ON -DG2=ON \
  -DCUDA_BACKEND=local -DCMAKE_INSTALL_PREFIX="$ICICLE_INSTALL"
cmake --build "$build/out" --target install -j"$(nproc)"
export ICICLE_BACKEND_INSTALL_DIR="$ICICLE_INSTALL/lib/backend"
export CGO_LDFLAGS="-L$ICICLE_INSTALL/lib -Wl,-rpath,$ICICLE_INSTALL/lib"
go build -tags cuda -o bin/ ./cmd/...
echo "built bin/ with -tags cuda; export ICICLE_BACKEND_INSTALL_DIR=$ICICLE_BACKEND_INSTALL_DIR"
