#!/usr/bin/env bash
# Builds sqlmix's Go client (crates/sqlmix/go-client: go-dqlite's driver under Go's
# database/sql with Juju's gate, the `client=go` cells) into
# ${CARGO_TARGET_DIR:-target}/go/sqlmix-go-client, from Debian's packages only: golang-go
# and golang-github-canonical-go-dqlite-dev, in GOPATH mode (GOPATH=/usr/share/gocode,
# GO111MODULE=off), so nothing is downloaded. scripts/setup.sh calls it; the lab calls it
# on demand when the program is missing or older than its source. Exit 3, in one line,
# when go or go-dqlite is not installed (`just setup` installs them).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
gopath=/usr/share/gocode

if ! command -v go >/dev/null 2>&1; then
  echo "build-go-client.sh: no go compiler; install golang-go (scripts/setup.sh)" >&2
  exit 3
fi
if [ ! -d "$gopath/src/github.com/canonical/go-dqlite/driver" ]; then
  echo "build-go-client.sh: no go-dqlite in $gopath; install golang-github-canonical-go-dqlite-dev (scripts/setup.sh)" >&2
  exit 3
fi
mkdir -p "$target/go"
# Built beside its final name and moved into place, so a run never starts half a file
# and two builds at once do not trip over each other.
tmp="$(mktemp "$target/go/.sqlmix-go-client.XXXXXX")"
trap 'rm -f "$tmp"' EXIT
cd "$root"
GOPATH="$gopath" GO111MODULE=off GOFLAGS= GOCACHE="$target/go/cache" \
  CGO_LDFLAGS_ALLOW='-Wl,-z,now' \
  go build -o "$tmp" ./crates/sqlmix/go-client
mv -f "$tmp" "$target/go/sqlmix-go-client"
trap - EXIT
echo "build-go-client.sh: built $target/go/sqlmix-go-client" >&2
