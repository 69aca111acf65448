// The C plugin's ABI table, init, shutdown, cache key and options.
// No pool.cpp: the pool is the SDK's host-memory pool (sdk::host_memory_pool()).
//
// Options (config.json "options" of the "c" backend):
//   compiler               "cc"     program name (on $PATH) or path; probed once at init
//   flags                  "-O3 -march=native -ffp-contract=fast"  (split at spaces)
//   fast_math              false    adds -ffast-math
//   openmp                 true     parallel group loops (-fopenmp; off with a warning if refused)
//   threads                cores    OpenMP threads per launch
//   cache_dir              $XDG_CACHE_HOME/kiln/c, else ~/.cache/kiln/c
//   keep_source            false    keep <key>.c next to each cached <key>.so
//   vector_math            true     exp/log/sin/cos/pow vectorise when the compiler finds
//                                   glibc's libmvec: f32 exp inline (kiln_exp_f32, within
//                                   1.01 ulp, results below FLT_MIN flushed to 0), the others
//                                   through libmvec (within its few ulps instead of libm's)
// -fno-math-errno is always passed: kernels never read errno, and without it
// no libm call can vectorise or inline. On AVX-512 targets -mprefer-vector-width=512
// is passed too, unless the flags choose a width (compiler.cpp, prefer_whole_vectors).
//   memory_bandwidth_gbps  0        reported to the cost model (0: unknown)
//   launch_timeout         60       seconds an isolated launch (KILN_TIMED_ISOLATE: autotuning
//                                   candidates) may take; past it its worker is killed and
//                                   the launch fails naming the limit
//   test_plant_fault       ""       tests only: "segv" or "hang" planted in every
//   test_plant_every       2        test_plant_every-th compiled program (c.hpp)
//   compile_timeout        300      seconds one run of the compiler may take; past it the
//                                   compiler (and what it started) is killed and the compile
//                                   fails naming the timeout
// Unknown keys are warnings.
#include "c.hpp"

#include <kiln/sdk/host_cpu.hpp>
#include <kiln/sdk/plugin_entry.hpp>
#include <kiln/sdk/plugin_state.hpp>
#include <kiln/sdk/plugin_table.hpp>

#include <cstdlib>
#include <memory>
#include <sstream>

namespace kiln::cplugin {

namespace {

sdk::PluginState<State> g_state("c");

std::vector<std::string> split_flags(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

std::filesystem::path default_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/')
    return std::filesystem::path(xdg) / "kiln" / "c";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    return std::filesystem::path(home) / ".cache" / "kiln" / "c";
  return std::filesystem::temp_directory_path() / "kiln-c-cache";
}

Settings read_settings(const sdk::Options& options) {
  Settings s;
  const std::string compiler = options.get_string("compiler", "cc");
  std::vector<std::string> flags = split_flags(options.get_string("flags", kDefaultFlags));
  if (options.get_bool("fast_math", false)) flags.push_back("-ffast-math");
  flags.push_back("-fno-math-errno");
  const bool vector_math = options.get_bool("vector_math", true);
  const bool openmp = options.get_bool("openmp", true);
  const std::int64_t threads = options.get_int("threads", sdk::read_host_cpu().cores);
  if (threads < 1 || threads > 4096)
    sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "c: option 'threads' must be in 1..4096, got " + std::to_string(threads));
  s.threads = static_cast<int>(threads);
  s.cache_dir = options.get_string("cache_dir", default_cache_dir().string());
  s.keep_source = options.get_bool("keep_source", false);
  s.memory_bandwidth_gbps = options.get_double("memory_bandwidth_gbps", 0.0);
  if (s.memory_bandwidth_gbps < 0)
    sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "c: option 'memory_bandwidth_gbps' must be >= 0");
  const double launch_timeout = options.get_double("launch_timeout", 60.0);
  if (!(launch_timeout > 0 && launch_timeout <= 86400))
    sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "c: option 'launch_timeout' must be in (0, 86400] seconds");
  s.launch_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(launch_timeout * 1000));
  s.plant_fault = options.get_string("test_plant_fault", "");
  if (!s.plant_fault.empty() && s.plant_fault != "segv" && s.plant_fault != "hang")
    sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "c: option 'test_plant_fault' must be \"segv\" or \"hang\"");
  const std::int64_t plant_every = options.get_int("test_plant_every", s.plant_fault.empty() ? 0 : 2);
  if (plant_every < 0 || plant_every > 1000000)
    sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "c: option 'test_plant_every' must be in 0..1000000");
  s.plant_every = static_cast<int>(plant_every);
  const double compile_timeout = options.get_double("compile_timeout", 300.0);
  if (!(compile_timeout > 0 && compile_timeout <= 86400))
    sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "c: option 'compile_timeout' must be in (0, 86400] seconds");
  options.warn_unknown_keys("c");

  std::error_code ec;
  std::filesystem::create_directories(s.cache_dir, ec);
  if (ec || !std::filesystem::is_directory(s.cache_dir))
    sdk::fail(KILN_STATUS_UNAVAILABLE, "c: cannot create the cache directory '" + s.cache_dir.string() +
                                           "' (option 'cache_dir'): " + ec.message());
  if (const std::size_t removed = remove_stale_temporaries(s.cache_dir); removed > 0)
    sdk::Host::log(KILN_LOG_INFO, "c: removed " + std::to_string(removed) + " temporary files of killed compiles from " +
                                      s.cache_dir.string());
  s.compiler = probe_compiler(compiler, std::move(flags), openmp,
                              std::chrono::milliseconds(static_cast<std::int64_t>(compile_timeout * 1000)));
  s.vector_math = vector_math && s.compiler.libmvec;
  return s;
}

std::string make_cache_key(const Settings& s) {
  std::string key = std::string("c ") + kPluginVersion + "; " + s.compiler.path + ": " + s.compiler.version + "; flags:";
  for (const std::string& flag : s.compiler.flags) key += " " + flag;
  key += s.compiler.openmp ? "; openmp threads=" + std::to_string(s.threads) : "; no openmp";
  if (s.vector_math) key += "; libmvec";
  key += "; target " + s.compiler.target_digest;
  return key;
}

kiln_error* init(kiln_init_args* raw) {
  return sdk::guard_init(raw, [&](const sdk::Options& options) {
    auto s = std::make_unique<State>();
    s->settings = read_settings(options);
    s->info = describe_device(s->settings);
    s->cache_key = make_cache_key(s->settings);
    sdk::Host::log(KILN_LOG_INFO, "c: " + s->cache_key + "; cache " + s->settings.cache_dir.string());
    g_state.set(std::move(s));
  });
}

void shutdown() { g_state.reset(); }

// One cache key for c:0: the compiler and flags are the plugin's, not the device's.
kiln_error* cache_key(kiln_cache_key_args* raw) {
  return sdk::answer_cache_key(raw, [](kiln_device*) -> const std::string& { return state().cache_key; });
}

}  // namespace

State& state() { return g_state.get(); }

kiln_plugin_api make_table() {
  return sdk::plugin_table({.name = "c",
                            .version = kPluginVersion,
                            .description = "CPU: emits C, compiles it with the system compiler, runs it with OpenMP"},
                           {init, shutdown, cache_key}, kDeviceFunctions, sdk::host_memory_pool(), kCompileFunctions,
                           kLaunchFunctions);
}

}  // namespace kiln::cplugin

KILN_SDK_PLUGIN_QUERY(kiln::cplugin::make_table)
