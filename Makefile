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
# CGO off, as the release: a static binary that runs in distroless, Alpine
# or scratch (catchup uses no C library; the pure-Go resolver reads
# /etc/resolv.conf and /etc/hosts itself).
build: ## build the catchup CLI into bin/ (static: CGO off)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(VERSION_LDFLAGS)" -o $(BIN)/catchup ./cmd/catchup

.PHONY: demo
demo: build ## copy between two in-process Kafka clusters in windows, kill a run, resume, verify
	$(BIN)/catchup demo

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error

# moto's AWS server (STS and Secrets Manager in another account, for
# internal/pipeline's aws_role_arn test), from PyPI, pinned.
MOTO_VERSION := 5.2.1

.PHONY: deps
deps: node_modules/.package-lock.json prometheus-tools ## install the test servers' dependencies (dynalite, the IAM policy simulator, moto, Prometheus, Pushgateway, promtool)
	python3 -c 'import moto, moto.server, flask_cors, sys; sys.exit(moto.__version__ != "$(MOTO_VERSION)")' 2>/dev/null || \
		python3 -m pip install --quiet 'moto[server]==$(MOTO_VERSION)'
	$(GO) mod download

# The Prometheus server, promtool and the Pushgateway the metrics tests talk
# to (internal/metrics/prom/promtest) come from Debian's archive (bookworm:
# prometheus 2.42.0, prometheus-pushgateway 1.5.1) when the machine lacks
# them, like shellcheck; CATCHUP_REQUIRE_PROMETHEUS=1 makes their tests fail
# rather than skip without them.
.PHONY: prometheus-tools
prometheus-tools:
	command -v prometheus >/dev/null && command -v promtool >/dev/null && command -v prometheus-pushgateway >/dev/null || \
		{ SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get install -y -qq --no-install-recommends prometheus prometheus-pushgateway >/dev/null || \
		{ $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq --no-install-recommends prometheus prometheus-pushgateway >/dev/null; }; }

# internal/brokers needs real brokers: test/kafka/it.sh runs it (with internal/e2e again).
# functions/ runs in make deploy-check (test-lambda), which make test calls.
HERMETIC = $$($(GO) list ./... | grep -v -e /internal/brokers -e /functions/)

# The AWS Lambda Runtime Interface Emulator (aws-lambda-rie, Lambda's own
# Runtime API) that functions/e2e runs both bootstraps under, from the Go
# module proxy, pinned: the module has no release tags there, so the pin is
# the pseudo-version of a commit.
RIE_VERSION := v0.0.0-20261030222936-bef5c4ba774d
RIE         := $(BIN)/aws-lambda-rie-$(RIE_VERSION)
# What the hermetic suites need from outside Go: dynalite, Prometheus, the emulator;
# without them a test fails rather than skips.
TEST_ENV    := CATCHUP_REQUIRE_DYNAMODB=1 CATCHUP_REQUIRE_PROMETHEUS=1 CATCHUP_REQUIRE_RIE=1 CATCHUP_RIE=$(CURDIR)/$(RIE)

$(RIE):
	GOBIN=$(CURDIR)/$(BIN)/tmp-rie $(GO) install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$(RIE_VERSION)
	mv $(BIN)/tmp-rie/aws-lambda-rie $@ && rmdir $(BIN)/tmp-rie

.PHONY: test
test: deps $(RIE) ## vet, the unit and kfake end-to-end suites with -race (the Lambda functions under aws-lambda-rie), each fuzz target for 4000 inputs, the deploy rehearsal, then the real-Kafka suite
	$(GO) vet ./...
	$(TEST_ENV) $(GO) test -race -count=1 -timeout 20m $(HERMETIC)
	$(MAKE) --no-print-directory fuzz
	$(MAKE) --no-print-directory test-deploy ship-check deploy-check
	KAFKA_VERSION=$(KAFKA_VERSION) test/kafka/it.sh

.PHONY: test-unit
test-unit: deps $(RIE) ## only the hermetic suites (no real brokers), the Lambda functions' included
	$(GO) vet ./...
	$(TEST_ENV) $(GO) test -race -count=1 $(HERMETIC) ./functions/...

.PHONY: test-lambda
test-lambda: deps $(RIE) ## the Lambda functions' suite: both bootstraps under aws-lambda-rie, and template.yaml against the code
	$(TEST_ENV) $(GO) test -race -count=1 ./functions/...

