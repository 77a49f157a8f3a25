#!/bin/sh
# layers.sh: the folders of lib/ include one another in one direction.
#
# lib/ is the shared core; each folder is a layer (HACKING.md, "Layout"):
#
#   folder      may include (besides the core, itself, include/ and the
#               generated onnx.pb-c.h)
#   core        nothing of any folder
#   model/      nothing
#   quant/      nothing
#   check/      model/ quant/
#   annotate/   model/ check/
#   kernels/    quant/ and, of run/, only the kernel interface
#               run/kernel_api.h
#   run/        model/ check/ quant/ kernels/ annotate/
#   report/     model/ check/ annotate/ (nothing of run/)
#   src/        nothing of lib/ (the tool speaks through include/oac.h
#               and its own cli.h)
#
# Every quoted include of a lib/ or src/ file is resolved against that
# table; a forbidden one is printed as FILE:LINE: FOLDER includes HEADER.
# The script proves itself on a copy of the tree: an include of
# run/exec.h planted in model/load.c and one of check/graph.h planted in
# kernels/math.c must both be caught, and one of run/kernel_api.h in
# kernels/math.c must not.
#
# Usage: layers.sh [TOP_SRCDIR]   (default "$top_srcdir")
set -u

allowed() {  # FOLDER -> the folders it may include
    case $1 in
        core|model|quant) echo "" ;;
        check)    echo "model quant" ;;
        annotate) echo "model check" ;;
        kernels)  echo "quant run/kernel_api.h" ;;
        run)      echo "model check quant kernels annotate" ;;
        report)   echo "model check annotate" ;;
        src)      echo "" ;;
        *)        echo "?" ;;
    esac
}

# scan TOP: prints the forbidden includes, exits 1 when there is one.
scan() {
    top=$1 bad=0
    for f in $(cd "$top" && find lib src -name '*.[ch]' | sort); do
        case $f in
            lib/onnx.pb-c.*) continue ;;
            lib/*/*) folder=${f#lib/}; folder=${folder%%/*} ;;
            lib/*) folder=core ;;
            src/*) folder=src ;;
        esac
        ok=$(allowed "$folder")
        out=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' \
                "$top/$f" | while read -r h; do
            case $h in
                */*) ;;          # a folder's header
                *) continue ;;   # core, include/, generated, a local .def
            esac
            dir=${h%%/*}
            [ "$dir" = "$folder" ] && continue
            pass=no
            for a in $ok; do
                [ "$a" = "$dir" ] || [ "$a" = "$h" ] && pass=yes
            done
            [ $pass = yes ] || echo "$h"
        done)
        for h in $out; do
            line=$(grep -n "#[[:space:]]*include[[:space:]]*\"$h\"" "$top/$f" | head -1 | cut -d: -f1)
            echo "$f:$line: $folder/ includes $h"
            bad=1
        done
    done
    return $bad
}

top=${1:-${top_srcdir:-.}}
[ -d "$top/lib" ] || { echo "layers.sh: no lib/ under $top" >&2; exit 2; }
rc=0
scan "$top" || { echo "FAIL: forbidden includes (above); see the table in tests/layers.sh"; rc=1; }

# The check proves itself on a copy.
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
cp -R "$top/lib" "$top/src" "$tmp/"
plant() {  # FILE HEADER EXPECTED(0 caught-not / 1 caught)
    cp "$top/$1" "$tmp/$1.orig"
    printf '#include "%s"\n' "$2" >> "$tmp/$1"
    scan "$tmp" >/dev/null; got=$?
    mv "$tmp/$1.orig" "$tmp/$1"
    if [ $got -ne "$3" ]; then
        echo "FAIL: \"$2\" planted in $1: status $got, expected $3"; rc=1
    fi
}
if scan "$tmp" >/dev/null; then
    plant lib/model/load.c run/exec.h 1
    plant lib/kernels/math.c check/graph.h 1
    plant lib/kernels/math.c run/kernel_api.h 0
    plant src/main.c check/analysis.h 1
fi
[ $rc -eq 0 ] && echo "layers.sh: every include of lib/ and src/ follows the layers"
exit $rc
