#include "openblas.hpp"

#include <kiln/sdk/plugin_support.hpp>

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <set>

namespace kiln::cblas {

namespace {

struct Loaded {
  void* handle = nullptr;
  std::string core, config;
};

std::string call_string(void* handle, const char* symbol) {
  auto fn = reinterpret_cast<char* (*)()>(::dlsym(handle, symbol));
  const char* text = fn != nullptr ? fn() : nullptr;
  return text != nullptr ? text : "";
}

// A fresh copy in a new namespace: its constructor reads the environment anew.
Loaded load_fresh(const std::string& name, std::string& error) {
  Loaded l;
  l.handle = ::dlmopen(LM_ID_NEWLM, name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (l.handle == nullptr) {
    const char* why = ::dlerror();
    error = why != nullptr ? why : "unknown error";
    return l;
  }
  l.core = call_string(l.handle, "openblas_get_corename");
  l.config = call_string(l.handle, "openblas_get_config");
  return l;
}

// The core the CPU deserves when `core` falls short of its SIMD, else "".
std::string better_core(const std::string& core, const std::string& config) {
#if defined(__x86_64__)
  if (config.find("DYNAMIC_ARCH") == std::string::npos) return "";  // one core compiled in: nothing to choose
  static const std::set<std::string> avx512 = {"SkylakeX", "Cooperlake", "SapphireRapids"};
  static const std::set<std::string> avx2 = {"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids"};
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && !avx512.contains(core))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && !avx2.contains(core)) return "Haswell";
#else
  (void)core;
  (void)config;
#endif
  return "";
}

std::string version_of(const std::string& config) {
  // "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ..." -> "0.3.21"
  const auto begin = config.find(' ');
  if (config.rfind("OpenBLAS", 0) != 0 || begin == std::string::npos) return "";
  return config.substr(begin + 1, config.find(' ', begin + 1) - begin - 1);
}

template <class F>
F symbol(void* handle, const char* name, const std::string& path) {
  void* s = ::dlsym(handle, name);
  if (s == nullptr) sdk::fail(KILN_STATUS_UNAVAILABLE, "cblas: " + path + " has no " + name);
  return reinterpret_cast<F>(s);
}

OpenBlas load(const std::string& name) {
  std::string error;
  Loaded first = load_fresh(name, error);
  if (first.handle == nullptr) sdk::fail(KILN_STATUS_UNAVAILABLE, error);
  OpenBlas blas;
  blas.path = name;
  blas.user_coretype = std::getenv("OPENBLAS_CORETYPE") != nullptr;
  Loaded used = first;
  if (!blas.user_coretype) {
    if (const std::string want = better_core(first.core, first.config); !want.empty()) {
      ::setenv("OPENBLAS_CORETYPE", want.c_str(), 0);
      Loaded second = load_fresh(name, error);
      if (second.handle != nullptr && second.core == want) {
        used = second;
        blas.fallback_core = first.core;
        sdk::Host::log(KILN_LOG_INFO, "cblas: OpenBLAS chose " + first.core + " kernels on this CPU; set OPENBLAS_CORETYPE=" + want +
                                          " and loaded a fresh copy");
      } else {
        sdk::Host::log(KILN_LOG_WARNING, "cblas: OpenBLAS chose " + first.core + " kernels; OPENBLAS_CORETYPE=" + want +
                                             " did not take effect (" + (second.handle ? second.core : error) + ")");
      }
    }
  }
  blas.core = used.core;
  blas.version = version_of(used.config);
  blas.sgemm = symbol<decltype(&cblas_sgemm)>(used.handle, "cblas_sgemm", name);
  blas.dgemm = symbol<decltype(&cblas_dgemm)>(used.handle, "cblas_dgemm", name);
  blas.set_num_threads = symbol<void (*)(int)>(used.handle, "openblas_set_num_threads", name);
  return blas;
}

}  // namespace

const OpenBlas& load_openblas(const std::vector<std::string>& candidates) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<OpenBlas>> loaded;  // by candidate; never unloaded
  const std::lock_guard lock(mutex);
  std::string failures;
  for (const std::string& name : candidates) {
    if (auto it = loaded.find(name); it != loaded.end()) return *it->second;
    try {
      auto blas = std::make_unique<OpenBlas>(load(name));
      return *loaded.emplace(name, std::move(blas)).first->second;
    } catch (const sdk::PluginError& e) {
      failures += "\n  " + name + ": " + e.what();
    }
  }
  sdk::fail(KILN_STATUS_UNAVAILABLE, "cblas: cannot load OpenBLAS (option 'library'):" + failures);
}

}  // namespace kiln::cblas
