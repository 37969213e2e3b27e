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

# The build's identity for catchup version (internal/version): the linker
# sets it, since GOFLAGS=-buildvcs=false or a source tarball leaves the Go
# toolchain without a VCS stamp.
VERSION_PKG := github.com/kafka-catchup/catchup/internal/version
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
VERSION_LDFLAGS := -X $(VERSION_PKG).version=$(VERSION) -X $(VERSION_PKG).commit=$(shell git rev-parse --short HEAD 2>/dev/null) \
	-X $(VERSION_PKG).date=$(shell date -u +%Y-%m-%dT%H:%M:%SZ)

.PHONY: build
build: ## build the catchup CLI into bin/
	$(GO) build -trimpath -ldflags "$(VERSION_LDFLAGS)" -o $(BIN)/catchup ./cmd/catchup

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
test: deps ## vet, the unit and kfake end-to-end suites with -race, each fuzz target for 5s, then the real-Kafka suite
	$(GO) vet ./...
	CATCHUP_REQUIRE_DYNAMODB=1 $(GO) test -race -count=1 $(HERMETIC)
	$(MAKE) --no-print-directory fuzz
	KAFKA_VERSION=$(KAFKA_VERSION) test/kafka/it.sh

.PHONY: test-unit
test-unit: deps ## only the hermetic suites (no real brokers)
	$(GO) vet ./...
	CATCHUP_REQUIRE_DYNAMODB=1 $(GO) test -race -count=1 $(HERMETIC)

# Every fuzz target, package:name. go test runs their seed corpora
# (f.Add and testdata/fuzz) anyway; make fuzz also mutates each for FUZZTIME.
FUZZ_TARGETS := internal/catchup:FuzzParseProvenance \
	internal/config:FuzzParse internal/config:FuzzFromMirrorMaker internal/config:FuzzJAASPassword \
	internal/kafkago:FuzzParseFetch internal/kafkago:FuzzEncodeProduce \
	internal/worker:FuzzDecodeEvent
FUZZTIME ?= 5s

.PHONY: fuzz
fuzz: ## run each fuzz target for FUZZTIME (default 5s); a failing input lands in the package's testdata/fuzz
	for t in $(FUZZ_TARGETS); do \
		$(GO) test -run '^$$' -fuzz "^$${t#*:}\$$" -fuzztime $(FUZZTIME) ./$${t%%:*}/; \
	done

.PHONY: crashtest
crashtest: deps ## SIGKILL the real binary 500 times per store at random moments (100 on the 3-broker target, with follower stalls), then compare target and source
	CATCHUP_REQUIRE_DYNAMODB=1 CATCHUP_CRASH_KILLS=$${CATCHUP_CRASH_KILLS:-500} $(GO) test -count=1 -timeout 60m -run Crash -v ./internal/crashtest/
	CATCHUP_CRASH_REPLICATED_KILLS=$${CATCHUP_CRASH_REPLICATED_KILLS:-100} KAFKA_VERSION=$(KAFKA_VERSION) \
		test/kafka/it.sh -count=1 -timeout 60m -run '^TestCrashReplicated$$' -v ./internal/crashtest/

.PHONY: test-kafka39
test-kafka39: deps ## the real-Kafka suite against Apache Kafka 3.9
	KAFKA_VERSION=3.9.2 test/kafka/it.sh

GOLANGCI_LINT_VERSION := v2.15.0

$(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION):
	GOBIN=$(CURDIR)/$(BIN)/tmp $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(BIN)/tmp/golangci-lint $@ && rmdir $(BIN)/tmp

# shellcheck comes from Debian's archive when the machine lacks it (apt-get,
# through sudo unless root); make lint fails rather than skip it.
.PHONY: shellcheck
shellcheck:
	command -v shellcheck >/dev/null || { SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get install -y -qq shellcheck >/dev/null || { $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq shellcheck >/dev/null; }; }

