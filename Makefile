# Paddock: `make run` serves the API, `make test` runs every test. Both
# install what they need: Debian packages, a pinned static runsc, the
# template root filesystems.

SHELL := /bin/bash
.DEFAULT_GOAL := help

# gVisor, pinned: the Go module's go-branch pseudo-version.
GVISOR_VERSION ?= v0.0.0-20260905035102-160fafc42237
# Expensive artefacts live here, keyed by their inputs.
PADDOCK_CACHE ?= /var/cache/paddock
PADDOCK_STATE ?= /var/lib/paddock
GO_VERSION := $(shell go env GOVERSION)
RUNSC := $(PADDOCK_CACHE)/runsc/$(GVISOR_VERSION)-$(GO_VERSION)/runsc
BIN := $(CURDIR)/bin
LISTEN ?= 127.0.0.1:8080
GO_SOURCES := $(shell find . -name '*.go' -not -path './bin/*') go.mod go.sum $(wildcard templates/*.json) $(wildcard runner/agent/*.py runner/agent/*.js)

export PADDOCK_CACHE
export PADDOCK_RUNSC := $(RUNSC)
export PADDOCK_AGENT := $(BIN)/paddock-agent

.PHONY: help
help: ## show this help
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  \033[1m%-10s\033[0m %s\n", $$1, $$2}'

.PHONY: deps
deps: ## install the Debian packages Paddock needs (mmdebstrap)
	@command -v mmdebstrap >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null; }

.PHONY: runsc
runsc: $(RUNSC) ## build the pinned runsc (static) into the cache
$(RUNSC):
	@echo "building runsc $(GVISOR_VERSION) (static, takes ~2 min)"
	@mkdir -p $(dir $@).tmp
	CGO_ENABLED=0 GOBIN=$(dir $@).tmp go install gvisor.dev/gvisor/runsc@$(GVISOR_VERSION)
	@mv $(dir $@).tmp/runsc $@ && rmdir $(dir $@).tmp

.PHONY: build
build: $(BIN)/paddock $(BIN)/paddock-agent ## build the server and the in-sandbox agent
$(BIN)/paddock: $(GO_SOURCES)
	CGO_ENABLED=0 go build -o $@ ./cmd/paddock
$(BIN)/paddock-agent: $(GO_SOURCES)
	CGO_ENABLED=0 go build -o $@ ./cmd/paddock-agent

.PHONY: rootfs
rootfs: deps build ## build the template root filesystems (cached by template hash)
	$(BIN)/paddock rootfs --cache-dir=$(PADDOCK_CACHE)

.PHONY: install
install: deps runsc build rootfs ## everything `run` and `test` need

.PHONY: run
run: install ## serve the API on $(LISTEN) with the python and node pools warm
	$(BIN)/paddock serve --listen=$(LISTEN) --cache-dir=$(PADDOCK_CACHE) --state-dir=$(PADDOCK_STATE) --runsc=$(RUNSC) --agent=$(BIN)/paddock-agent

.PHONY: doctor
doctor: build ## check this host
	$(BIN)/paddock doctor --cache-dir=$(PADDOCK_CACHE) --runsc=$(RUNSC) --agent=$(BIN)/paddock-agent

# What the tests use from the host beyond `install`: the interpreters the
# agent's driver tests run and dpkg-deb, which reads the stub packages.
# Root, a mountable tmpfs and PID namespaces cannot be installed: without
# them the tests that need them fail under `make test`, saying so.
TEST_DEBS := python3 nodejs dpkg
.PHONY: test-deps
test-deps: ## install the Debian packages the tests use (only those missing)
	@missing=$$(for p in $(TEST_DEBS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -qx 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing for the tests:" $$missing; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

.PHONY: test
test: install test-deps ## run all tests, the real-gVisor ones included (-race)
	go vet ./...
	PADDOCK_REQUIRE_GVISOR=1 PADDOCK_ROOTFS_TEST=1 go test -race -count=1 -timeout=30m ./...
	$(MAKE) --no-print-directory fuzz FUZZTIME=30000x

# FUZZTIME is a count of inputs per target (Nx), not a duration: with a
# duration, Go 1.26's fuzz coordinator can fail a clean run with a bare
# "context deadline exceeded" as the time runs out (go.dev/issue/75804,
# fixed in Go 1.27). A count sets no deadline, so it cannot hit that race.
FUZZTIME ?= 500000x
.PHONY: fuzz
fuzz: ## a fuzz pass over the frame decoder and the run and session request parsers (FUZZTIME inputs each)
	go test -run='^$$' -fuzz=FuzzReader -fuzztime=$(FUZZTIME) -fuzzminimizetime=5s ./runner/wire/
	go test -run='^$$' -fuzz=FuzzRunRequest -fuzztime=$(FUZZTIME) -fuzzminimizetime=5s ./api/
	go test -run='^$$' -fuzz=FuzzCreateSessionRequest -fuzztime=$(FUZZTIME) -fuzzminimizetime=5s ./api/
	go test -run='^$$' -fuzz=FuzzExecuteRequest -fuzztime=$(FUZZTIME) -fuzzminimizetime=5s ./api/

.PHONY: test-unit
test-unit: ## run the tests that need no gVisor
	go test -race -count=1 ./...

# Extra flags for the bench, e.g. BENCH_FLAGS='--cold=3 --warm=20'; see
# `go run ./benchmarks -h`.
BENCH_FLAGS ?=
.PHONY: bench
bench: install ## cold vs restore vs warm vs native, throughput, memory: a table of ratios, JSON, CSV and PNG in benchmarks/out/
	go run ./benchmarks --paddock=$(BIN)/paddock --runsc=$(RUNSC) --agent=$(BIN)/paddock-agent --cache-dir=$(PADDOCK_CACHE) \
		--json=benchmarks/out/bench.json --csv=benchmarks/out/bench.csv --png=benchmarks/out/bench.png $(BENCH_FLAGS)

.PHONY: clean
clean: ## remove build outputs (not the cache)
	rm -rf $(BIN)
