# cornus — build, test, demo. `make help` lists targets.
SHELL := /bin/bash
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/cornus-dev/cornus/internal/buildinfo.version=$(VERSION)
FUZZTIME ?= 30s
export CGO_ENABLED := 0

.PHONY: help build test check unit fuzz demo clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

build: ## build the static binary into bin/cornus
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/cornus ./cmd/cornus

test: check unit fuzz ## everything CI runs (.ci/run)

check: ## gofmt and go vet
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

unit: ## unit, golden and daemon tests
	$(GO) test -count=1 ./...

fuzz: ## run every fuzz target for FUZZTIME each
	$(GO) test ./spec -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME)
	$(GO) test ./compose -run '^$$' -fuzz '^FuzzStandardizeJSONC$$' -fuzztime $(FUZZTIME)
	$(GO) test ./translate -run '^$$' -fuzz '^FuzzComposeToSpec$$' -fuzztime $(FUZZTIME)

demo: build ## print the native spec of the example project
	./bin/cornus compose -f examples/shop/compose.yaml config

clean: ## remove build output
	rm -rf bin
