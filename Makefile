# catchup: make help lists the targets.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

GO            ?= go
KAFKA_VERSION ?= 4.4.0
BIN           := bin

.PHONY: help
help: ## list the targets
	@grep -E '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

.PHONY: build
build: ## build the catchup CLI into bin/
	$(GO) build -trimpath -o $(BIN)/catchup ./cmd/catchup

.PHONY: demo
demo: build ## copy between two in-process Kafka clusters in windows, kill a run, resume, verify
	$(BIN)/catchup demo

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error

.PHONY: deps
deps: node_modules/.package-lock.json ## install the test servers' dependencies (dynalite)
	$(GO) mod download

# internal/brokers needs real brokers: test/kafka/it.sh runs it (with internal/e2e again).
HERMETIC = $$($(GO) list ./... | grep -v /internal/brokers)

.PHONY: test
test: deps ## vet, the unit and kfake end-to-end suites with -race, then the real-Kafka suite
	$(GO) vet ./...
	CATCHUP_REQUIRE_DYNAMODB=1 $(GO) test -race -count=1 $(HERMETIC)
	KAFKA_VERSION=$(KAFKA_VERSION) test/kafka/it.sh

.PHONY: test-unit
test-unit: deps ## only the hermetic suites (no real brokers)
	$(GO) vet ./...
	CATCHUP_REQUIRE_DYNAMODB=1 $(GO) test -race -count=1 $(HERMETIC)

.PHONY: crashtest
crashtest: deps ## SIGKILL the real binary 500 times per store at random moments, then compare target and source
	CATCHUP_REQUIRE_DYNAMODB=1 CATCHUP_CRASH_KILLS=$${CATCHUP_CRASH_KILLS:-500} $(GO) test -count=1 -timeout 60m -run Crash -v ./internal/crashtest/

.PHONY: test-kafka39
test-kafka39: deps ## the real-Kafka suite against Apache Kafka 3.9
	KAFKA_VERSION=3.9.2 test/kafka/it.sh

GOLANGCI_LINT_VERSION := v2.15.0

$(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION):
	GOBIN=$(CURDIR)/$(BIN)/tmp $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(BIN)/tmp/golangci-lint $@ && rmdir $(BIN)/tmp

.PHONY: lint
lint: $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION) ## golangci-lint (vet, staticcheck, errcheck, revive, gocritic, depguard), shellcheck
	$(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION) run ./...
	if command -v shellcheck >/dev/null; then shellcheck -x test/kafka/*.sh .ci/run; else echo "shellcheck not installed: skipped"; fi

.PHONY: bench
bench: ## Go benchmarks: copy between kfake clusters next to produce-only and fetch-only
	$(GO) test -run XXX -bench . -benchtime 3x -count 3 ./internal/pipeline/

.PHONY: clean
clean: ## remove built binaries
	rm -rf $(BIN)
