#!/usr/bin/env bash
# deps.sh: install, from Debian 12 packages, whatever the build and the
# tests need and the machine lacks.  Safe to run again: it installs only
# what is missing and runs apt-get update only then.
set -euo pipefail

packages=(
  gcc make autoconf automake libtool pkg-config
  protobuf-c-compiler libprotobuf-c-dev libjansson-dev check
  python3 python3-jsonschema python3-onnx libonnx-testdata
  time valgrind git
)

# Node and npm for tests/ort_diff.sh (ONNX Runtime side by side): Debian's,
# only when the machine has no node/npm at all (another install is kept).
command -v node >/dev/null 2>&1 || command -v nodejs >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
    missing+=("$p")
done

# Optional: clang with libFuzzer for scripts/test.sh's fuzzing step
# (a few hundred MB; without it that step says "fuzz: skipped (no
# clang)").  Installed only when asked: OAC_FUZZ_DEPS=1.
if [ "${OAC_FUZZ_DEPS:-0}" = 1 ]; then
  for p in clang libclang-rt-14-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
      missing+=("$p")
  done
fi

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
