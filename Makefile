# cornus — build, test, demo. `make help` lists targets.
SHELL := /bin/bash
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/cornus-dev/cornus/internal/buildinfo.version=$(VERSION)
# Fuzzing runs each target for a fixed count of inputs (scripts/test.sh);
# FUZZTIME=2m (or 1000000x) overrides all.
FUZZTIME ?=
export CGO_ENABLED := 0

.PHONY: help build dist setup test check unit e2e-backends fuzz drills stress demo bench scale clean

help: ## list targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

build: ## build the static binary into bin/cornus
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/cornus ./cmd/cornus

dist: ## build cornus for linux, macOS and Windows (amd64, arm64) into bin/dist
	GO='$(GO)' LDFLAGS='$(LDFLAGS)' scripts/dist.sh

setup: ## install and start what tests and the demo need (docker.io, busybox-static)
	scripts/setup.sh

# Each stage runs even when another failed; the summary lists every
# stage's result, time and failing tests (logs in bin/test-logs).
TESTSH = GO='$(GO)' FUZZTIME='$(FUZZTIME)' scripts/test.sh

test: ## everything CI runs (.ci/run): check, setup, unit, e2e-backends, fuzz, drills
	@$(TESTSH)

check: ## gofmt, go vet and golangci-lint (.golangci.yml)
	@$(TESTSH) check

unit: ## unit, golden and daemon tests
	@$(TESTSH) unit

e2e-backends: ## the e2e package (CLI, proxy with real clients, drills) again on each other backend, in lanes (scripts/test.sh)
	@$(TESTSH) e2e

fuzz: ## run every fuzz target (a fixed count of inputs each; FUZZTIME overrides)
	@$(TESTSH) fuzz

drills: ## the test cluster's fault drills (kubelet restart, API server outage) under the in-cluster server
	@$(TESTSH) drills

stress: ## make test three times in a row, each on a fresh clone of HEAD, beside stress-ng --cpu 2
	scripts/stress.sh 3

demo: build ## bring the example project up on the default backend (sets up dockerd only)
	scripts/setup.sh demo
	$(GO) run ./hack/mkimage -ref cornus-demo/busybox:1 -o bin/demo-image.tar
	./bin/cornus image load -i bin/demo-image.tar
	./bin/cornus compose -f examples/shop/compose.yaml up -d --wait
	./bin/cornus compose -f examples/shop/compose.yaml ps
	@echo
	@echo "shop is up: open http://127.0.0.1:$${WEB_PORT:-18080}/"
	@echo "stop it with: ./bin/cornus compose -f examples/shop/compose.yaml down -v"

bench: build setup ## cornus vs docker compose v5.6.0 on the same daemon, client-local mounts vs sshfs (median ratios)
	$(GO) run ./hack/mkimage -ref cornus-bench/busybox:1 -o bin/bench-image.tar
	./bin/cornus image load -i bin/bench-image.tar
	CORNUS_DEPLOY_BACKEND=containerd CORNUS_CONTAINERD_ADDRESS=/run/cornus-containerd/containerd.sock ./bin/cornus image load -i bin/bench-image.tar
	CORNUS_DEPLOY_BACKEND=bare ./bin/cornus image load -i bin/bench-image.tar
	GOMAXPROCS=1 $(GO) test ./egress -run '^$$' -bench 'Decide' -benchtime 2s
	$(GO) test ./server -run '^$$' -bench 'Egress' -benchtime 5x
	$(GO) run ./hack/bench -containerd -bare -serve -mounts -builds "$$(scripts/buildx.sh)" -registry "$$(scripts/distribution.sh)" -cornus bin/cornus -compose "$$(scripts/docker-compose.sh)" $(BENCHFLAGS)

scale: build setup ## 500 containers: proxy vs dockerd for docker ps/compose ps/up/down, cornus vs docker compose, down after a daemon restart (~15 min)
	$(GO) run ./hack/mkimage -ref cornus-bench/busybox:1 -o bin/bench-image.tar
	./bin/cornus image load -i bin/bench-image.tar
	$(GO) run ./hack/bench -only scale -runs 5 -cornus bin/cornus -compose "$$(scripts/docker-compose.sh)" $(BENCHFLAGS)

clean: ## remove build output
	rm -rf bin
