# rollout: build, test, benchmark, docs.
GO ?= go
BIN := bin/rollout
BENCH_DIR ?= .bench
# Real-shaped Codex homes of `benchtool homes` (the 50,000 one: about 1.5 GB, measured once).
HOMES ?= 2000,50000

.PHONY: build test bench docs fuzz clean conformance drift image

# Stripped, as the image and the Dockerfile build it: stack traces keep
# their function names (the symbol table and DWARF go, not pclntab), and
# the binary stays in the 50 MB budget (docs/scale.md, "What it costs").
build:
	$(GO) build -trimpath -ldflags='-s -w' -o $(BIN) ./cmd/rollout

# The OCI image of rollout, built without Docker and without the network
# (internal/testkit/imagetool): a static binary on an empty base, tagged with
# IMAGE_VERSION (the tag on HEAD, else Go's pseudo-version of the commit), every
# timestamp the commit's, so that the same commit and CA bundle give the same
# digest. It prints the manifest digest (also in bin/rollout-oci.digest); docs/scale.md
# ("The image") says how to push it and pin it by digest. IMAGE_ARCH=arm64 cross-builds;
# CA_CERTS= leaves out the CA bundle HTTPS (s3:// inputs) needs.
IMAGE_DIR := bin/rollout-oci
IMAGE_ARCH ?= $(shell $(GO) env GOARCH)
CA_CERTS ?= /etc/ssl/certs/ca-certificates.crt
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null)
IMAGE_VERSION ?= $(shell git describe --tags --exact-match --match 'v*' 2>/dev/null || \
	TZ=UTC git log -1 --abbrev=12 --date=format-local:%Y%m%d%H%M%S --format=v0.0.0-%cd-%h 2>/dev/null)$(shell \
	git diff --quiet HEAD 2>/dev/null || echo -dirty)
image:
	CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) $(GO) build -trimpath -ldflags='-s -w' -o bin/rollout-linux-$(IMAGE_ARCH) ./cmd/rollout
	$(GO) build -o bin/imagetool ./internal/testkit/imagetool
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) bin/imagetool -binary bin/rollout-linux-$(IMAGE_ARCH) -o $(IMAGE_DIR) \
		-version '$(IMAGE_VERSION)' -revision '$(REVISION)' $(if $(CA_CERTS),-ca-certs $(CA_CERTS)) > $(IMAGE_DIR).digest
	@cat $(IMAGE_DIR).digest
	@echo "push: crane push $(IMAGE_DIR) REGISTRY/rollout:$(IMAGE_VERSION); pin REGISTRY/rollout:$(IMAGE_VERSION)@$$(cat $(IMAGE_DIR).digest)"

# The suite CI runs (.ci/run): vet, then every test including the committed
# fuzz seed corpora and the docs/checks.md staleness test. cmd/rollout drives
# real Codex releases in its live tests: past go test's 10-minute default on 2
# busy cores.
test:
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 30m ./...

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
	bin/benchtool fleet -rollout $(BIN) -dir $(BENCH_DIR) -md docs/performance.md
	bin/benchtool homes-gen -o $(BENCH_DIR) -rollouts $(HOMES)
	bin/benchtool homes -rollout $(BIN) -dir $(BENCH_DIR) -md docs/performance.md
	bin/benchtool chains -rollout $(BIN) -dir $(BENCH_DIR) -md docs/performance.md
	$(GO) build -trimpath -o bin/rollout-symbols ./cmd/rollout
	bin/benchtool startcost -rollout $(BIN) -symbols bin/rollout-symbols -md docs/performance.md

# Regenerates the conformance goldens (internal/testkit/conformance/testdata) with real Codex
# versions from npm, installed into the cache outside the repository
# (internal/testkit/conformance/README.md). VERSIONS="0.58.0 0.171.0" picks versions.
VERSIONS ?=
conformance:
	$(GO) run ./internal/testkit/conformance/internal/gen $(if $(VERSIONS),-versions "$(VERSIONS)")

# Holds a new Codex release to rollout's vocabulary (docs/drift.md): installs it, lists what it
# writes that rollout does not know, exits 1 on anything new. VERSION=0.172.0, or VERSIONS="...".
VERSION ?=
drift:
	@test -n "$(VERSION)$(VERSIONS)" || { echo "make drift: VERSION=0.172.0 (or VERSIONS=\"...\") is required" >&2; exit 2; }
	$(GO) run ./internal/testkit/drift/cmd -versions "$(VERSION) $(VERSIONS)"

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
