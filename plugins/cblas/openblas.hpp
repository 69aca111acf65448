// OpenBLAS, loaded at run time into a fresh link-map namespace (dlmopen).
//
// Why not linked: OpenBLAS picks its kernels once, when it loads, from
// OPENBLAS_CORETYPE or its own CPU table; 0.3.21 does not know recent Xeons
// and falls back to Prescott kernels (~5x slower, PLATFORM.md). So the plugin
// loads one copy, asks it which core it chose, and when that core lacks the
// SIMD the CPU has (AVX-512 or AVX2) and the user did not set
// OPENBLAS_CORETYPE, sets it (SkylakeX / Haswell) and loads a second, fresh
// copy that reads it. The first copy stays loaded (unloading a library with
// running threads is unsafe). Copies are loaded once per process, however
// often the plugin is initialised (glibc offers only 16 namespaces).
// A separate namespace also keeps us apart from any other BLAS in the host.
#pragma once

#include <cblas.h>

#include <string>
#include <vector>

namespace kiln::cblas {

struct OpenBlas {
  std::string path;           // the library loaded
  std::string version;        // "0.3.21"
  std::string core;           // the kernels in use ("SkylakeX")
  std::string fallback_core;  // the core it picked by itself, when kiln overrode it; else ""
  bool user_coretype = false; // OPENBLAS_CORETYPE came from the environment
  decltype(&cblas_sgemm) sgemm = nullptr;
  decltype(&cblas_dgemm) dgemm = nullptr;
  void (*set_num_threads)(int) = nullptr;
};

// Loads the first of `candidates` that loads (paths or sonames), fixing the
// core as above. Throws PluginError(UNAVAILABLE) listing each failure.
const OpenBlas& load_openblas(const std::vector<std::string>& candidates);

}  // namespace kiln::cblas
