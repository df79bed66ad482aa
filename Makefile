# promptkit-sandbox — build, test and run.
#
#   make run    build everything and start sandboxd serving WORKSPACE (default
#               the current directory) on 127.0.0.1:7424; it prints the MCP
#               URL, a token and a client config. Ctrl-C stops it.
#   make demo   run every example hook on its sample payloads (direct sandbox,
#               then the Docker example: docker_run and docker_exec)
#   make test   install what is missing, then every test with -race
#   make help   every target, a line each
#   make unit   the edit-compile-test loop: go test -short, under a minute on two cores;
#               no Docker, no kubectl, no apt-get, no plugin builds (the
#               tests that need them skip and say so; make test runs them)
#
# run, demo and test work on a fresh Debian machine with Go: missing Debian
# packages are installed with apt-get when running as root, Go tools with
# go install.

SHELL      := /bin/bash
GO         ?= go
VERSION    ?= 0.1.0
BIN        := bin
GOBIN      := $(shell $(GO) env GOPATH)/bin
LDFLAGS    := -s -w -X main.version=$(VERSION)
FUZZTIME   ?= 60s
STATICCHECK_VERSION := v0.8.2
GOSEC_VERSION       := v2.30.0
# gopls runs in sandboxd's language tests and in its image (a test keeps
# the two equal); v0.24 needs Go 1.27.
GOPLS_VERSION := v0.23.0

# Each plugin is versioned on its own; make build puts it at
# bin/plugins/promptkit-sandbox-NAME_vVERSION.
DOCKER_PLUGIN_VERSION  ?= 0.1.0
KUBECTL_PLUGIN_VERSION ?= 0.1.0

# Debian packages the tests and examples need, by the command they provide.
DEB_DEPS := python3:python3 gcc:gcc protoc:protobuf-compiler kubectl:kubernetes-client rg:ripgrep git:git bash:bash
# ...and those only the tests need (sandboxd's CORS test drives a real browser;
# its checks run Debian's pytest (pytest-3 stands for /usr/bin/python3 -m
# pytest), flake8, mypy and pyflakes, tsc and eslint; search_code runs
# universal-ctags; render_diagram runs Graphviz's dot; cargo and node come
# with the build machine).
# find_definition, find_references and rename_symbol run pylsp.
TEST_DEB_DEPS := /usr/include/alsa/asoundlib.h:libasound2-dev chromium:chromium pytest-3:python3-pytest flake8:flake8 mypy:mypy pyflakes3:pyflakes3 tsc:node-typescript eslint:eslint ctags:universal-ctags dot:graphviz pylsp:python3-pylsp

# make run serves this directory; SANDBOXD_ARGS adds flags (see sandboxd --help).
WORKSPACE     ?= $(CURDIR)
SANDBOXD_ARGS ?=

# PromptKit's modules, which only the adapter module (promptkit/) needs,
# are not on the module proxy our build machines reach: there
# ../shared/upstream/goproxy serves them as files, with the hashes the
# public proxy has. Where it does not exist the usual proxy serves them.
UPSTREAM := $(wildcard $(CURDIR)/../shared/upstream/goproxy)
ifneq ($(UPSTREAM),)
export GOPROXY   := file://$(UPSTREAM),$(shell $(GO) env GOPROXY)
export GONOSUMDB := github.com/AltairaLabs/PromptKit,github.com/AltairaLabs/promptarena
endif

# The adapter is a module of its own, so that the core and the plugins
# never depend on PromptKit; ./... stops at its go.mod. So is the arena
# source beside it, so that the adapter never pulls in PromptArena.
ADAPTER := promptkit
ARENA   := promptkit/arena

# Pinned generators for shared/proto (shared/proto/generate.sh checks them).
TOOLS               := $(CURDIR)/bin/tools
PROTOC_GEN_GO       := v1.36.12
PROTOC_GEN_GO_GRPC  := v1.5.1


.PHONY: help all build run demo demo-docker example-image sandboxd-image sandboxd-images test unit deps test-deps docker images tools generate bench lint fuzz clean

.DEFAULT_GOAL := all

# help lists the targets: each rule's "## " comment is its line.
help: ## list the targets
	@grep -hE '^[a-z][a-z-]*:[^=]*## ' $(MAKEFILE_LIST) | sed 's/:[^#]*## /\t/' | sort | expand -t 18

all: build ## the same as build

