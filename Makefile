# c2flow: the two set-up commands are `make demo` and `make test`.
GO ?= go
BIN := bin

.PHONY: build demo test vet bench clean deploy-env

build:
	$(GO) build -o $(BIN)/ ./cmd/...

# The main job: seal a small batch, run the embedded stack (Temporal with
# SQLite, versitygw S3, one worker) in one process, prove, verify, summarize.
demo: build
	$(BIN)/c2flow demo --dir .c2flow/demo

# Unit and integration tests. Proving keys made by the tests' development
# setups are cached under .c2flow/params so packages share them.
test:
	C2FLOW_PARAMS=$(CURDIR)/.c2flow/params $(GO) test -count=1 -timeout 30m ./...

vet:
	gofmt -l . | (! grep .) && $(GO) vet ./...

bench:
	$(GO) test -run '^$$' -bench . -benchtime 3x ./prover/

# The env file of docker-compose.yml: random credentials, 127.0.0.1 binds
# (see deploy/README.md). Kept if it exists; FORCE=1 replaces it.
deploy-env:
	scripts/deploy-env.sh .env

clean:
	rm -rf $(BIN) .c2flow
