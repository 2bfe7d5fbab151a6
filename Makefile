# hearth — build and test. `make test` is what CI runs (.ci/run).
GO ?= go
PKGS := ./...

.PHONY: all build test check tree vet fmt-check cross unit editors bench bench-modes peer peer-shell campaigns clean

all: build

build:
	@test -e bin/hearth || echo "make: building bin/hearth; the first build downloads Go modules and compiles SQLite's C with gcc (cgo): about two minutes"
	$(GO) build -o bin/hearth ./cmd/hearth

# Every test: formatting, vet, the Go suite with the race detector (one
# build, cached), then the editor suites.
test: check unit editors

check: tree fmt-check vet cross

# No build outputs in git: no executable binary, nothing over 1 MB outside fixtures.
tree:
	bash .ci/check-tree

# The CLI must build for macOS and Windows too (platform files where needed).
cross:
	GOOS=darwin $(GO) build ./...
	GOOS=windows $(GO) build ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './editors/*')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

# TestRelayCPU measures the daemon's CPU per streamed delta: it runs on its
# own after the rest, not beside other packages' fork loops and builds.
unit:
	$(GO) test -race -count=1 -timeout 15m -skip '^TestRelayCPU$$' $(PKGS)
	$(GO) test -race -count=1 -timeout 5m -run '^TestRelayCPU$$' ./cmd/hearth

# The editor suites and the interop suite run against the real daemon; each
# script installs what it needs (npm ci, Debian's neovim and chromium).
editors:
	bash editors/interop/test.sh
	bash editors/nvim/test.sh
	bash editors/vscode/test.sh

bench:
	$(GO) test -run '^$$' -bench . -benchtime 20x ./session/ ./store/

# The long campaigns of docs/RELIABILITY.md (their short versions run in
# `unit`): crash (200 SIGKILLs), faults (500 prompts), load (20 editors × 5
# sessions × 10 workspaces), the symlink swap (20×), big files (10 GiB).
campaigns:
	$(GO) test -count=1 -timeout 60m -run '^TestCrashCampaign$$' -v ./cmd/hearth -crash-kills=200
	$(GO) test -count=1 -timeout 60m -run '^TestFaultCampaign$$' -v ./cmd/hearth -fault-prompts=500
	$(GO) test -count=1 -timeout 60m -run '^TestLoadCampaign$$' -v ./cmd/hearth -load-editors=20 -load-sessions=5 -load-workspaces=10
	$(GO) test -count=1 -timeout 60m -run SymlinkSwapCampaign -v ./workspace -campaign=20
	$(GO) test -count=1 -timeout 60m -run '^TestBigFileMemory$$' -v ./cmd/hearth -bigfile-gib=10 -bigtext-mib=300

# The request modes against the floor, and the plot (bin/bench.svg); CI runs a short one
# (cmd/hearth/internal/bench: TestRunShort). Then hearth next to Codex CLI (installs @openai/codex in a scratch dir),
# reading with read_file, or (peer-shell) with its shell tool, sandboxed, beside read_file.
bench-modes:
	mkdir -p bin
	$(GO) run ./cmd/hearth bench --plot bin/bench.svg

peer:
	bash bench/peer.sh

peer-shell:
	TOOL=shell bash bench/peer.sh

clean:
	rm -rf bin
