#!/usr/bin/env bash
# Installs the packages some hot paths run (`just setup`; CI calls it before the tests):
# libdqlite, the real dqlite node that sqlmix's `backend=libdqlite` loads at run time
# (libdqlite0 brings libraft2, libuv1 and libsqlite3 with it; the -dev package is not
# needed, nothing links it), and the real directory servers of the `ldap` hot path (389
# Directory Server, OpenLDAP's slapd) with the LDAP command-line tools. Debian or Ubuntu,
# as root (or with sudo). Without them everything else still runs: `just matrix` skips
# the files that need them and says so in one line.
set -euo pipefail

# sqlmix backend=libdqlite (benches/sqlmix-libdqlite*.toml)
DQLITE_PACKAGES=(libdqlite0)
# sqlmix client=go (benches/sqlmix-libdqlite-go.toml): Juju's client stack, go-dqlite under
# Go's database/sql, built by scripts/build-go-client.sh in GOPATH mode from these alone
GO_PACKAGES=(golang-go golang-github-canonical-go-dqlite-dev)
# ldap hot path (benches/389ds.toml, benches/openldap.toml)
LDAP_PACKAGES=(389-ds-base python3-lib389 ldap-utils slapd)

# server hot path's shipped examples (benches/server-memcached.toml, server-nginx.toml;
# server-389ds-ldclt.toml uses 389-ds-base's ldclt)
SERVER_PACKAGES=(memcached nginx-light wrk)

# lease and pool on a real database server (benches/lease-postgres.toml,
# pool-postgres.toml): PostgreSQL 15 and pg_stat_statements (in -contrib on older
# releases, in the server package since 15; named for both)
POSTGRES_PACKAGES=(postgresql postgresql-contrib)

PACKAGES=("${DQLITE_PACKAGES[@]}" "${GO_PACKAGES[@]}" "${LDAP_PACKAGES[@]}" "${SERVER_PACKAGES[@]}" "${POSTGRES_PACKAGES[@]}")
here="$(cd "$(dirname "$0")" && pwd)"

# `--if-missing` (what `just matrix` runs first): nothing when the real systems are there
# already; otherwise install them, and where that cannot be done (not root, no apt, no
# registry) say so in one line and exit 0, so the matrix still runs and skips their files.
if [ "${1:-}" = "--if-missing" ]; then
  have_dqlite() { ldconfig -p 2>/dev/null | grep -q 'libdqlite\.so\.0'; }
  have_ldap() { command -v ns-slapd >/dev/null 2>&1 || [ -x /usr/sbin/ns-slapd ]; }
  have_postgres() { compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null; }
  have_go() { command -v go >/dev/null 2>&1 && [ -d /usr/share/gocode/src/github.com/canonical/go-dqlite/driver ]; }
  # The default matrix needs only these; the server examples (`just full`) are
  # skipped in one line where their programs are missing.
  if have_dqlite && have_go && have_ldap && [ -x /usr/sbin/slapd ] && have_postgres; then
    # The Go client is built (or rebuilt when its source changed) by the lab on demand;
    # building it here keeps that out of the measured time.
    bash "$here/build-go-client.sh" 2>/dev/null || true
    exit 0
  fi
  echo "setup: installing the real systems the default matrix measures (${PACKAGES[*]}); before the run, not counted in budget= (it covers the measurement only)" >&2
  log="${TMPDIR:-/tmp}/lab-setup.log"
  if bash "$0" >"$log" 2>&1; then
    rm -f "$log"
  else
    echo "setup: could not install them (see $log); the matrix skips their files, as it says below" >&2
  fi
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1 || [ ! -r /etc/debian_version ]; then
  echo "setup.sh: this machine is not Debian or Ubuntu (no apt-get); install by hand: ${PACKAGES[*]}" >&2
  exit 2
fi
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "setup.sh: run as root (apt-get install needs it): ${PACKAGES[*]}" >&2
    exit 2
  fi
fi
# slapd's package asks for an admin password and creates a default database of its own;
# the lab never uses either (each cell configures its own slapd), so answer nothing.
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update
"${SUDO[@]}" apt-get install -y --no-install-recommends "${PACKAGES[@]}"
echo "setup.sh: installed ${PACKAGES[*]}"
bash "$here/build-go-client.sh"