build: ## build promptkit-sandbox, its plugins and sandboxd (with its D2 helper) into bin/
	@mkdir -p $(BIN)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/promptkit-sandbox ./cmd/promptkit-sandbox
	@mkdir -p $(BIN)/plugins && chmod 755 $(BIN)/plugins
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w -X main.version=$(DOCKER_PLUGIN_VERSION)' \
		-o $(BIN)/plugins/promptkit-sandbox-docker_v$(DOCKER_PLUGIN_VERSION) ./cmd/promptkit-sandbox-docker
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w -X main.version=$(KUBECTL_PLUGIN_VERSION)' \
		-o $(BIN)/plugins/promptkit-sandbox-kubectl_v$(KUBECTL_PLUGIN_VERSION) ./cmd/promptkit-sandbox-kubectl
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/sandboxd ./cmd/sandboxd
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/sandboxd-diagram ./cmd/sandboxd/sandboxd-diagram

# run: sandboxd, the codegen MCP daemon, serving WORKSPACE until Ctrl-C.
# As root on a checkout root owns, the agent's commands run as UID 65532,
# given the checkout by ACLs (docs/sandboxd.md, "The agent's user").
run: deps build ## build, then serve WORKSPACE with sandboxd on 127.0.0.1:7424 (Ctrl-C stops it)
	exec $(BIN)/sandboxd --workspace '$(WORKSPACE)' $(SANDBOXD_ARGS)

# demo: the example hooks through the direct sandbox, then the Docker
# example through the plugin, one decision per line.
demo: deps build docker ## run every example hook on its sample payloads (direct, then Docker)
	./examples/demo.sh $(BIN)/promptkit-sandbox
	@echo
	./examples/docker/demo.sh $(BIN)/promptkit-sandbox $(BIN)/plugins

# demo-docker: only the Docker example (examples/docker).
demo-docker: build docker example-image ## run only the Docker example
	./examples/docker/demo.sh $(BIN)/promptkit-sandbox $(BIN)/plugins

# example-image builds the Docker example's hook image FROM scratch.
example-image: docker ## build the Docker example's hook image FROM scratch
	./examples/docker/build-image.sh

# One package at a time: the Docker and Kubernetes suites each fill two
# cores with containers and execs of their own, and run side by side
# they starved each other's execs past their timeouts (a fresh clone's
# run took 21 min with both at once, red on load alone).
# The Docker suites run one test at a time (-parallel 1): a container
# start costs the engine a core on fuse-overlayfs, and a slow engine had
# timed-out cells taking 12 s to start a container; one at a time took
# 233 s against 200 s here.
# TestLargeInputAllocations counts allocations, which mean nothing under
# -race (sync.Pool drops items there): it runs once more without it.
test: test-deps docker tools lint images $(GOBIN)/gopls kube-deps slow-setup ## install what is missing, then every test with -race
	$(GO) test -race -p 1 -timeout 30m -count 1 $$($(GO) list ./... | grep -v '/cmd/promptkit-sandbox-docker\|/internal/dockerbox')
	$(GO) test -race -p 1 -parallel 1 -timeout 30m -count 1 ./cmd/promptkit-sandbox-docker/... ./internal/dockerbox/...
	$(GO) test -count 1 -run '^TestLargeInputAllocations$$' ./hooks/wire/
	cd $(ADAPTER) && $(GO) test -race -p 1 -timeout 30m -count 1 ./...
	cd $(ARENA) && $(GO) test -race -p 1 -timeout 30m -count 1 ./...

