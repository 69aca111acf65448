#!/usr/bin/env bash
# gpu-bundle.sh [BUILD_DIR] [DEST]: the kiln CLI, libkiln and the GPU
# machine's plugins (cuda, opencl) of a build tree on this machine, stripped,
# with the plugin probe (which isolates a plugin's init in a process of its
# own), into DEST (default .gpu/prebuilt, git-ignored), so that a device call runs
# `scripts/gpu-check.sh --prebuilt .gpu/prebuilt` (carry ".gpu" and ".debs")
# instead of building there: the device's minutes go to measuring.
#
# Why it runs there: the GPU machine is a newer Ubuntu whose system has what
# these binaries link (libstdc++, libfmt.so.9, libsqlite3.so.0); the CUDA
# plugin opens libcuda and NVRTC at run time; libkiln finds its plugins
# beside itself (lib/kiln/plugins), and gpu-check puts the bundle's lib/ on
# LD_LIBRARY_PATH (the build tree's RUNPATH names this machine's folders).
# The core is compiled without -march, so no instruction of this CPU is
# assumed there. Checked here before it is used: `kiln devices` run from
# DEST must list the bundled plugins (the CUDA one skipped here: no driver).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
DEST=${2:-$ROOT/.gpu/prebuilt}
cmake --build "$BUILD" --target kiln_cli kiln_plugin_probe kiln-plugin-cuda kiln-plugin-opencl >/dev/null
rm -rf "$DEST"
mkdir -p "$DEST/bin" "$DEST/lib/kiln/plugins"
cp "$BUILD/bin/kiln" "$DEST/bin/"
cp -P "$BUILD"/lib/libkiln.so* "$DEST/lib/"
cp "$BUILD/lib/kiln/kiln-plugin-probe" "$DEST/lib/kiln/"
for plugin in cuda opencl; do
  cp "$BUILD/lib/kiln/plugins/libkiln-$plugin.so" "$DEST/lib/kiln/plugins/"
done
strip --strip-debug "$DEST/bin/kiln" "$DEST"/lib/libkiln.so.*.* "$DEST/lib/kiln/kiln-plugin-probe" "$DEST"/lib/kiln/plugins/*.so
if ! LD_LIBRARY_PATH="$DEST/lib" "$DEST/bin/kiln" devices >"$DEST/devices-here.txt" 2>&1 ||
   ! grep -q "$DEST/lib/kiln/plugins/libkiln-cuda.so" "$DEST/devices-here.txt" ||
   grep -q "plugin probe" "$DEST/devices-here.txt"; then
  echo "gpu-bundle.sh: the bundle does not run on its own:" >&2
  cat "$DEST/devices-here.txt" >&2
  exit 1
fi
du -sh "$DEST" | cut -f1 | xargs echo "gpu-bundle.sh: $DEST"
