# inferenced: build, test and run a local network. `make help` lists targets.
BUILD_DIR ?= $(CURDIR)/build
GO        ?= go
BINARIES  := inferenced fake-executor loadgen localnet-keys
FUZZTIME  ?= 20000x
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS   := -X github.com/cosmos/cosmos-sdk/version.Name=inferenced \
             -X github.com/cosmos/cosmos-sdk/version.AppName=inferenced \
             -X github.com/cosmos/cosmos-sdk/version.Version=$(VERSION) \
             -X github.com/cosmos/cosmos-sdk/version.Commit=$(COMMIT)

.PHONY: all build install proto-gen sim sim-sweep test test-unit test-rules test-sim test-sim-long test-localnet test-e2e test-scale test-upgrade test-mixed fuzz lint golangci-lint cosmovisor bench bench-unit bench-scale growth localnet-disk localnet demo localnet-stop clean help

all: build

help:
	@echo "make build        build inferenced, fake-executor and loadgen into $(BUILD_DIR)"
	@echo "make install      go install inferenced"
	@echo "make proto-gen    regenerate Go code from proto/ (offline; no Buf registry)"
	@echo "make test         lint, unit tests, the SDK simulation (short), the localnet smoke test, brief fuzzing"
	@echo "make test-unit    unit tests only; make test-localnet, make test-e2e, make test-scale: multi-process tests only"
	@echo "make test-rules   promtool check and unit tests of docs/prometheus (skipped, and said so, without promtool)"
	@echo "make test-sim     the SDK simulation, short (app/sim_test.go; x/inference/simulation): determinism,"
	@echo "                  import/export store by store, simulation after import, invariants; part of make test"
	@echo "make test-sim-long  the same, long: more seeds, blocks and operations (not in CI; SIM_LONG_* set it)"
	@echo "make test-upgrade the upgrade from the previous release under cosmovisor (tests/upgrade)"
	@echo "make test-mixed   two validators on MIXED_OLD, two on MIXED_NEW (commits): equal app hashes at every height"
	@echo "make test-scale   the 1,000-executor scenario (tests/e2e/scale_test.go) after its 6-executor baseline"
	@echo "make bench        micro-benchmarks (make bench-unit), then the scale figures beside their baselines (make bench-scale)"
	@echo "make growth       10 epochs of steady load in-process: store keys and bytes at epochs 2 and 10, the block end with and without pruning"
	@echo "make localnet-disk  a localnet under load: data/ growth per 1,000 blocks (README.md, \"Disk\"; its knobs are the localnet's)"
	@echo "make cosmovisor   build cosmovisor v1.5.0 (tools/cosmovisor, its own module) into build/tools/cosmovisor"
	@echo "make sim          the outage simulator: prints its table, rewrites docs/simulation/ (table.md, outage.svg)"
	@echo "make sim-sweep    the traffic trip-rule calibration table the defaults come from"
	@echo "make localnet     build and run a 4-validator localnet with executors and load, show the breaker (Ctrl-C stops);"
	@echo "                  COSMOVISOR=1: every validator under cosmovisor (built first: make cosmovisor)"
	@echo "make demo         the circuit breaker demo alone: an executor dark, excluded, probed, back"
	@echo "make lint         golangci-lint (.golangci.yml: vet, errcheck, staticcheck, formatting, the consensus-code"
	@echo "                  rules), go vet of the tagged app builds, gofmt, no tracked file over 1 MiB"
	@echo "make golangci-lint  build the pinned golangci-lint into $(BUILD_DIR)/tools (make lint does it on first use)"

build:
	@mkdir -p $(BUILD_DIR)
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BUILD_DIR)/inferenced ./cmd/inferenced
	$(GO) build -o $(BUILD_DIR)/fake-executor ./cmd/fake-executor
	$(GO) build -o $(BUILD_DIR)/loadgen ./cmd/loadgen
	$(GO) build -o $(BUILD_DIR)/localnet-keys ./cmd/localnet-keys

install:
	$(GO) install -ldflags '$(LDFLAGS)' ./cmd/inferenced

proto-gen:
	bash scripts/protocgen.sh

# The outage simulator (sim/README.md): seeded, so the same command gives
# the same figures; it rewrites the committed table and plot.
sim:
	$(GO) run ./cmd/sim -out docs/simulation

