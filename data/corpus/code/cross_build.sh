#!/bin/sh
set -eu
BUILD_DIR="${BUILD_DIR:-build-aarch64}"
cmake -S . -B "$BUILD_DIR" \
  -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
  -DZLIB_ROOT=/opt/sysroots/aarch64/usr \
  -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD_DIR" --parallel 4 2>&1 | tee "$BUILD_DIR/build.log"
grep -n "error:" "$BUILD_DIR/build.log" || echo "no errors"