.PHONY: lint
lint: $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION) shellcheck ## golangci-lint (vet, staticcheck, errcheck, revive, gocritic, depguard: the layers, nolintlint), shellcheck, cfn-lint
	$(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION) run ./...
	shellcheck -x -P SCRIPTDIR test/kafka/*.sh bench/*.sh .ci/run

GOVULNCHECK_VERSION := v1.9.0

$(BIN)/govulncheck-$(GOVULNCHECK_VERSION):
	GOBIN=$(CURDIR)/$(BIN)/tmp $(GO) install golang.org/x/vuln/cmd/govulncheck@$(GOVULNCHECK_VERSION)
	mv $(BIN)/tmp/govulncheck $@ && rmdir $(BIN)/tmp

.PHONY: vuln
vuln: $(BIN)/govulncheck-$(GOVULNCHECK_VERSION) ## govulncheck: reachable known vulnerabilities (needs https://vuln.go.dev, or GOVULNDB=file:///dir)
	$(BIN)/govulncheck-$(GOVULNCHECK_VERSION) ./...

.PHONY: bench-go
bench-go: ## Go benchmarks of the hot path and kfake copies, via benchstat; BASE=rev compares with a revision
	bench/gobench.sh $(BASE)

.PHONY: bench
bench: ## real brokers: ceiling, catchup, MirrorMaker 2 and 1, kcat side by side -> docs/benchmarks.md (BENCH_BASELINE=REV also runs REV; bench/run.sh --help)
	bench/run.sh

.PHONY: bench-scale
bench-scale: deps build ## 100 to 10,000 partitions on in-process kfake clusters and dynalite: requests per API key and operation, peak RSS, goroutines, bytes written -> docs/scale.md (QUICK=1: up to 1,000, ~2 min)
	$(GO) run ./bench/cmd/scale -catchup $(BIN)/catchup -label "$${LABEL:-current}" -out docs/scale.md $${QUICK:+-quick}

.PHONY: clean
clean: ## remove built binaries
	rm -rf $(BIN)

# --- AWS Lambda ---------------------------------------------------------
# sam build runs `make build-<LogicalId>` in a copy of CodeUri with
# ARTIFACTS_DIR set (template.yaml: BuildMethod makefile). The bootstrap is
# for linux/arm64 (Graviton) unless LAMBDA_ARCH says otherwise, without the RPC mode aws-lambda-go no longer
# needs on provided.al2023, static and stripped.
LAMBDA_ARCH    ?= arm64 # amd64 for LocalStack on an amd64 machine (localstack/README.md)
LAMBDA_GOENV   := GOOS=linux GOARCH=$(strip $(LAMBDA_ARCH)) CGO_ENABLED=0
LAMBDA_GOFLAGS := -tags lambda.norpc -trimpath -ldflags "-s -w"

.PHONY: build-ReplicateFunction
build-ReplicateFunction: ARTIFACTS_DIR ?= $(BIN)/lambda/replicate
build-ReplicateFunction: ## (sam build) the replicate bootstrap, linux/arm64, into $(ARTIFACTS_DIR)
	$(LAMBDA_GOENV) $(GO) build $(LAMBDA_GOFLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/replicate

.PHONY: build-DispatchFunction
build-DispatchFunction: ARTIFACTS_DIR ?= $(BIN)/lambda/dispatch
build-DispatchFunction: ## (sam build) the dispatch bootstrap, linux/arm64, into $(ARTIFACTS_DIR)
	$(LAMBDA_GOENV) $(GO) build $(LAMBDA_GOFLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/dispatch

.PHONY: build-lambda
build-lambda: build-ReplicateFunction build-DispatchFunction ## both Lambda bootstraps into bin/lambda/{replicate,dispatch}/bootstrap
	@ls -l $(BIN)/lambda/*/bootstrap

build: build-lambda

.PHONY: measure-lambda
measure-lambda: ## bootstrap sizes (linux/arm64) and exec-to-first-/next times, next to a hello-world bootstrap
	CATCHUP_MEASURE_STARTUP=1 $(GO) test -count=1 -run TestStartupTime -v ./functions/e2e/

# cfn-lint comes with the machine image; elsewhere a pinned one is installed
# from PyPI into a virtualenv under bin/.
CFN_LINT_VERSION := 1.51.0
CFN_LINT := $(shell command -v cfn-lint 2>/dev/null || echo $(BIN)/cfn-lint-$(CFN_LINT_VERSION)/bin/cfn-lint)

$(BIN)/cfn-lint-$(CFN_LINT_VERSION)/bin/cfn-lint:
	python3 -m venv $(BIN)/cfn-lint-$(CFN_LINT_VERSION)
	$(BIN)/cfn-lint-$(CFN_LINT_VERSION)/bin/pip install --quiet --disable-pip-version-check "cfn-lint==$(CFN_LINT_VERSION)"

.PHONY: lint-aws
lint-aws: $(CFN_LINT) shellcheck ## cfn-lint on template.yaml; bash -n and shellcheck on localstack/
	$(CFN_LINT) template.yaml
	for f in localstack/*.sh localstack/init/ready.d/*.sh; do bash -n "$$f"; done
	shellcheck -x localstack/*.sh localstack/init/ready.d/*.sh

lint: lint-aws