sim-sweep:
	$(GO) run ./cmd/sim -sweep

# golangci-lint, built from tools/golangci-lint (its own module, so its
# dependencies never touch ours; the version is pinned in its go.mod) with
# this repository's analyzers compiled in. Rebuilt only when that module
# changes; its analyzer tests run first.
GOLANGCI_LINT := $(BUILD_DIR)/tools/golangci-lint
GOLANGCI_SRC  := $(wildcard tools/golangci-lint/go.mod tools/golangci-lint/go.sum tools/golangci-lint/*.go tools/golangci-lint/*/*.go)

golangci-lint: $(GOLANGCI_LINT)

$(GOLANGCI_LINT): $(GOLANGCI_SRC)
	@mkdir -p $(@D)
	cd tools/golangci-lint && GOWORK=off $(GO) test ./... && GOWORK=off $(GO) build -o $(abspath $@) .

# cosmovisor, the process manager validators take upgrades with, built from
# tools/cosmovisor (its own module, version pinned by its go.mod's tool
# line: v1.5.0, the newest that builds here). Rebuilt when that module changes.
# Not named COSMOVISOR: that is the localnet's switch (make localnet COSMOVISOR=1).
COSMOVISOR_TOOL := $(BUILD_DIR)/tools/cosmovisor
COSMOVISOR_SRC  := $(wildcard tools/cosmovisor/go.mod tools/cosmovisor/go.sum)

cosmovisor: $(COSMOVISOR_TOOL)

$(COSMOVISOR_TOOL): $(COSMOVISOR_SRC)
	@mkdir -p $(@D)
	cd tools/cosmovisor && GOWORK=off $(GO) build -o $(abspath $@) cosmossdk.io/tools/cosmovisor/cmd/cosmovisor

# golangci-lint covers go vet's checks and gofmt/goimports for the default
# build; the tagged builds of app/ are vetted on their own, and gofmt also
# reads the files no build here compiles (build-tagged ones, tools/).
# Parallel runners are allowed: golangci-lint otherwise refuses to run while
# another checkout on the machine lints (one lock file in /tmp for all).
lint: $(GOLANGCI_LINT)
	bash scripts/check-large-files.sh
	$(GOLANGCI_LINT) run --allow-parallel-runners ./...
	$(GO) vet -tags lying ./app/
	$(GO) vet -tags sims ./app/
	$(GO) vet -tags mixed ./tests/upgrade/
	@bad=$$(git ls-files '*.go' | grep -v -e '\.pb\.go$$' -e '\.pb\.gw\.go$$' | xargs -r gofmt -l); \
	if [ -n "$$bad" ]; then echo "gofmt needed:"; echo "$$bad"; exit 1; fi

# Unit tests first, then the multi-process localnet tests on their own, so
# the two never compete for the CPU.
test: lint build test-unit test-rules test-sim test-localnet test-e2e test-scale test-upgrade fuzz

test-unit:
	$(GO) test -count=1 -timeout 10m $$($(GO) list ./... | grep -v /tests/)

# The alert rules and the example scrape config (docs/prometheus): promtool
# checks them and runs the rules' unit tests (rules_test.yml). promtool is
# in Debian's prometheus package; without it the target says it skipped
# (app/rules_test.go, in test-unit, still checks the rules' metric names
# and derived thresholds).
PROMTOOL ?= promtool
test-rules:
	@if command -v $(PROMTOOL) >/dev/null 2>&1; then \
		$(PROMTOOL) check config docs/prometheus/prometheus.yml && \
		cd docs/prometheus && $(PROMTOOL) test rules rules_test.yml; \
	else \
		echo "test-rules: SKIPPED: $(PROMTOOL) not found (Debian: apt-get install prometheus)"; \
	fi

