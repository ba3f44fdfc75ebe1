# sbxrun — `make help` lists the targets.
GO      ?= go
TAGS    ?= seccomp,urfave_cli_no_docs
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
PREFIX  ?= /usr/local
export PATH := $(PATH):/usr/local/go/bin

.PHONY: help build test test-root integration conformance cross lint bench fuzz golden demo install clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

# Static: the process_exec=deny exec shim is a sealed copy of this binary
# run inside the container's rootfs, where no host library exists.
build: ## build bin/sbxrun (cgo, -tags seccomp, statically linked)
	CGO_ENABLED=1 $(GO) build -tags $(TAGS),netgo,osusergo -ldflags '$(LDFLAGS) -extldflags=-static' -o bin/sbxrun ./cmd/sbxrun

test: ## unit, golden, fuzz-corpus and CLI tests (no root needed; root tests skip)
	$(GO) test -tags $(TAGS) -count=1 ./...

test-root: ## the full suite as root: integration tests may not skip
	SBXRUN_REQUIRE_ROOT=1 $(GO) test -tags $(TAGS) -count=1 ./...

integration: ## only the root integration tests (real containers)
	SBXRUN_REQUIRE_ROOT=1 $(GO) test -tags $(TAGS) -count=1 -v ./tests/...

conformance: build ## OCI runtime-tools validation: sbxrun vs the system runc (root)
	hack/conformance.sh

cross: ## build and vet for darwin, build for arm64
	GOOS=darwin $(GO) build ./...
	GOOS=darwin $(GO) vet ./...
	GOARCH=arm64 $(GO) build ./...

lint: ## gofmt must be clean, go vet must pass
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet -tags $(TAGS) ./...

bench: build ## compile benchmarks, `sbxrun spec` time, container start and seccomp overhead vs runc/bwrap (root)
	$(GO) test -tags $(TAGS) -run XXX -bench . -benchmem ./policy ./specgen ./enforce
	hack/bench-spec.sh bin/sbxrun
	hack/bench.sh bin/sbxrun

fuzz: ## fuzz each target for FUZZTIME (default 60s)
	$(GO) test -run XXX -fuzz FuzzConfig -fuzztime $${FUZZTIME:-60s} ./policy
	$(GO) test -run XXX -fuzz FuzzDecode -fuzztime $${FUZZTIME:-60s} ./profiles
	$(GO) test -tags $(TAGS) -run XXX -fuzz FuzzParseAnnotations -fuzztime $${FUZZTIME:-60s} ./engine
	$(GO) test -run XXX -fuzz FuzzReader -fuzztime $${FUZZTIME:-60s} ./seatbelt
	$(GO) test -tags $(TAGS) -run XXX -fuzz FuzzHookState -fuzztime $${FUZZTIME:-60s} ./hooks

golden: ## rewrite golden files and artifacts after an intended change
	$(GO) test -tags $(TAGS) -count=1 ./specgen -update

demo: ## the demo (installs packages; run as root)
	hack/demo.sh

install: build ## install bin/sbxrun into $(PREFIX)/bin
	install -m 0755 bin/sbxrun $(PREFIX)/bin/sbxrun

clean: ## remove build output
	rm -rf bin