# unit installs nothing and starts nothing: tests that need Docker, the
# kubectl binary or a plugin build skip under -short, and slow repetitions
# run a few rounds. It still needs what the host tests run (python3, rg,
# git, bash; make deps installs them). No -race: it takes about 1.5 times
# the CPU (measured: 118 s against 77 s), past a minute on two cores;
# make test runs everything with it. -p is twice the CPUs: by default go
# test runs one package's tests per CPU, and a package that mostly waits
# out timeouts (shell's, resident's retry interval) then leaves its CPU
# idle; twice as many keep them busy (measured on two quiet cores: 76 s
# against 100 s).
#
# The two longest packages are named first: go test starts packages in
# the order given, and sorted last they began 36 s in and ended a 60 s
# run (41 s for the core module with them first). The adapter's module
# runs beside the core's (its own go command), not after it.
UNIT_P = $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) * 2 )))
UNIT_FIRST = ./shared/shell ./cmd/sandboxd/internal/server
unit: ## the inner loop: go test -short, no Docker, no Kubernetes, no installs
	@$(GO) test -short -p $(UNIT_P) -timeout 5m -count 1 $(UNIT_FIRST) ./... & core=$$!; \
	(cd $(ADAPTER) && $(GO) test -short -p $(UNIT_P) -timeout 5m -count 1 ./... && \
	 cd $(CURDIR)/$(ARENA) && CGO_ENABLED=0 $(GO) test -short -p $(UNIT_P) -timeout 5m -count 1 ./...); adapter=$$?; \
	wait $$core; core=$$?; \
	if [ $$core -ne 0 ] || [ $$adapter -ne 0 ]; then echo "make unit: FAIL (core module exit $$core, adapter module exit $$adapter)" >&2; exit 1; fi

# tools installs the pinned protoc plugins into bin/tools.
tools: $(TOOLS)/protoc-gen-go $(TOOLS)/protoc-gen-go-grpc ## install the pinned protoc generators into bin/tools

$(TOOLS)/protoc-gen-go:
	GOFLAGS= GOBIN=$(TOOLS) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO)

$(TOOLS)/protoc-gen-go-grpc:
	GOFLAGS= GOBIN=$(TOOLS) $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC)

# generate regenerates shared/proto byte for byte (TestGeneratedCodeIsFresh
# fails when the committed code is stale).
generate: deps tools ## regenerate shared/proto byte for byte
	shared/proto/generate.sh

# deps installs what is missing and nothing else.
deps: ## install the Debian packages run and demo need
	@$(call install_debs,$(DEB_DEPS))

test-deps: ## install the Debian packages the tests need
	@$(call install_debs,$(DEB_DEPS) $(TEST_DEB_DEPS))

