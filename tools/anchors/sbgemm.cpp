#include "sbgemm.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

namespace kiln::anchors {

namespace {

// cblas.h's enums (row-major, no transpose) and the two entry points.
constexpr int kRowMajor = 101, kNoTrans = 111;
using Sbgemm = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const std::uint16_t* a,
                        int lda, const std::uint16_t* b, int ldb, float beta, float* c, int ldc);
using SetThreads = void (*)(int);

constexpr const char* kHowToBuild = "build it with scripts/build-sbgemm-anchor.sh (about 7 minutes on 1 core) or set "
                                    "KILN_SBGEMM_LIBRARY to an OpenBLAS built with BUILD_BFLOAT16=1";

std::uint16_t bf16_of(float x) {
  std::uint32_t u = 0;
  std::memcpy(&u, &x, 4);
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);  // nearest even; no NaNs here
}

}  // namespace

std::string sbgemm_library_path() {
  if (const char* path = std::getenv("KILN_SBGEMM_LIBRARY"); path != nullptr && *path != '\0') return path;
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : "") + "/.cache/kiln/sbgemm-anchor/libopenblas.so";
}

SbgemmTiming time_sbgemm(std::int64_t m, std::int64_t n, std::int64_t k, unsigned threads, unsigned repeats) {
  SbgemmTiming t;
  t.library = sbgemm_library_path();
  if (!std::filesystem::exists(t.library)) {
    t.error = "the cblas_sbgemm anchor is missing (" + t.library + " does not exist): " + kHowToBuild;
    return t;
  }
  // Loaded once, never unloaded (its threads outlive a dlclose).
  void* library = dlopen(t.library.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND | RTLD_NODELETE);
  if (library == nullptr) {
    const char* why = dlerror();
    t.error = "cannot load " + t.library + ": " + (why != nullptr ? why : "?");
    return t;
  }
  auto sbgemm = reinterpret_cast<Sbgemm>(dlsym(library, "cblas_sbgemm"));
  auto set_threads = reinterpret_cast<SetThreads>(dlsym(library, "openblas_set_num_threads"));
  if (sbgemm == nullptr) {
    t.error = t.library + " has no cblas_sbgemm (built without BUILD_BFLOAT16): " + kHowToBuild;
    return t;
  }
  if (set_threads != nullptr) set_threads(static_cast<int>(std::max(1u, threads)));
  std::vector<std::uint16_t> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
  std::vector<float> c(static_cast<std::size_t>(m * n));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (auto& x : a) x = bf16_of(dist(rng));
  for (auto& x : b) x = bf16_of(dist(rng));
  double best_s = 0;
  for (unsigned r = 0; r <= std::max(1u, repeats); ++r) {  // the first run is a warm-up
    const auto start = std::chrono::steady_clock::now();
    sbgemm(kRowMajor, kNoTrans, kNoTrans, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a.data(),
           static_cast<int>(k), b.data(), static_cast<int>(n), 0.0f, c.data(), static_cast<int>(n));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r > 0 && (best_s == 0 || seconds < best_s)) best_s = seconds;
  }
  if (best_s <= 0) {
    t.error = "cblas_sbgemm took no measurable time";
    return t;
  }
  t.gflops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / best_s * 1e-9;
  return t;
}

}  // namespace kiln::anchors
