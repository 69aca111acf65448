#!/usr/bin/env bash
# scripts/build-sbgemm-anchor.sh - builds the bf16 matmul anchor: OpenBLAS's
# cblas_sbgemm, which Debian 12's libopenblas lacks (built without
# BUILD_BFLOAT16; docs/passes.md, "The bf16 anchor"). Takes Debian's own
# source of the installed version (apt-get source openblas, adding a deb-src
# entry for bookworm if there is none) and builds only the library, single
# precision and bf16, no LAPACK, no Fortran, 2 pthreads, at low priority.
#
# Output: $KILN_SBGEMM_DIR/libopenblas.so (default
# ~/.cache/kiln/sbgemm-anchor), the file `kiln bench` and
# bench/cpu_backends_bench load when KILN_SBGEMM_LIBRARY is unset.
#
# Environment:
#   KILN_SBGEMM_DIR     output and work folder
#   KILN_SBGEMM_TARGET  OpenBLAS TARGET (default COOPERLAKE: AVX-512 BF16
#                       kernels; SAPPHIRERAPIDS adds AMX where the CPU has it)
#   KILN_SBGEMM_JOBS    make -j (default 2)
set -euo pipefail

dir="${KILN_SBGEMM_DIR:-$HOME/.cache/kiln/sbgemm-anchor}"
target="${KILN_SBGEMM_TARGET:-COOPERLAKE}"
jobs="${KILN_SBGEMM_JOBS:-2}"
mkdir -p "$dir"
log() { printf '\033[1m==> %s\033[0m\n' "$*"; }
# Whether a library exports cblas_sbgemm. Not `nm | grep -q`: grep exits at
# the first match, nm then dies of SIGPIPE, and pipefail fails the pipeline
# (a built library was reported as lacking the symbol, 2026-12-05).
has_sbgemm() { [[ -f "$1" ]] && [[ "$(nm -D "$1" | grep -c ' T cblas_sbgemm$')" -gt 0 ]]; }

if has_sbgemm "$dir/libopenblas.so"; then
  log "already built: $dir/libopenblas.so (delete it to rebuild)"
  exit 0
fi

src="$(find "$dir" -maxdepth 1 -type d -name 'openblas-*' | head -n 1)"
if [[ -z "$src" ]]; then
  # apt-get source needs a deb-src line; Debian's archive is the one registry
  # these machines reach.
  if ! apt-get source --print-uris openblas >/dev/null 2>&1; then
    if ((EUID != 0)); then
      echo "error: no deb-src entry for bookworm and not root: add" >&2
      echo "  Types: deb-src / URIs: http://deb.debian.org/debian / Suites: bookworm / Components: main" >&2
      echo "to /etc/apt/sources.list.d/ and run apt-get update" >&2
      exit 1
    fi
    log "adding /etc/apt/sources.list.d/kiln-bookworm-src.sources (deb-src bookworm main)"
    cat >/etc/apt/sources.list.d/kiln-bookworm-src.sources <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    apt-get update -qq
  fi
  log "apt-get source openblas (into $dir)"
  (cd "$dir" && apt-get source openblas >"$dir/source.log" 2>&1) ||
    { tail -n 20 "$dir/source.log" >&2; exit 1; }
  src="$(find "$dir" -maxdepth 1 -type d -name 'openblas-*' | head -n 1)"
fi
[[ -n "$src" ]] || { echo "error: no openblas source folder under $dir" >&2; exit 1; }

# Only the library: single precision (sgemm, for a like-for-like check) and
# bf16; the rest of BLAS, LAPACK and the tests are not needed by an anchor.
log "building $(basename "$src") TARGET=$target BUILD_BFLOAT16=1 (make -j$jobs, nice 10)"
flags=(TARGET="$target" BUILD_BFLOAT16=1 BUILD_SINGLE=1 BUILD_DOUBLE=0 BUILD_COMPLEX=0 BUILD_COMPLEX16=0
       NO_LAPACK=1 NOFORTRAN=1 NO_LAPACKE=1 USE_OPENMP=0 USE_THREAD=1 NUM_THREADS=2 NO_STATIC=1 NO_CBLAS=0
       ONLY_CBLAS=1 NO_AFFINITY=1)
nice -n 10 make -C "$src" -j"$jobs" "${flags[@]}" libs shared >"$dir/build.log" 2>&1 ||
  { tail -n 30 "$dir/build.log" >&2; echo "error: build failed; log: $dir/build.log" >&2; exit 1; }
so="$(find "$src" -maxdepth 1 -name 'libopenblas*.so' -type f | head -n 1)"
[[ -n "$so" ]] || { echo "error: no libopenblas*.so in $src (log: $dir/build.log)" >&2; exit 1; }
cp "$so" "$dir/libopenblas.so"
has_sbgemm "$dir/libopenblas.so" ||
  { echo "error: $dir/libopenblas.so has no cblas_sbgemm" >&2; exit 1; }
log "built $dir/libopenblas.so (cblas_sbgemm present); kiln bench finds it there, or set KILN_SBGEMM_LIBRARY"
