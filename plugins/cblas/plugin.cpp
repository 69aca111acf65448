// The CBLAS plugin's ABI table, init, shutdown, cache key and options.
// No pool.cpp: the pool is the SDK's host-memory pool (sdk::host_memory_pool()).
//
// Options (config.json "options" of the "cblas" backend):
//   library  OpenBLAS to load (path or soname); default: the one CMake found
//            at build time, then libopenblas.so.0 on the library path
//   threads  OpenBLAS threads (default: the CPUs this process may use)
// Unknown keys are warnings. OPENBLAS_CORETYPE from the environment is
// respected; otherwise the plugin may set it (openblas.hpp).
#include "cblas.hpp"

#include <kiln/sdk/host_cpu.hpp>
#include <kiln/sdk/plugin_entry.hpp>
#include <kiln/sdk/plugin_state.hpp>
#include <kiln/sdk/plugin_table.hpp>

#include <memory>

namespace kiln::cblas {

namespace {

sdk::PluginState<State> g_state("cblas");

std::vector<std::string> library_candidates(const sdk::Options& options) {
  if (options.has("library")) return {options.get_string("library", "")};
  std::vector<std::string> names;
#ifdef KILN_OPENBLAS_LIBRARY
  names.emplace_back(KILN_OPENBLAS_LIBRARY);  // found by CMake at build time
#endif
  names.emplace_back("libopenblas.so.0");
  return names;
}

kiln_error* init(kiln_init_args* raw) {
  return sdk::guard_init(raw, [&](const sdk::Options& options) {
    const std::vector<std::string> candidates = library_candidates(options);
    const std::int64_t threads = options.get_int("threads", sdk::read_host_cpu().cores);
    if (threads < 1 || threads > 4096)
      sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "cblas: option 'threads' must be in 1..4096, got " + std::to_string(threads));
    options.warn_unknown_keys("cblas");
    auto s = std::make_unique<State>();
    s->blas = &load_openblas(candidates);
    s->threads = static_cast<int>(threads);
    s->blas->set_num_threads(s->threads);
    s->info = describe_device(*s->blas, s->threads);
    s->cache_key = std::string("cblas ") + kPluginVersion + "; " + s->blas->path + " " + s->blas->version + " " + s->blas->core;
    sdk::Host::log(KILN_LOG_INFO, std::string("cblas: ") + s->info.name + ", " + std::to_string(s->threads) + " threads, " + s->blas->path);
    g_state.set(std::move(s));
  });
}

void shutdown() { g_state.reset(); }

// One cache key for cblas:0: the library's identity.
kiln_error* cache_key(kiln_cache_key_args* raw) {
  return sdk::answer_cache_key(raw, [](kiln_device*) -> const std::string& { return state().cache_key; });
}

}  // namespace

State& state() { return g_state.get(); }

kiln_plugin_api make_table() {
  return sdk::plugin_table({.name = "cblas",
                            .version = kPluginVersion,
                            .description = "OpenBLAS: runs matrix-product kernels as sgemm/dgemm calls"},
                           {init, shutdown, cache_key}, kDeviceFunctions, sdk::host_memory_pool(), kCompileFunctions,
                           kLaunchFunctions);
}

}  // namespace kiln::cblas

KILN_SDK_PLUGIN_QUERY(kiln::cblas::make_table)
