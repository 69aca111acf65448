# shellcheck shell=bash
# scripts/common.sh - shared by setup.sh and test.sh: install what is missing
# (Debian 12), configure, build. Sourced, not run.
#
# Environment:
#   KILN_BUILD_DIR   build folder (default: build)
#   KILN_JOBS        parallel build jobs (default: number of cores)
#   KILN_SKIP_APT=1  never call apt-get (e.g. a machine where nothing can be
#                    installed); CMake then reports what it cannot find
#   KILN_CMAKE_ARGS  extra arguments for the configure step
#   KILN_WERROR=0    warnings do not fail the build (default: they do)

KILN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KILN_BUILD_DIR="${KILN_BUILD_DIR:-$KILN_ROOT/build}"
KILN_JOBS="${KILN_JOBS:-$(nproc 2>/dev/null || echo 2)}"

# The Debian 12 packages kiln builds and tests with (the platform notes' install line).
KILN_PACKAGES=(
  cmake g++ clang libomp-dev libclang-rt-14-dev pkg-config ccache
  libboost1.81-dev libboost-json1.81-dev
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
  libvulkan-dev mesa-vulkan-drivers vulkan-tools vulkan-validationlayers
  glslang-tools glslang-dev libshaderc-dev glslc spirv-tools
  libopenblas-dev libsqlite3-dev libcli11-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-numpy python3-pytest
)

kiln_log() { printf '\033[1m==> %s\033[0m\n' "$*"; }

kiln_install_missing_packages() {
  if [[ "${KILN_SKIP_APT:-0}" == 1 ]]; then
    kiln_log "KILN_SKIP_APT=1: not checking Debian packages"
    return 0
  fi
  if ! command -v dpkg-query >/dev/null; then
    kiln_log "no dpkg here: skipping the package check (install the packages listed here by hand)"
    return 0
  fi
  local missing=()
  for package in "${KILN_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$package")
    fi
  done
  if ((${#missing[@]} == 0)); then
    kiln_log "all ${#KILN_PACKAGES[@]} packages present"
    return 0
  fi
  kiln_log "installing missing packages: ${missing[*]}"
  local sudo=()
  if ((EUID != 0)); then
    if ! command -v sudo >/dev/null; then
      echo "error: not root and no sudo; install these packages: ${missing[*]} (or set KILN_SKIP_APT=1)" >&2
      return 1
    fi
    sudo=(sudo)
  fi
  if ! "${sudo[@]}" apt-get update ||
     ! DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; then
    echo "error: could not install: ${missing[*]} (set KILN_SKIP_APT=1 to build with what is present)" >&2
    return 1
  fi
}

kiln_configure() {
  local args=(-S "$KILN_ROOT" -B "$KILN_BUILD_DIR")
  # An existing build folder keeps its generator.
  if [[ ! -f "$KILN_BUILD_DIR/CMakeCache.txt" ]] && command -v ninja >/dev/null; then args+=(-G Ninja); fi
  if command -v ccache >/dev/null; then args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache); fi
  # Warnings fail the scripted builds (the quick start and CI share them);
  # KILN_WERROR=0 turns that off for a compiler newer than Debian 12's.
  args+=("-DKILN_WERROR=$([[ "${KILN_WERROR:-1}" == 0 ]] && echo OFF || echo ON)")
  # Line tables only (-g1): backtraces and sanitizer reports keep file:line,
  # and the build takes about a third less time than with full -g (objects
  # are a twentieth of the size, so the 60-odd links are quicker too). Full
  # debug information: KILN_CMAKE_ARGS=-DCMAKE_BUILD_TYPE=Debug.
  args+=("-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")
  # shellcheck disable=SC2206
  args+=(${KILN_CMAKE_ARGS:-})
  kiln_log "configure: cmake ${args[*]}"
  cmake "${args[@]}"
}

kiln_build() {
  kiln_log "build ($KILN_JOBS jobs)"
  cmake --build "$KILN_BUILD_DIR" -j "$KILN_JOBS"
}

# kiln_clang_configure BUILD_DIR OPT CMAKE_ARGS...: configures an instrumented
# clang build (the sanitizer and TSan stages) in BUILD_DIR at optimization
# OPT with line tables only (enough for sanitizer stack traces), tests built
# like the libraries, ccache and Ninja where present. An existing folder
# keeps its settings.
kiln_clang_configure() {
  local build=$1 opt=$2
  shift 2
  local args=(-S "$KILN_ROOT" -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ "$@"
              -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$opt -gline-tables-only"
              "-DCMAKE_C_FLAGS_RELWITHDEBINFO=$opt -gline-tables-only" -DKILN_TEST_COMPILE_OPTIONS=)
  if command -v ninja >/dev/null; then args+=(-G Ninja); fi
  if command -v ccache >/dev/null; then args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache); fi
  if [[ -f "$build/CMakeCache.txt" ]]; then args=(-S "$KILN_ROOT" -B "$build"); fi
  kiln_log "clang build: cmake ${args[*]}"
  cmake "${args[@]}"
}
