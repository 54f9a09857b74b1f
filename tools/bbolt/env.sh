# Sourced (not executed) by crashlab's bbolt scripts: sets up Go in GOPATH mode so
# that our programs can `import bolt "go.etcd.io/bbolt"` from Debian's
# golang-github-coreos-bbolt-dev (bbolt 1.3.6) under /usr/share/gocode.
#
# Exports:
#   GO111MODULE=off        GOPATH mode, no module downloads
#   GOPATH                 a scratch dir under ${TMPDIR:-/tmp} + /usr/share/gocode
#   GOCACHE                build cache under ${TMPDIR:-/tmp}
#   GOFLAGS=-mod=          cleared (module flags are invalid in GOPATH mode)
#   GOPROXY=off GOTOOLCHAIN=local   never touch the network
#   BBOLT_TOOLS_DIR        this directory
#   BBOLT_BIN_DIR          where run.sh puts the built binaries
_bbolt_tmp="${TMPDIR:-/tmp}/crashlab-bbolt"
export GO111MODULE=off
export GOPATH="$_bbolt_tmp/gopath:/usr/share/gocode"
export GOCACHE="$_bbolt_tmp/gocache"
export GOFLAGS=
export GOPROXY=off
export GOTOOLCHAIN=local
export CGO_ENABLED=0
BBOLT_TOOLS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export BBOLT_TOOLS_DIR
export BBOLT_BIN_DIR="$_bbolt_tmp/bin"
mkdir -p "$_bbolt_tmp/gopath" "$GOCACHE" "$BBOLT_BIN_DIR"
unset _bbolt_tmp
