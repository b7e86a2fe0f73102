# contention-lab: the pipeline. Every recipe takes key=value settings where it says so,
# e.g. `just matrix threads=1,2,4,6,12 cores=1,2 variants=dashmap,lmdb users=6000`.

set shell := ["bash", "-euo", "pipefail", "-c"]
set positional-arguments

# List the recipes.
default:
    @just --list

# The thread x core matrix of every default scenario (benches/*.toml), then tables.
# `just matrix resume=<run-id>` continues an interrupted run. The build step shows cargo's
# progress (the first build on a fresh clone takes minutes).
# `budget=` (15m by default) is the measurement's: the build and the setup before it are
# timed, recorded in the results (`plan.build_seconds`) and not taken from it.
matrix *settings:
    @bash scripts/setup.sh --if-missing
    @echo "building the workspace (cargo build --release -p lab)" >&2
    @start=$(date +%s); cargo build --release -p lab; export LAB_BUILD_SECONDS=$(( $(date +%s) - start )); exec "${CARGO_TARGET_DIR:-target}/release/lab" matrix "$@"

# The larger set: every scenario file in benches/ (the default's, plus lookup-dispatch,
# lease-durable, openldap, the two models' sensitivity files and the rest), no budget.
full *settings:
    @echo "building the workspace (cargo build --release -p lab)" >&2
    @cargo build --release -p lab
    @"${CARGO_TARGET_DIR:-target}/release/lab" matrix budget=none scenarios=$(ls benches/*.toml | xargs -n1 basename | sed 's/\.toml$//' | grep -vx 'noop\|pool-batch\|leadership-500x3' | paste -sd, -) "$@"

# The quick matrix: fewer threads, one short repetition per cell.
quick *settings:
    @echo "building the workspace (cargo build --release -p lab)" >&2
    @cargo build --release -p lab
    @"${CARGO_TARGET_DIR:-target}/release/lab" matrix quick=true "$@"

# A tiny matrix over every hot path that checks the pipeline end to end (used by CI): the
# [smoke] table of every scenario file that has one.
smoke *settings:
    cargo run --release --quiet -p lab -- matrix smoke=true "$@"

# One cell in this process: just run --hot-path lookup --variant dashmap --threads 4
run *args:
    cargo run --release --quiet -p lab -- run "$@"

# Re-render the HTML report from results files (default: the newest in reports/data).
report *files:
    cargo run --release --quiet -p lab -- report "$@"

# Compare two results files cell by cell; non-zero exit on a regression beyond the spread.
compare base new *args:
    cargo run --release --quiet -p lab -- compare "$@"

# Open a report in headless Chromium, check it and save reports/screenshot.png.
check-report *page:
    scripts/check-report.sh "$@"

# Hot paths, variants, parameters and scenario files.
list:
    cargo run --release --quiet -p lab -- list

# Criterion benchmarks of one hot path (criterion's HTML report lands in reports/criterion).
bench crate *args:
    CRITERION_HOME="$PWD/reports/criterion" cargo bench -p "$1" -- "${@:2}"

# Installs the packages some hot paths need (Debian/Ubuntu, as root): libdqlite0, the real
# dqlite node of benches/sqlmix-libdqlite*.toml, golang-go and go-dqlite for Juju's Go
# client of benches/sqlmix-libdqlite-go*.toml (built into target/go by
# scripts/build-go-client.sh), the real directory servers of
# benches/389ds.toml and benches/openldap.toml, and memcached, nginx and wrk for the server
# hot path's examples (benches/server-*.toml). Without them `just matrix` skips those
# files and says so.
setup:
    bash scripts/setup.sh

# The test suite.
test:
    cargo test --workspace
