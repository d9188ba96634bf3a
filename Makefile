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
# The build recipe's own digest is part of runsc's cache key: a change to
# deploy/runsc builds runsc again.
RUNSC_RECIPE := $(shell cat $(sort $(wildcard deploy/runsc/*)) | sha256sum | cut -c1-8)
RUNSC := $(PADDOCK_CACHE)/runsc/$(GVISOR_VERSION)-$(GO_VERSION)-$(RUNSC_RECIPE)/runsc
BIN := $(CURDIR)/bin
# kube-apiserver and etcd for the tests that need a real Kubernetes API
# server (discovery), built by tools/k8s/build.sh: keyed like runsc by the
# versions its modules pin, the Go version and the recipe's digest.
K8S_VERSION := $(shell awk '$$1 == "k8s.io/kubernetes" { print $$2 }' tools/k8s/apiserver/go.mod)
ETCD_VERSION := $(shell awk '$$1 == "go.etcd.io/etcd/server/v3" { print $$2 }' tools/k8s/etcd/go.mod)
K8S_RECIPE := $(shell cat tools/k8s/build.sh tools/k8s/*/go.mod tools/k8s/*/go.sum | sha256sum | cut -c1-8)
K8S_BIN := $(PADDOCK_CACHE)/k8s/$(K8S_VERSION)-etcd-$(ETCD_VERSION)-$(GO_VERSION)-$(K8S_RECIPE)
LISTEN ?= 127.0.0.1:8080
# Root filesystems are built from this Debian mirror. Empty: the Debian
# mirror in the host's apt sources (a host on another Debian release gets
# the templates' suite from that same mirror). A host without one (Ubuntu)
# must name one, e.g. PADDOCK_MIRROR=http://deb.debian.org/debian.
PADDOCK_MIRROR ?=
# Build every template from this Debian suite instead of its own (bookworm).
PADDOCK_SUITE ?=
# `make install-system` installs under $(DESTDIR)$(PREFIX) and the unit
# into $(DESTDIR)$(SYSTEMD_UNIT_DIR).
PREFIX ?= /usr/local
SYSTEMD_UNIT_DIR ?= /etc/systemd/system
GO_SOURCES := $(shell find . -name '*.go' -not -path './bin/*') go.mod go.sum $(wildcard templates/*.json) $(wildcard runner/agent/*.py runner/agent/*.js)

export PADDOCK_CACHE PADDOCK_MIRROR PADDOCK_SUITE
export PADDOCK_RUNSC := $(RUNSC)
export PADDOCK_AGENT := $(BIN)/paddock-agent
export PADDOCK_K8S_BIN := $(K8S_BIN)

.PHONY: help
help: ## show this help
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  \033[1m%-15s\033[0m %s\n", $$1, $$2}'

.PHONY: deps
deps: ## install the Debian packages Paddock needs (mmdebstrap, the Debian archive keyring, erofs-utils)
	@missing=; command -v mmdebstrap >/dev/null || missing=mmdebstrap; \
	command -v mkfs.erofs >/dev/null || missing="$$missing erofs-utils"; \
	dpkg -s debian-archive-keyring >/dev/null 2>&1 || missing="$$missing debian-archive-keyring"; \
	missing=$${missing# }; \
	[ -z "$$missing" ] || { echo "[deps] apt-get install $$missing"; apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; }

.PHONY: cc
cc: ## install a C compiler when none is found (the server's cgo build needs one)
	@command -v cc >/dev/null && [ -e /usr/include/stdio.h ] || { echo "[cc] apt-get install gcc libc6-dev"; apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gcc libc6-dev >/dev/null; }

.PHONY: runsc
runsc: $(RUNSC) ## build the pinned runsc (static) into the cache
# deploy/runsc/build.sh builds it from the module proxy's source with its
# seccomp filters precompiled, as gVisor's own release build does, and the
# Sentry's collector slowed while a sandbox starts (see the script). On a
# fresh machine its compile (about 190 s of CPU) is the largest CPU job of
# `make install`, so it runs at normal priority and the rest at a lower
# one (see install).
# No prerequisites: the recipe's digest is in the path, and a fresh
# checkout's newer file times must not rebuild a cached runsc.
$(RUNSC):
	@echo "[runsc] building $(GVISOR_VERSION) (static, seccomp filters precompiled, the Sentry collecting less while it starts, checkpoints without the EROFS dentry cache; about 2 min on 2 cores with a cold Go build cache)"
	@start=$$(date +%s); mkdir -p $(dir $@) && \
	sh deploy/runsc/build.sh $(GVISOR_VERSION) $@ && \
	echo "[runsc] built in $$(( $$(date +%s) - start )) s: $@"

# The server is built with cgo: the runc runtime's nsenter bootstrap is C
# that runs before the Go runtime when libcontainer re-executes the binary
# as a container's init. The agent stays static (CGO_ENABLED=0): it runs
# inside every sandbox, whatever libc the template has.
.PHONY: build
build: $(BIN)/paddock $(BIN)/paddock-agent ## build the server (cgo, for runc's bootstrap) and the static in-sandbox agent
# `go mod download` fetches the modules quietly first, instead of a line
# of `go build` output for each.
# -trimpath, as runsc, the agent and paddock-rootfs are built: the
# standard library's packages they share are compiled once.
$(BIN)/paddock: $(GO_SOURCES) | cc
	@go mod download
	CGO_ENABLED=1 go build -trimpath -o $@ ./cmd/paddock
# -trimpath: the agent's digest is part of every snapshot key, so two
# checkouts of one commit must build the same bytes to share images.
$(BIN)/paddock-agent: $(GO_SOURCES)
	@go mod download
	CGO_ENABLED=0 go build -trimpath -o $@ ./cmd/paddock-agent

# paddock-rootfs builds the root filesystems as `paddock rootfs` does, from
# a quarter of the server's packages and no cgo: on a fresh machine the
# downloads start once it is compiled (seconds), not the whole server.
$(BIN)/paddock-rootfs: $(GO_SOURCES)
	@go mod download
	CGO_ENABLED=0 go build -trimpath -o $@ ./cmd/paddock-rootfs

# The two images build at the same time, python's (the one python and
# python-slim share, which the first run of most users needs, and the
# larger) at a higher priority than node's.
.PHONY: rootfs rootfs-python rootfs-node
rootfs: rootfs-python rootfs-node ## build the template root filesystems at the same time (cached by template hash)
rootfs-python: deps $(BIN)/paddock-rootfs
	nice -n 5 $(BIN)/paddock-rootfs --cache-dir=$(PADDOCK_CACHE) python python-slim
rootfs-node: deps $(BIN)/paddock-rootfs
	nice -n 15 $(BIN)/paddock-rootfs --cache-dir=$(PADDOCK_CACHE) node

# runsc, the root filesystems and the server do not depend on each other:
# a sub-make builds them at the same time. On a fresh machine they share
# the 2 cores: runsc's compile runs at normal priority, the server's and
# python's root filesystem at nice 5, node's at nice 15.
.PHONY: install
install: ## everything `run` and `test` need: runsc, the binaries and the root filesystems, built side by side
	@$(MAKE) --no-print-directory -j4 runsc rootfs niced-build

.PHONY: niced-build
niced-build:
	@nice -n 5 $(MAKE) --no-print-directory build

# The paths here are the ones deploy/paddock.service names (PREFIX and the
# cache and state directories rewritten when they are not the defaults).
.PHONY: install-system
install-system: build runsc ## install the binaries, runsc and deploy/paddock.service for systemd (run `make install` first; DESTDIR, PREFIX)
	install -D -m 0755 $(BIN)/paddock $(DESTDIR)$(PREFIX)/bin/paddock
	install -D -m 0755 $(BIN)/paddock-agent $(DESTDIR)$(PREFIX)/bin/paddock-agent
	install -D -m 0755 $(RUNSC) $(DESTDIR)$(PREFIX)/lib/paddock/runsc
	install -d -m 0755 $(DESTDIR)$(PADDOCK_CACHE)
	install -d -m 0700 $(DESTDIR)$(PADDOCK_STATE)
	install -d -m 0755 $(DESTDIR)$(SYSTEMD_UNIT_DIR)
	sed -e 's|/usr/local/|$(PREFIX)/|g' -e 's|/var/cache/paddock|$(PADDOCK_CACHE)|g' -e 's|/var/lib/paddock|$(PADDOCK_STATE)|g' \
		$(if $(PADDOCK_MIRROR),-e 's|^#Environment=PADDOCK_MIRROR=.*|Environment=PADDOCK_MIRROR=$(PADDOCK_MIRROR)|') \
		deploy/paddock.service > $(DESTDIR)$(SYSTEMD_UNIT_DIR)/paddock.service
	@echo "installed; start it with: systemctl daemon-reload && systemctl enable --now paddock"

# `run` serves as soon as runsc and the server are built: on a fresh
# machine the root filesystems are still building beside it then, and each
# template joins when its own is done (the server waits on that build's
# lock; until then the template's requests get 503 template_building and
# /readyz names the templates that serve).
.PHONY: run
run: ## serve the API on $(LISTEN) with the python, python-slim and node pools warm (installing first what is missing)
	@$(MAKE) --no-print-directory -j4 rootfs serve

.PHONY: serve
serve: runsc niced-build deps ## serve with what is built; a missing root filesystem is built by the server while it serves the others
	$(BIN)/paddock serve --listen=$(LISTEN) --cache-dir=$(PADDOCK_CACHE) --state-dir=$(PADDOCK_STATE) --runsc=$(RUNSC) --agent=$(BIN)/paddock-agent

.PHONY: doctor
doctor: build ## check this host
	$(BIN)/paddock doctor --cache-dir=$(PADDOCK_CACHE) --runsc=$(RUNSC) --agent=$(BIN)/paddock-agent

# What the tests use from the host beyond `install`: dpkg-deb, which reads
# the stub packages, and systemd-analyze, which checks the installed unit.
# The agent's driver tests run the templates' own interpreters from their
# root filesystems, not the host's. Root, a mountable tmpfs, overlayfs and
# PID namespaces cannot be installed: without them the tests that need them
# fail under `make test`, saying so. Debian's Jupyter Server and classic
# Notebook run in gateway mode against Paddock's Jupyter door, the Notebook
# in headless Chromium (and Jupyter Server with ipykernel is the native
# stack `make bench` compares against). iproute2 builds the egress tests'
# stand-in internet in a network namespace.
TEST_DEBS := dpkg systemd iproute2 python3-jupyter-server python3-ipykernel jupyter-notebook chromium python3-nbclient python3-nbconvert jupyter-nbconvert postgresql
.PHONY: test-deps
test-deps: apiserver ## install the Debian packages the tests use (only those missing) and build kube-apiserver and etcd
	@missing=$$(for p in $(TEST_DEBS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -qx 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing for the tests:" $$missing; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

.PHONY: apiserver
apiserver: $(K8S_BIN)/kube-apiserver ## build kube-apiserver and etcd from the module proxy into the cache (for discovery's tests)
# No prerequisites, as for runsc: the key is in the path. The compile is
# long (kube-apiserver took 615 s of wall time on 2 cores with a cold Go
# build cache, etcd 45 s), so it runs niced.
$(K8S_BIN)/kube-apiserver:
	@echo "[k8s] building kube-apiserver $(K8S_VERSION) and etcd $(ETCD_VERSION) (about 11 min on 2 cores with a cold Go build cache)"
	@start=$$(date +%s); mkdir -p $(dir $(K8S_BIN)) && \
	nice -n 10 sh tools/k8s/build.sh $(K8S_BIN) && \
	echo "[k8s] built in $$(( $$(date +%s) - start )) s: $(K8S_BIN)"

# The real clients the doors are tested against (MCP, E2B, the AI SDK),
# pinned in doors/clients/package-lock.json and installed with npm ci. The
# machine's Node.js is used; Debian's nodejs is installed only when none is.
CLIENTS := doors/clients/node_modules/.package-lock.json
.PHONY: clients
clients: $(CLIENTS) ## install the door clients' npm packages from the committed lockfile
$(CLIENTS): doors/clients/package-lock.json doors/clients/package.json
	@command -v node >/dev/null && command -v npm >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null; }
	cd doors/clients && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# go test's -timeout is per test binary: cmd/paddock's end-to-end suite
# (every door with its real clients, on both runtimes) takes 6-7 min here,
# and another machine of this kind ran runsc 2-3x slower.
.PHONY: test
test: install test-deps clients ## run all tests, the real-gVisor and real-runc ones included (-race)
	CGO_ENABLED=1 go vet ./...
	CGO_ENABLED=1 PADDOCK_REQUIRE_GVISOR=1 PADDOCK_ROOTFS_TEST=1 PADDOCK_REQUIRE_K8S=1 go test -race -count=1 -timeout=60m ./...
	$(MAKE) --no-print-directory fuzz FUZZTIME=30000x

# FUZZTIME is a count of inputs per target (Nx), not a duration: with a
# duration, Go 1.26's fuzz coordinator can fail a clean run with a bare
# "context deadline exceeded" as the time runs out (go.dev/issue/75804,
# fixed in Go 1.27). A count sets no deadline, so it cannot hit that race.
FUZZTIME ?= 500000x
.PHONY: fuzz
fuzz: ## a fuzz pass over the frame decoder, the run request parser and the core's session checks (FUZZTIME inputs each)
	go test -run='^$$' -fuzz=FuzzReader -fuzztime=$(FUZZTIME) -fuzzminimizetime=5s ./runner/wire/
	go test -run='^$$' -fuzz=FuzzRunRequest -fuzztime=$(FUZZTIME) -fuzzminimizetime=5s ./api/
	go test -run='^$$' -fuzz=FuzzCreateSession -fuzztime=$(FUZZTIME) -fuzzminimizetime=5s ./core/
	go test -run='^$$' -fuzz=FuzzExecute -fuzztime=$(FUZZTIME) -fuzzminimizetime=5s ./core/

.PHONY: test-unit
test-unit: ## run the tests that need no gVisor
	go test -race -count=1 ./...

# Extra flags for the bench, e.g. BENCH_FLAGS='--cold=3 --warm=20'; see
# `go run ./benchmarks -h`.
BENCH_FLAGS ?=
.PHONY: bench
bench: install clients test-deps ## cold vs restore vs warm vs native, steady-state load at 1-16 clients against raw runsc, memory, Jupyter cell round trips (Paddock vs native Jupyter Server), egress downloads through the proxy vs the host (BENCH_FLAGS=--egress-only: that phase alone, about 2 min; 2026-12-07: 0.29 of the host's 64 MiB throughput, 0.36 with no proxy), a gateway over three local nodes vs one node (BENCH_FLAGS=--gateway-only, about 2 min; 2026-12-07: 0.28 ms added at the p50): a table of ratios, JSON, CSV and PNG in benchmarks/out/ (about 48 min in all)
	go run ./benchmarks --paddock=$(BIN)/paddock --runsc=$(RUNSC) --agent=$(BIN)/paddock-agent --cache-dir=$(PADDOCK_CACHE) \
		--json=benchmarks/out/bench.json --csv=benchmarks/out/bench.csv --png=benchmarks/out/bench.png $(BENCH_FLAGS)

.PHONY: clean
clean: ## remove build outputs (not the cache)
	rm -rf $(BIN)
