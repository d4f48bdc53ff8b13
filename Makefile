# rollout: build, test, benchmark, docs.
GO ?= go
BIN := bin/rollout
BENCH_DIR ?= .bench

.PHONY: build test bench docs fuzz clean conformance

build:
	$(GO) build -o $(BIN) ./cmd/rollout

# The suite CI runs (.ci/run): vet, then every test including the committed
# fuzz seed corpora and the docs/checks.md staleness test.
test:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

# Throughput and memory as ratios against baselines on the same input in the
# same run (see docs/performance.md). Generates ~400 MB under $(BENCH_DIR),
# plus the workload shapes of issues 12 and 28 (about 2 GB, 1.05 GB of it the fleet;
# SHAPES_FLAGS sizes them, e.g. SHAPES_FLAGS="-fleet-files 500 -fleet-max 20MB").
SHAPES_FLAGS ?=
bench: build
	$(GO) build -o bin/benchtool ./internal/testkit/benchtool
	bin/benchtool gen -o $(BENCH_DIR)
	bin/benchtool shapes-gen -o $(BENCH_DIR) $(SHAPES_FLAGS)
	bin/benchtool run -rollout $(BIN) -dir $(BENCH_DIR) -md docs/performance.md
	bin/benchtool frames -rollout $(BIN) -dir $(BENCH_DIR) -md docs/performance.md
	bin/benchtool shapes -rollout $(BIN) -dir $(BENCH_DIR) -md docs/performance.md

# Regenerates the conformance goldens (internal/testkit/conformance/testdata) with real Codex
# versions from npm, installed into the cache outside the repository
# (internal/testkit/conformance/README.md). VERSIONS="0.58.0 0.171.0" picks versions.
VERSIONS ?=
conformance:
	$(GO) run ./internal/testkit/conformance/internal/gen $(if $(VERSIONS),-versions "$(VERSIONS)")

# docs/checks.md is generated from the rule registry.
docs:
	$(GO) run ./checks/internal/gendocs > docs/checks.md

# Long fuzz runs, one line per fuzz target (internal/testkit/repocheck fails when
# one is missing); the seed corpora already run as part of `make test`.
FUZZTIME ?= 60s
fuzz:
	$(GO) test -run='^$$' -fuzz='^FuzzReader$$' -fuzztime=$(FUZZTIME) ./rollout
	$(GO) test -run='^$$' -fuzz='^FuzzCheckLine$$' -fuzztime=$(FUZZTIME) ./rollout
	$(GO) test -run='^$$' -fuzz='^FuzzEngine$$' -fuzztime=$(FUZZTIME) ./reconstruct
	$(GO) test -run='^$$' -fuzz='^FuzzHandoffs$$' -fuzztime=$(FUZZTIME) ./reconstruct
	$(GO) test -run='^$$' -fuzz='^FuzzReclaim$$' -fuzztime=$(FUZZTIME) ./reconstruct/frames
	$(GO) test -run='^$$' -fuzz='^FuzzApplyVsEvanphx$$' -fuzztime=$(FUZZTIME) ./mergepatch
	$(GO) test -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(FUZZTIME) ./mergepatch
	$(GO) test -run='^$$' -fuzz='^FuzzString$$' -fuzztime=$(FUZZTIME) ./internal/output/termsafe

clean:
	rm -rf bin $(BENCH_DIR)