# The SDK's simulation harness (app/sim_test.go, x/inference/simulation,
# README there), build tag sims as the SDK's simapp: random genesis, every
# module's weighted operations, x/inference's invariants; the same seed
# three times to equal app hashes; export, import and compare every store;
# export, import at the next height and go on. The genesis time is fixed
# so that a seed replays the same run. Short: seeds 1 and 7, 50 blocks of
# up to 100 operations, about 2-3 minutes here. Long: 6 seeds, 300 blocks
# of up to 200 operations, about 45-50 minutes (13 for one seed; app/README.md). Replay one
# seed: make test-sim SIM_SEEDS=42.
SIM_TESTS      := ^(TestFullAppSimulation|TestAppStateDeterminism|TestAppImportExport|TestAppSimulationAfterImport)$$
SIM_FLAGS      := -Commit=true -GenesisTime=1700000000
SIM_SEEDS      ?= 1,7
SIM_BLOCKS     ?= 50
SIM_BLOCK_SIZE ?= 100
SIM_LONG_SEEDS      ?= 1,2,4,7,32,123
SIM_LONG_BLOCKS     ?= 300
SIM_LONG_BLOCK_SIZE ?= 200

test-sim:
	$(GO) test -tags sims -count=1 -timeout 15m -run '$(SIM_TESTS)' ./app/ $(SIM_FLAGS) \
		-SimSeeds=$(SIM_SEEDS) -NumBlocks=$(SIM_BLOCKS) -BlockSize=$(SIM_BLOCK_SIZE)

test-sim-long:
	$(GO) test -tags sims -count=1 -timeout 6h -run '$(SIM_TESTS)' ./app/ $(SIM_FLAGS) \
		-SimSeeds=$(SIM_LONG_SEEDS) -NumBlocks=$(SIM_LONG_BLOCKS) -BlockSize=$(SIM_LONG_BLOCK_SIZE)

test-localnet: build
	LOCALNET_BIN_DIR=$(BUILD_DIR) $(GO) test -count=1 -timeout 15m ./tests/localnet/

# The end-to-end scenarios (tests/e2e/README.md), one network at a time;
# -v because every scenario prints its figures. The scale scenario has a
# target of its own.
SCALE_TESTS := ^TestScale
test-e2e: build
	LOCALNET_BIN_DIR=$(BUILD_DIR) $(GO) test -count=1 -timeout 25m -v -skip '$(SCALE_TESTS)' ./tests/e2e/

# The upgrades from the previous releases (tests/upgrade/README.md): v3
# from the release right before this one, v2 from the one before v2, each
# built from the clone's history, run under cosmovisor, upgraded by
# governance. About 10.5 minutes here (4 of them the v3 scenario).
test-upgrade: build cosmovisor
	LOCALNET_BIN_DIR=$(BUILD_DIR) $(GO) test -count=1 -timeout 20m -v ./tests/upgrade/

# Two validators on MIXED_OLD and two on MIXED_NEW (commits; MIXED_NEW= empty:
# this checkout) run one chain and must agree on every app hash
# (tests/upgrade/mixed_test.go): the proof that a change of how the work is
# done left what it computes alone. On demand, not in make test.
MIXED_OLD ?= 2d859e8
MIXED_NEW ?= 7011c69
test-mixed: build
	MIXED_OLD=$(MIXED_OLD) MIXED_NEW=$(MIXED_NEW) LOCALNET_BIN_DIR=$(BUILD_DIR) $(GO) test -tags mixed -count=1 -timeout 30m -v -run '^TestMixedBinariesAgree$$' ./tests/upgrade/

# The scale scenario: a 6-executor network, then a 1,000-executor one.
test-scale: build
	LOCALNET_BIN_DIR=$(BUILD_DIR) $(GO) test -count=1 -timeout 15m -v -run '$(SCALE_TESTS)' ./tests/e2e/

