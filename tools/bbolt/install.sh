#!/usr/bin/env bash
# Install the toolchain for crashlab's bbolt interoperability tools:
#   Go 1.19 (Debian package golang-go) and bbolt 1.3.6 sources
#   (golang-github-coreos-bbolt-dev, importable as go.etcd.io/bbolt in GOPATH mode).
#
# Idempotent: when `go` and the bbolt sources are already present it does nothing
# (no apt-get call) and exits 0 at once. Otherwise it runs apt-get update + install,
# retrying once after a short sleep. Exit 0 when everything is available, non-zero
# with a loud message otherwise.
set -u

BBOLT_SRC=/usr/share/gocode/src/go.etcd.io/bbolt
PKGS=(golang-go golang-github-coreos-bbolt-dev)

have_all() {
    command -v go >/dev/null 2>&1 && [ -f "$BBOLT_SRC/db.go" ]
}

if have_all; then
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    SUDO=sudo
else
    SUDO=
fi

try_install() {
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q &&
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${PKGS[@]}"
}

if ! try_install; then
    echo "install.sh: apt-get failed, retrying once in 10s..." >&2
    sleep 10
    try_install
fi

if have_all; then
    echo "install.sh: ok: $(go version); bbolt sources at $BBOLT_SRC" >&2
    exit 0
fi

cat >&2 <<MSG
########################################################################
## install.sh: FAILED to install Go and/or bbolt 1.3.6 sources.
##   go on PATH:        $(command -v go || echo MISSING)
##   bbolt sources:     $( [ -f "$BBOLT_SRC/db.go" ] && echo present || echo "MISSING ($BBOLT_SRC)")
##   packages needed:   ${PKGS[*]} (Debian)
########################################################################
MSG
exit 1