# install_debs installs the Debian packages of CMD:PACKAGE pairs whose
# command is missing; a CMD that is an absolute path is a file the
# package installs (libasound2-dev's header, which PromptArena's engine
# links through cgo).
define install_debs
missing=""; for dep in $(1); do \
	cmd=$${dep%%:*}; pkg=$${dep##*:}; \
	case $$cmd in /*) [ -e $$cmd ] ;; *) command -v $$cmd >/dev/null 2>&1 ;; esac || missing="$$missing $$pkg"; \
done; \
if [ -n "$$missing" ]; then \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing:$$missing"; \
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $$missing; \
	else \
		echo "missing:$$missing — install them (apt-get install$$missing) or run make as root" >&2; exit 1; \
	fi; \
fi
endef

# docker installs Docker and busybox-static when missing and starts an
# engine if none answers (scripts/ensure-docker.sh).
docker: ## install Docker if missing and start an engine if none answers
	@scripts/ensure-docker.sh

# images builds the Docker test images that are not built yet (FROM scratch,
# tagged by a hash of their content; see internal/dockertest). Tests build
# them on demand too; building them once up front keeps parallel test
# binaries from each building the same image.
images: docker example-image ## build the Docker test images that are not built yet
	$(GO) run ./internal/dockertest/cmd/build-images

# sandboxd-image builds promptkit/sandboxd:VERSION (Go) from Debian's
# packages (mmdebstrap, docker import) unless the engine has it built from
# the same inputs (internal/sandboxdimage; docs/sandboxd.md, "In a
# container"). LANGUAGES picks another language set, e.g.
# LANGUAGES=python or LANGUAGES=go,python (one image serving both);
# sandboxd-images builds one image per language (go, python, node, rust).
LANGUAGES ?= go
sandboxd-image: docker ## build promptkit/sandboxd:VERSION for LANGUAGES (default go)
	@$(call install_debs,mmdebstrap:mmdebstrap)
	$(GO) run ./internal/sandboxdimage/cmd/build-sandboxd-image -version $(VERSION) -languages $(LANGUAGES)

sandboxd-images: docker ## build one sandboxd image per language
	@$(call install_debs,mmdebstrap:mmdebstrap)
	$(GO) run ./internal/sandboxdimage/cmd/build-sandboxd-image -version $(VERSION) -each

bench: ## run every benchmark, -count 5
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./...
	cd $(ADAPTER) && $(GO) test -run '^$$' -bench . -benchmem -count 5 ./...

$(GOBIN)/staticcheck:
	GOFLAGS= $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

$(GOBIN)/gosec:
	GOFLAGS= $(GO) install github.com/securego/gosec/v2/cmd/gosec@$(GOSEC_VERSION)

# gosec fails lint on any finding. A finding that is by design carries
# "// #nosec Gxxx -- why" on its line (lint refuses a #nosec without a
# rule and a reason). Excluded here, and only here:
#   G204 (a program started from a variable): starting programs is the
#        product (the agent's commands, hooks, plugins, sandboxd's tools),
#        always from an argv (through a shell only the agent's own command
#        lines, written for one); a file name or pattern from the agent
#        reaches a tool where it cannot pass for an option
#        (after "--" or --end-of-options, as "--flag=value" or "./name").
#        G702, which follows tainted input into an exec, stays on.
#   generated files: protoc's code (shared/proto), kept byte for byte by
#        TestGeneratedCodeIsFresh, cannot carry annotations.
#   testdata: fixtures, some not Go that builds (as go build ./... skips).
GOSEC_FLAGS := -quiet -exclude=G204 -exclude-generated -exclude-dir=testdata

# gopls, for sandboxd's find_definition, find_references and
# rename_symbol tests (pylsp comes from Debian: TEST_DEB_DEPS).
$(GOBIN)/gopls:
	GOFLAGS= $(GO) install golang.org/x/tools/gopls@$(GOPLS_VERSION)

# lint also fails on a tracked ELF binary or a tracked file over 1 MiB
# (scripts/check-tracked-files.sh names it).
lint: $(GOBIN)/staticcheck $(GOBIN)/gosec ## gofmt, go vet, staticcheck, gosec, and the tracked-files check
	@scripts/check-tracked-files.sh
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@out=$$(git grep -n '#nosec' -- '*.go' | grep -v '// #nosec G[0-9]\{3\}\( G[0-9]\{3\}\)* -- [^ ]'); if [ -n "$$out" ]; then echo "#nosec needs its rules and a reason (// #nosec G304 -- why):"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GOBIN)/staticcheck ./...
	$(GOBIN)/gosec $(GOSEC_FLAGS) ./...
	cd $(ADAPTER) && $(GO) vet ./... && $(GOBIN)/staticcheck ./... && $(GOBIN)/gosec $(GOSEC_FLAGS) ./...
	cd $(ARENA) && $(GO) vet ./... && $(GOBIN)/staticcheck ./... && $(GOBIN)/gosec $(GOSEC_FLAGS) ./...

# fuzz runs every fuzz target for FUZZTIME each.
fuzz: ## run every fuzz target for FUZZTIME each
	@set -e; for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "== $$pkg $$target"; \
			$(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done

clean: ## remove bin/
	rm -rf $(BIN)

# --- Kubernetes (internal/kubecluster) --------------------------------------
# A real single-node Kubernetes on 127.0.0.1, built from the Go module proxy
# (first build: about 10 minutes on two cores, then cached in
# ~/.cache/promptkit-sandbox/kube) with Debian's etcd, containerd, runc and
# CNI plugins. make test installs and builds it up front, as it does the
# Docker images; the tests start and stop it themselves.
#   make kube-up     start one for yourself; it prints its KUBECONFIG
#   make kube-down   stop make kube-up's cluster and remove everything it made
KUBECLUSTER := $(GO) run ./internal/kubecluster/cmd/kubecluster

.PHONY: kube-deps kube-build kube-up kube-down slow-setup

# slow-setup builds the sandboxd images (one per language: the tests run
# each) and the Kubernetes binaries side by side: the images wait mostly
# on downloads and dpkg, the Kubernetes build on the compiler, and one
# after the other they made a cold make test minutes longer.
slow-setup: docker kube-deps ## build the sandboxd images and Kubernetes side by side
	@$(call install_debs,mmdebstrap:mmdebstrap)
	$(MAKE) --no-print-directory -j2 sandboxd-images kube-build

kube-deps: ## install the Kubernetes test cluster's Debian packages
	$(KUBECLUSTER) deps

kube-build: ## build the Kubernetes binaries the test cluster runs (cached)
	$(KUBECLUSTER) build

kube-up: kube-deps kube-build docker ## start a single-node Kubernetes for yourself; prints its KUBECONFIG
	$(KUBECLUSTER) up

kube-down: ## stop make kube-up's cluster and remove everything it made
	$(KUBECLUSTER) down