# Every fuzz target, package:name. go test runs their seed corpora
# (f.Add and testdata/fuzz) anyway; make fuzz also mutates each for FUZZTIME.
FUZZ_TARGETS := internal/catchup:FuzzParseProvenance \
	internal/config:FuzzParse internal/mirrormaker:FuzzFromMirrorMaker internal/mirrormaker:FuzzConvertMM2 internal/mirrormaker:FuzzJAASPassword \
	internal/kafkago/wire:FuzzParseFetch internal/kafkago/wire:FuzzEncodeProduce \
	internal/worker:FuzzDecodeEvent
FUZZTIME ?= 4000x

.PHONY: fuzz
fuzz: ## run each fuzz target for FUZZTIME (default 4000x: 4000 inputs, a count rather than a time, since a time limit can end a slow input with "context deadline exceeded"); a failing input lands in the package's testdata/fuzz
	for t in $(FUZZ_TARGETS); do \
		$(GO) test -run '^$$' -fuzz "^$${t#*:}\$$" -fuzztime $(FUZZTIME) ./$${t%%:*}/; \
	done

.PHONY: crashtest
crashtest: deps ## SIGKILL the real binary 500 times per store, aimed at each moment of a run (100 with store losses and rollbacks per store; 100 on the 3-broker target, with follower stalls), then compare target and source (docs/crash-harness.md)
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
lint: $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION) shellcheck ## the tree (no tracked binary, no file over 1 MB), golangci-lint (vet, staticcheck, errcheck, revive, gocritic, depguard: the layers, nolintlint), shellcheck, cfn-lint
	.ci/check-tree
	$(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION) run ./...
	cd deploy && $(CURDIR)/$(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION) run ./...
	shellcheck -x -P SCRIPTDIR test/kafka/*.sh bench/*.sh .ci/run .ci/check-tree

# --- Releases, image, deployments ----------------------------------------
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

# The image's linux binaries are release builds: goreleaser builds each
# platform from the same build (id catchup) of .goreleaser.yaml as make
# release, so the flags and ldflags are the release's by construction. Each
# is rebuilt every time (the Go build cache makes that cheap) so that make
# image never packs a stale binary. Every goreleaser run cleans bin/release,
# so each binary is copied out (-o) into bin/image/bin/<os>-<arch>/ before
# the next platform's run; the before hook (man pages and completions for
# the archives) is skipped. Run make release after make image to have the
# full release output.
IMAGE_PLATFORMS     := linux/amd64 linux/arm64
IMAGE_BIN           := $(BIN)/image/bin
RELEASE_LINUX_AMD64 := $(IMAGE_BIN)/linux-amd64/catchup

.PHONY: release-linux
release-linux: $(BIN)/goreleaser-$(GORELEASER_VERSION)
	@for p in $(IMAGE_PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; mkdir -p $(IMAGE_BIN)/$$os-$$arch && \
		GOOS=$$os GOARCH=$$arch $(GORELEASER) build --snapshot --clean --single-target --id catchup --skip before \
			-o $(IMAGE_BIN)/$$os-$$arch/catchup || exit 1; \
	done

.PHONY: image
image: release-linux ## OCI image index (linux/amd64, linux/arm64) of the release binaries, no Docker daemon, no base image: bin/image/oci (layout) and bin/image/catchup-linux-<arch>.tar
	cd deploy && $(GO) run ./cmd/mkimage -out $(CURDIR)/$(BIN)/image \
		$(foreach p,$(IMAGE_PLATFORMS),-binary $(p)=$(CURDIR)/$(IMAGE_BIN)/$(subst /,-,$(p))/catchup)

# helm (lint and template of deploy/helm/catchup) from the Go module proxy,
# pinned, built into bin/ like golangci-lint.
HELM_VERSION := v4.3.2

$(BIN)/helm-$(HELM_VERSION):
	GOBIN=$(CURDIR)/$(BIN)/tmp-helm $(GO) install helm.sh/helm/v4/cmd/helm@$(HELM_VERSION)
	mv $(BIN)/tmp-helm/helm $@ && rmdir $(BIN)/tmp-helm

.PHONY: test-deploy
test-deploy: prometheus-tools $(BIN)/helm-$(HELM_VERSION) ## the deploy/ module: Kubernetes manifests and the Helm chart's output decoded strictly (helm lint too), systemd units verified, alerting rules tested with promtool, the Grafana dashboard checked
	cd deploy && $(GO) vet ./... && CATCHUP_REQUIRE_PROMETHEUS=1 CATCHUP_REQUIRE_HELM=1 HELM=$(CURDIR)/$(BIN)/helm-$(HELM_VERSION) \
		$(GO) test -count=1 ./...

.PHONY: ship-check
ship-check: image ## check the image index's platforms and binaries, run the linux/amd64 release binary and the image's in an empty root (make test runs it)
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
bench: ## real brokers, single-broker and 3-broker RF=3 targets: the model copier (the per-byte limit), catchup, franz-go copier in 5 interleaved rounds of >= 20 s steps (perf stat CPU), MirrorMaker 2 (defaults, tuned, exactly-once) and 1, kcat over a steady-state window (every peer on 1 KiB, MirrorMaker 2 tuned on the other shapes; within an hour) -> docs/benchmarks.md (BENCH_QUICK=1: 1 KiB, single broker; BENCH_BASELINE=REV also runs REV; BENCH_PIN=1 pins; bench/run.sh --help)
	bench/run.sh

.PHONY: bench-scale
bench-scale: deps build ## 100 to 10,000 partitions on in-process kfake clusters and dynalite: requests per API key and operation, peak RSS, goroutines, bytes written -> bench/SCALE.md (QUICK=1: up to 1,000, ~2 min)
	$(GO) run ./bench/cmd/scale -catchup $(BIN)/catchup -label "$${LABEL:-current}" -out bench/SCALE.md $${QUICK:+-quick}

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

# The deploy rehearsal's tools, from PyPI, pinned, in one virtualenv under
# bin/: the AWS SAM CLI (sam build runs the build-<LogicalId> targets above;
# sam validate --lint) and cfn-lint, at the version make lint-aws runs too.
SAM_VERSION      := 1.170.0
CFN_LINT_VERSION := 1.58.0
AWS_VENV         := $(BIN)/sam-$(SAM_VERSION)
SAM              := $(AWS_VENV)/bin/sam
CFN_LINT         := $(AWS_VENV)/bin/cfn-lint
CFN_LINT_PINNED  := $(AWS_VENV)/cfn-lint-$(CFN_LINT_VERSION)
# No telemetry, and a region for the commands that want one (no AWS call is made).
SAM_ENV          := SAM_CLI_TELEMETRY=0 AWS_DEFAULT_REGION=$${AWS_DEFAULT_REGION:-us-east-1}

$(SAM):
	python3 -m venv $(AWS_VENV)
	$(AWS_VENV)/bin/pip install --quiet --disable-pip-version-check "aws-sam-cli==$(SAM_VERSION)"

$(CFN_LINT_PINNED): $(SAM)
	$(AWS_VENV)/bin/pip install --quiet --disable-pip-version-check "cfn-lint==$(CFN_LINT_VERSION)"
	touch $@

.PHONY: deploy-check
deploy-check: sam-check test-lambda ## the deploy rehearsal, no AWS account: sam build, sam validate --lint, cfn-lint, both functions under aws-lambda-rie with every AWS call they send checked against their roles (docs/lambda.md)

.PHONY: sam-check
sam-check: $(SAM) $(CFN_LINT_PINNED) ## sam build (the Makefile's build targets, as a deploy runs them) and sam validate --lint of the built template; cfn-lint on template.yaml
	$(SAM_ENV) $(SAM) build --build-in-source --build-dir $(BIN)/sam-build --template-file template.yaml
	$(SAM_ENV) $(SAM) validate --lint --template-file $(BIN)/sam-build/template.yaml
	$(CFN_LINT) template.yaml

# Every functions/e2e test records the AWS calls of the functions it runs
# and checks them against template.yaml's roles with the IAM policy
# simulator when it ends, so test-lambda (in deploy-check) is the whole
# permission check. This target runs only the tests whose calls cover every
# grant (a start: latest first run with an SSM SecureString and a secret
# read as a cluster role, a fenced commit) and the generated
# docs/permissions.md, for quick work on template.yaml; make test does not
# call it, it would run them twice.
.PHONY: permission-check
permission-check: deps $(RIE) ## the IAM grants of template.yaml against the calls the code sends, quickly (test-lambda checks every test's)
	$(TEST_ENV) $(GO) test -race -count=1 -run 'TestTemplate|TestPermissionsDoc|TestFirstRunOfLatestPipelines|TestOvertakenWorkerIsGranted' ./functions/e2e/

.PHONY: lint-aws
lint-aws: $(CFN_LINT_PINNED) shellcheck ## cfn-lint on template.yaml; bash -n and shellcheck on localstack/
	$(CFN_LINT) template.yaml
	for f in localstack/*.sh localstack/init/ready.d/*.sh; do bash -n "$$f"; done
	shellcheck -x localstack/*.sh localstack/init/ready.d/*.sh

lint: lint-aws
