#!/usr/bin/env bash
# deps.sh: install, from Debian 12 packages, what the machine lacks for
# one part of the work.  Safe to run again: it installs only what is
# missing and runs apt-get update only then.
#
#   bash scripts/deps.sh build   what `configure && make` needs (the
#                                quickstart: compiler, C library headers,
#                                Autotools, protobuf-c, jansson, Check)
#   bash scripts/deps.sh suite   build, plus what `make check` and
#                                scripts/test.sh use (Python with
#                                jsonschema, onnx and yaml, ONNX's test
#                                data, valgrind, time, git, curl for
#                                the CI examples' lines); the default
#   bash scripts/deps.sh node    Node and npm, for the two steps of
#                                scripts/test.sh that install a package
#                                from the npm registry (ONNX Runtime, the
#                                SARIF Multitool); only when the machine
#                                has no node/npm at all
#
# Several parts may be named at once.  OAC_FUZZ_DEPS=1 adds clang with
# libFuzzer (a few hundred MB) for scripts/test.sh's fuzzing step.
set -euo pipefail

build=(
  gcc libc6-dev make autoconf automake libtool pkg-config
  protobuf-c-compiler libprotobuf-c-dev libjansson-dev check
)
suite=(
  python3 python3-jsonschema python3-onnx python3-yaml libonnx-testdata
  time valgrind git curl
)

[ $# -gt 0 ] || set -- suite
packages=()
for part in "$@"; do
  case $part in
    build) packages+=("${build[@]}") ;;
    suite) packages+=("${build[@]}" "${suite[@]}") ;;
    node)
      command -v node >/dev/null 2>&1 || command -v nodejs >/dev/null 2>&1 || packages+=(nodejs)
      command -v npm >/dev/null 2>&1 || packages+=(npm) ;;
    *) echo "deps: unknown part '$part' (build, suite or node)" >&2; exit 2 ;;
  esac
done
if [ "${OAC_FUZZ_DEPS:-0}" = 1 ]; then
  packages+=(clang libclang-rt-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
  case " ${missing[*]} " in *" $p "*) continue ;; esac
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
    missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "deps: run as root (or install these packages): ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
