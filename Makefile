# catchup: make help lists the targets.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

GO            ?= go
# The Go release every target builds and tests with (go.mod's toolchain
# line): a patch release of the go line that carries the standard library's
# security fixes (make vuln-offline: none reachable with go1.26.10, ten with
# go1.26.8). The go command fetches it from the Go module proxy once; a
# machine whose go.env says GOTOOLCHAIN=local would otherwise ignore the
# toolchain line. Set GOTOOLCHAIN to override.
export GOTOOLCHAIN ?= go1.26.10+auto
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
test: deps ## vet, the unit and kfake end-to-end suites with -race, each fuzz target for 4000 inputs, then the real-Kafka suite
	$(GO) vet ./...
	CATCHUP_REQUIRE_DYNAMODB=1 $(GO) test -race -count=1 $(HERMETIC)
	$(MAKE) --no-print-directory fuzz
	$(MAKE) --no-print-directory test-deploy ship-check
	KAFKA_VERSION=$(KAFKA_VERSION) test/kafka/it.sh

.PHONY: test-unit
test-unit: deps ## only the hermetic suites (no real brokers)
	$(GO) vet ./...
	CATCHUP_REQUIRE_DYNAMODB=1 $(GO) test -race -count=1 $(HERMETIC)

# Every fuzz target, package:name. go test runs their seed corpora
# (f.Add and testdata/fuzz) anyway; make fuzz also mutates each for FUZZTIME.
FUZZ_TARGETS := internal/catchup:FuzzParseProvenance \
	internal/config:FuzzParse internal/mirrormaker:FuzzFromMirrorMaker internal/mirrormaker:FuzzConvertMM2 internal/mirrormaker:FuzzJAASPassword \
	internal/kafkago:FuzzParseFetch internal/kafkago:FuzzEncodeProduce \
	internal/worker:FuzzDecodeEvent
FUZZTIME ?= 4000x

