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
# ldap hot path (benches/389ds.toml, benches/openldap.toml)
LDAP_PACKAGES=(389-ds-base python3-lib389 ldap-utils slapd)

PACKAGES=("${DQLITE_PACKAGES[@]}" "${LDAP_PACKAGES[@]}")

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
