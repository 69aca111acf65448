// The CBLAS plugin's ABI table, init and options.
//
// Options (config.json "options" of the "cblas" backend):
//   library  OpenBLAS to load (path or soname); default: the one CMake found
//            at build time, then libopenblas.so.0 on the library path
//   threads  OpenBLAS threads (default: the CPUs this process may use)
// Unknown keys are warnings. OPENBLAS_CORETYPE from the environment is
// respected; otherwise the plugin may set it (openblas.hpp).
#include "cblas_plugin.hpp"

#include <kiln/sdk/host_cpu.hpp>
#include <kiln/sdk/host_memory.hpp>
#include <kiln/sdk/plugin_entry.hpp>

namespace kiln::cblas {

State& state() {
  static State s;
  return s;
}

namespace {

struct Device {};
Device the_device;

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
    State& s = state();
    s.blas = &load_openblas(candidates);
    s.threads = static_cast<int>(threads);
    s.blas->set_num_threads(s.threads);
    s.info = describe_device(*s.blas, s.threads);
    s.cache_key = std::string("cblas ") + kPluginVersion + "; " + s.blas->path + " " + s.blas->version + " " + s.blas->core;
    sdk::Host::log(KILN_LOG_INFO, std::string("cblas: ") + s.info.name + ", " + std::to_string(s.threads) + " threads, " + s.blas->path);
  });
}

void shutdown() {}

// One device: OpenBLAS on the host CPU.
std::size_t one_device() { return 1; }

kiln_error* device_count(kiln_device_count_args* raw) { return sdk::answer_device_count(raw, one_device); }

kiln_error* device_info(kiln_device_info_args* raw) {
  return sdk::answer_device_info(raw, one_device, [](std::uint32_t) -> const kiln_device_info& { return state().info; });
}

kiln_error* device_open(kiln_device_open_args* raw) {
  return sdk::answer_device_open(raw, one_device,
                                 [](std::uint32_t) { return reinterpret_cast<kiln_device*>(&the_device); });
}

void device_close(kiln_device*) {}

const kiln_plugin_api kApi = {
    .struct_size = KILN_PLUGIN_API_STRUCT_SIZE,
    .abi_major = KILN_ABI_MAJOR,
    .abi_minor = KILN_ABI_MINOR,
    .name = "cblas",
    .version = kPluginVersion,
    .description = "OpenBLAS: runs matrix-product kernels as sgemm/dgemm calls",
    .init = init,
    .shutdown = shutdown,
    .device_count = device_count,
    .device_info = device_info,
    .device_open = device_open,
    .device_close = device_close,
    .device_synchronize = sdk::host_device_synchronize,
    .memory_info = sdk::host_memory_info,
    .buffer_alloc = sdk::host_buffer_alloc,
    .buffer_free = sdk::host_buffer_free,
    .buffer_host_pointer = sdk::host_buffer_host_pointer,
    .copy_to_device = sdk::host_copy_to_device,
    .copy_to_host = sdk::host_copy_to_host,
    .copy_device_to_device = sdk::host_copy_device_to_device,
    .event_wait = sdk::host_event_wait,
    .event_release = sdk::host_event_release,
    .compile = compile,
    .program_source = program_source,
    .program_release = program_release,
    .launch = launch,
    .launch_timed = launch_timed,
    .cache_key = cache_key,
    .extensions = nullptr,
    .shutdown2 = nullptr,      // the 1.0 forms above are used
    .device_close2 = nullptr,
    .buffer_free2 = nullptr,
    .event_query = sdk::host_event_query,
};

}  // namespace

}  // namespace kiln::cblas

extern "C" KILN_PLUGIN_EXPORT const kiln_plugin_api* kiln_plugin_query(std::uint32_t host_major, std::uint32_t) {
  return host_major == KILN_ABI_MAJOR ? &kiln::cblas::kApi : nullptr;
}
