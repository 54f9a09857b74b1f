#!/usr/bin/env bash
# crashlab bbolt interoperability driver (bbolt 1.3.6 / Go 1.19 from Debian).
#
#   bash tools/bbolt/run.sh fixtures OUTDIR
#       Regenerate the fixture DBs (NAME.db + expected NAME.json) into OUTDIR
#       (the committed ones live in corpus/bbolt: `bash tools/bbolt/run.sh fixtures corpus/bbolt`).
#
#   bash tools/bbolt/run.sh escaped OUTDIR
#       Write OUTDIR/escaped.db + escaped.json: a freelist of more than 0xFFFF ids, in
#       bbolt's count escape (about 90 MB, so made on demand, never committed).
#
#   bash tools/bbolt/run.sh check FILE...
#       Run bboltcheck on each FILE (read-only open, tx.Check(), full dump), each under
#       `ulimit -v 4000000` and `timeout 60`.
#       stdout: exactly one line per FILE, in argument order: bboltcheck's JSON
#         {"page_size":N,"buckets":{...},"sequences":{...},"check_errors":[...],"meta_txid":N}
#         or `null` when bboltcheck printed nothing (the file could not be opened, or it
#         was killed by the timeout/memory limit).
#       stderr: bboltcheck's messages plus one line `run.sh: FILE: exit N (...)` per file.
#       Exit status: 0 when every file checked clean, otherwise the largest bboltcheck
#         exit status (1 = Check errors, 2 = open failure or bbolt panic/crash,
#         124 = timeout, 137 = killed).
#
# Every command first installs the toolchain if needed (install.sh), then builds the Go
# programs once into a temp bin dir (see env.sh) with `go build`.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

usage() {
    sed -n '2,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

[ $# -ge 1 ] || usage

bash "$here/install.sh"
# shellcheck source=env.sh
source "$here/env.sh"

build() {
    local prog
    for prog in mkfixtures bboltcheck; do
        (cd "$here" && go build -o "$BBOLT_BIN_DIR/$prog" "./$prog")
    done
}

cmd="$1"; shift
case "$cmd" in
fixtures)
    [ $# -eq 1 ] || usage
    build
    "$BBOLT_BIN_DIR/mkfixtures" "$1"
    ;;
escaped)
    [ $# -eq 1 ] || usage
    build
    "$BBOLT_BIN_DIR/mkfixtures" -escaped "$1"
    ;;
check)
    [ $# -ge 1 ] || usage
    build
    worst=0
    for f in "$@"; do
        out="$(mktemp)"
        set +e
        ( ulimit -v 4000000; exec timeout 60 "$BBOLT_BIN_DIR/bboltcheck" "$f" ) >"$out"
        rc=$?
        set -e
        if [ -s "$out" ]; then
            cat "$out"
        else
            echo null
        fi
        rm -f "$out"
        case $rc in
            0) what="ok" ;;
            1) what="check errors" ;;
            2) what="open failure or bbolt panic" ;;
            124) what="timeout" ;;
            *) what="killed/crashed" ;;
        esac
        echo "run.sh: $f: exit $rc ($what)" >&2
        [ "$rc" -gt "$worst" ] && worst=$rc
    done
    exit "$worst"
    ;;
*)
    usage
    ;;
esac