# Each fuzz target runs for FUZZTIME (go test -fuzz takes one target at a time).
# The budget is a count of executions, not a duration: with a duration, Go
# 1.26's fuzz coordinator can report its own deadline as a failure under CPU
# load (golang/go#75804, fixed in Go 1.27); a count has no deadline to race.
# The brief run starts from the seed corpus in a private cache: the corpus Go
# keeps in GOCACHE grows with every run and replaying it slows a brief run.
# For a long run that keeps its corpus (a duration is fine when a rare
# spurious "context deadline exceeded" at the very end does not matter):
#   make fuzz FUZZTIME=2000000x FUZZCACHE=$$(go env GOCACHE)/fuzz
FUZZ_TARGETS := ./x/inference/lottery:FuzzDraw ./x/inference/types:FuzzValidators ./x/inference/types:FuzzParamsValidate ./x/inference/breaker:FuzzSequence ./x/inference/verdict:FuzzUnpack ./x/inference/aggregate:FuzzAggregate ./x/inference/verdict:FuzzExpand ./x/inference/service:FuzzDecode ./x/inference/service:FuzzMedian ./x/inference/service:FuzzNextShortAgrees ./x/inference/aggregate:FuzzAggregateEqualsLegacy ./abci/ve:FuzzDecode ./abci/ve:FuzzVerifyVoteExtension ./abci/proposals:FuzzDecodeBundle ./abci/proposals:FuzzBundleVotes ./abci/proposals:FuzzZstdFrame ./x/inference/service:FuzzScanAgreesWithEach ./x/inference/verdict:FuzzSparseScanAgrees ./abci/proposals:FuzzZstdReuseAgrees ./abci/proposals:FuzzExtSignBytes ./x/inference/service:FuzzMedianEqualsLegacy ./x/inference/breakerstore:FuzzStreaksCodec ./abci/proposals:FuzzReadCanonicalAgrees ./x/inference/verdictref:FuzzDecode ./x/inference/aggregate:FuzzPackedAgainst
FUZZCACHE ?=

fuzz:
	@cache="$(FUZZCACHE)"; tmp=""; \
	if [ -z "$$cache" ]; then tmp=$$(mktemp -d); cache=$$tmp; fi; \
	for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name ($$pkg) for $(FUZZTIME)"; \
		$(GO) test $$pkg -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) -timeout 5m -test.fuzzcachedir="$$cache" || { rm -rf $$tmp; exit 1; }; \
	done; \
	rm -rf $$tmp

# make bench: the micro-benchmarks, then the scale figures of the budgets
# (docs/architecture.md), each beside its baseline in the same run. The
# scale benchmarks run on their own with a fixed count: one iteration of
# BenchmarkSelectionQuery is a block of 290 queries, of BlockSizes the whole
# size table, of AttestationBlock one block's attestation work.
SCALE_BENCHES := SelectionQuery|BlockSizes|AttestationBlock|MonitorScale|Growth

bench: bench-unit bench-scale growth

bench-unit:
	$(GO) test -run '^$$' -bench . -skip '^Benchmark($(SCALE_BENCHES))$$' -benchmem ./x/inference/... ./abci/... ./monitor/

# About 3 minutes (2m29s here): sizes, attestation cost at 150 x {1,000; 10,000},
# selection at {1,000; 10,000} members against the pre-table query, and the
# monitor against 1,000 and 10,000 loopback executors before (efd442a) and
# after the scheduler (scripts/bench-monitor.sh).
bench-scale:
	$(GO) test -run '^$$' -bench '^BenchmarkBlockSizes$$' -benchtime 1x ./abci/proposals/
	bash scripts/bench-attestation.sh
	$(GO) test -run '^$$' -bench '^BenchmarkSelectionQuery$$' -benchtime 100x ./x/inference/routes/
	bash scripts/bench-monitor.sh

# The growth benchmark (x/inference/keeper/growth_bench_test.go), about 40 s:
# 10 epochs of 20 inferences a block through the keeper, the module store's
# keys and bytes after epochs 2 and 10, then the block end's cost in a block
# that prunes and in one that does not. GROWTH_RETENTION_EPOCHS sets the
# retention (default 2; 1000 keeps everything for the run).
growth:
	$(GO) test -run '^$$' -bench '^BenchmarkGrowth$$' -benchmem -v ./x/inference/keeper/

# Disk growth of a localnet node under load (scripts/localnet-disk.sh), under
# the one-network lock; PRUNING, MIN_RETAIN_BLOCKS, SNAPSHOT_* ... as for the
# localnet.
localnet-disk: build
	LOCALNET_BIN_DIR=$(BUILD_DIR) flock /tmp/inferenced-net.lock bash scripts/localnet-disk.sh

# COSMOVISOR=1 runs every validator under cosmovisor (scripts/localnet.sh).
localnet: build $(if $(filter 1,$(COSMOVISOR)),cosmovisor)
	bash scripts/localnet-run.sh

# The circuit breaker demo alone (starts and stops its own localnet when
# none is running; `make localnet` runs it first).
demo: build
	bash scripts/demo.sh

localnet-stop:
	bash scripts/localnet.sh stop

clean:
	bash scripts/localnet.sh reset || true
	rm -rf $(BUILD_DIR)
