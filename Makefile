# c2flow: the two set-up commands are `make demo` and `make test`.
GO ?= go
BIN := bin
# pipefail: a test run piped through its summary fails when the tests do.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c

.PHONY: build demo test test-icicle vet bench clean deploy-env images proto

build:
	$(GO) build -o $(BIN)/ ./cmd/...

# The main job: seal one mixed batch (Filecoin 2KiB and test-scheme
# sectors), run the embedded stack (Temporal with SQLite, versitygw S3, one
# worker) in one process, prove, verify, summarize.
demo: build
	$(BIN)/c2flow demo --dir .c2flow/demo

# Unit and integration tests. Proving keys made by the tests' development
# setups are cached under .c2flow/params so packages share them. The full
# plain log goes to .c2flow/test.log; the terminal shows each package's
# result and every skipped or failed test with all it wrote (its errors,
# its skip reason), which -v prints before the verdict, where a filter on
# the log cannot find them (cmd/internal/testreport).
#
# The slowest packages are named first: go test starts test binaries in
# the order of its package list, so the longest start at once rather than
# last (alphabetically, integration, about 16 minutes on 2 cores, started
# 15 minutes in and was the run's whole tail); testreport's summary names
# the slowest packages and when each started. deploy's compose test
# (TestComposeStack, 29 to 33 minutes cold beside the others) mostly waits (heartbeat timeouts,
# a 60 s pause) while its containers prove: it gets a third test-binary
# slot (-p 3), so the two longest CPU-bound packages still start at once
# (with -p 2 it held cmd/c2flow back 20 minutes). No CPU is left idle
# for a fourth: with -p 4 the CPU was 100% busy, filecoin/circuit took
# 1,251 s instead of 424 s and every compose batch 30 to 50% longer
# (docs/testing.md, cold runs 8 and 9).
SLOW_TESTS := ./integration ./deploy ./cmd/c2flow ./filecoin/circuit ./filecoin/snark ./activities ./filecoin/update ./cmd/c2flow/internal/lab
# -timeout is a hung binary's bound, not a speed check: the longest
# package (deploy) took 31 to 54 min in CI (runs 8 and 10, stop 52) and up to 46 beside two busy
# loops (issue 47's loaded runs); 40m cut it off there.
test:
	mkdir -p .c2flow
	$(GO) build -o .c2flow/testreport ./cmd/internal/testreport
	C2FLOW_PARAMS=$(CURDIR)/.c2flow/params $(GO) test -p 3 -count=1 -timeout 75m -json $(SLOW_TESTS) ./... 2>&1 | \
		.c2flow/testreport -log .c2flow/test.log; \
		rc=$$?; echo "full test log: .c2flow/test.log"; exit $$rc

# The cuda-tagged code (gpu/cuda.go over icicle) without a GPU: every
# cuda-tagged test on ICICLE's CPU backend, built from the icicle-gnark
# module's own source (cmake, clang; cached under .c2flow/icicle-cpu). It
# proves the glue, not the kernels or speed (docs/prover.md).
test-icicle:
	prefix=$$(scripts/icicle-cpu.sh) && \
		C2FLOW_PARAMS=$(CURDIR)/.c2flow/params scripts/test-icicle.sh CPU "$$prefix"

vet:
	gofmt -l . | (! grep .) && $(GO) vet ./...

bench:
	$(GO) test -run '^$$' -bench . -benchtime 3x ./prover/

# The env file of docker-compose.yml: random credentials, 127.0.0.1 binds
# (see deploy/README.md). Kept if it exists; FORCE=1 replaces it.
deploy-env:
	scripts/deploy-env.sh .env

# The images of docker-compose.yml, with no registry: a Debian base from
# Debian's packages (debootstrap, docker import; made once), the binaries
# built here, then compose's build (deploy/README.md).
images:
	scripts/images.sh

clean:
	rm -rf $(BIN) .c2flow

# The cuzk protocol's Go (gateway/cuzkpb), generated with pinned plugins:
# protoc from Debian's protobuf-compiler, protoc-gen-go and
# protoc-gen-go-grpc from the module proxy. The generated files are
# committed; this target remakes them.
PROTOC_GEN_GO := google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.11
PROTOC_GEN_GO_GRPC := google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
proto:
	command -v protoc >/dev/null || { echo "protoc missing: apt-get install protobuf-compiler"; exit 1; }
	GOBIN=$(CURDIR)/.c2flow/protoc-bin $(GO) install $(PROTOC_GEN_GO)
	GOBIN=$(CURDIR)/.c2flow/protoc-bin $(GO) install $(PROTOC_GEN_GO_GRPC)
	cd gateway/cuzkpb && PATH=$(CURDIR)/.c2flow/protoc-bin:$$PATH protoc -I . \
		--go_out=. --go_opt=paths=source_relative --go_opt=Mproving.proto=github.com/c2flow/c2flow/gateway/cuzkpb \
		--go-grpc_out=. --go-grpc_opt=paths=source_relative --go-grpc_opt=Mproving.proto=github.com/c2flow/c2flow/gateway/cuzkpb \
		proving.proto