.PHONY: fuzz
fuzz: ## run each fuzz target for FUZZTIME (default 4000x: 4000 inputs, a count rather than a time, since a time limit can end a slow input with "context deadline exceeded"); a failing input lands in the package's testdata/fuzz
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
	cd deploy && $(CURDIR)/$(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION) run ./...
	shellcheck -x -P SCRIPTDIR test/kafka/*.sh bench/*.sh .ci/run

# --- Releases, image, deployments (issue 15) -----------------------------
# goreleaser and cyclonedx-gomod (the SBOM of each binary, read from the
# module list Go writes into it: offline) come from the Go module proxy,
# pinned, built into bin/ like golangci-lint.
GORELEASER_VERSION := v2.15.1
CYCLONEDX_GOMOD_VERSION := v1.10.0

$(BIN)/goreleaser-$(GORELEASER_VERSION):
	GOBIN=$(CURDIR)/$(BIN)/tmp-gr $(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)
	mv $(BIN)/tmp-gr/goreleaser $@ && rmdir $(BIN)/tmp-gr

# In a directory of its own, put on goreleaser's PATH (its sboms cmd is not templated).
$(BIN)/cyclonedx-gomod-$(CYCLONEDX_GOMOD_VERSION)/cyclonedx-gomod:
	GOBIN=$(CURDIR)/$(BIN)/cyclonedx-gomod-$(CYCLONEDX_GOMOD_VERSION) $(GO) install github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@$(CYCLONEDX_GOMOD_VERSION)

RELEASE_TOOLS := $(BIN)/goreleaser-$(GORELEASER_VERSION) $(BIN)/cyclonedx-gomod-$(CYCLONEDX_GOMOD_VERSION)/cyclonedx-gomod
GORELEASER    := CATCHUP_VERSION=$(VERSION) CATCHUP_COMMIT=$(shell git rev-parse --short HEAD 2>/dev/null) \
	PATH="$(CURDIR)/$(BIN)/cyclonedx-gomod-$(CYCLONEDX_GOMOD_VERSION):$$PATH" $(BIN)/goreleaser-$(GORELEASER_VERSION)

.PHONY: release
release: $(RELEASE_TOOLS) ## static stripped binaries for linux/darwin x amd64/arm64, tar.gz, checksums, SBOMs into bin/release (goreleaser snapshot; publishes nothing)
	$(GORELEASER) release --snapshot --clean
	@cat $(BIN)/release/checksums.txt

# The linux/amd64 binary of a release build, rebuilt each time (the Go build
# cache makes that cheap) so that make image never packs a stale binary.
# goreleaser cleans bin/release first: run make release after make image to
# have both.
RELEASE_LINUX_AMD64 := $(BIN)/release/catchup_linux_amd64_v1/catchup

.PHONY: release-linux-amd64
release-linux-amd64: $(BIN)/goreleaser-$(GORELEASER_VERSION)
	GOOS=linux GOARCH=amd64 $(GORELEASER) build --snapshot --clean --single-target --id catchup

.PHONY: image
image: release-linux-amd64 ## OCI image of the linux/amd64 release binary, no Docker daemon, no base image: bin/image/oci (layout) and bin/image/catchup.tar
	cd deploy && $(GO) run ./cmd/mkimage -binary $(CURDIR)/$(RELEASE_LINUX_AMD64) -arch amd64 -out $(CURDIR)/$(BIN)/image

.PHONY: test-deploy
test-deploy: ## the deploy/ module: Kubernetes manifests decoded strictly, systemd units verified
	cd deploy && $(GO) vet ./... && $(GO) test -count=1 ./...

.PHONY: ship-check
ship-check: image ## run the linux/amd64 release binary and the image's binary in an empty root (make test runs it)
	cd deploy && CATCHUP_RELEASE_BINARY=$(CURDIR)/$(RELEASE_LINUX_AMD64) CATCHUP_IMAGE_LAYOUT=$(CURDIR)/$(BIN)/image/oci \
		$(GO) test -count=1 -v -run 'TestReleaseBinary|TestImage' ./...

GOVULNCHECK_VERSION := v1.9.0

$(BIN)/govulncheck-$(GOVULNCHECK_VERSION):
	GOBIN=$(CURDIR)/$(BIN)/tmp $(GO) install golang.org/x/vuln/cmd/govulncheck@$(GOVULNCHECK_VERSION)
	mv $(BIN)/tmp/govulncheck $@ && rmdir $(BIN)/tmp

.PHONY: vuln
vuln: $(BIN)/govulncheck-$(GOVULNCHECK_VERSION) ## govulncheck: reachable known vulnerabilities (needs https://vuln.go.dev, or GOVULNDB=file:///dir)
	$(BIN)/govulncheck-$(GOVULNCHECK_VERSION) ./...

# The vulnerability database built locally, for where https://vuln.go.dev
# cannot be reached: the golang.org/x/vulndb module (Go module proxy, pinned)
# carries every report as OSV JSON in data/osv, and its cmd/indexdb writes
# the database layout govulncheck reads through GOVULNDB=file://.
VULNDB_VERSION := v0.0.0-20261105234957-e22db6528018
VULNDB_DIR     := $(BIN)/vulndb-$(VULNDB_VERSION)

$(VULNDB_DIR)/index/db.json:
	GOBIN=$(CURDIR)/$(BIN)/tmp-idx $(GO) install golang.org/x/vulndb/cmd/indexdb@$(VULNDB_VERSION)
	src=$$($(GO) mod download -json golang.org/x/vulndb@$(VULNDB_VERSION) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p'); \
		$(BIN)/tmp-idx/indexdb -vulns "$$src/data/osv" -out $(VULNDB_DIR)
	rm -rf $(BIN)/tmp-idx

.PHONY: vuln-offline
vuln-offline: $(BIN)/govulncheck-$(GOVULNCHECK_VERSION) $(VULNDB_DIR)/index/db.json ## govulncheck against the database built from golang.org/x/vulndb@VULNDB_VERSION (no network beyond the Go module proxy)
	$(BIN)/govulncheck-$(GOVULNCHECK_VERSION) -db file://$(CURDIR)/$(VULNDB_DIR) ./...

.PHONY: bench-go
bench-go: ## Go benchmarks of the hot path and kfake copies, via benchstat; BASE=rev compares with a revision
	bench/gobench.sh $(BASE)

.PHONY: bench
bench: ## real brokers, single-broker and 3-broker RF=3 targets: ceiling, catchup, franz-go copier, MirrorMaker 2 (defaults, tuned, exactly-once) and 1, kcat -> docs/benchmarks.md (BENCH_QUICK=1: a short run; BENCH_BASELINE=REV also runs REV; bench/run.sh --help)
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
