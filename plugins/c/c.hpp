// The C plugin's internal interface: emits C through the SDK's C-family
// emitter, compiles it with the system compiler into a shared object, dlopens
// it and calls it on host memory. One device, "c:0": the host's CPU.
//
// Files (the plugin shape, docs/plugin-guide.md): plugin.cpp (ABI table,
// init, options, cache key), device.cpp (DeviceInfo from the machine, the one
// device), compile.cpp (emit, disk cache, dlopen), launch.cpp (launch and
// timed launch); helpers: compiler.cpp (the system compiler), subprocess.cpp,
// isolated_launch.cpp (timed launches in the worker) and shared_area.cpp (the
// shared memory those copy their buffers into).
// No pool.cpp: the pool is the SDK's host-memory pool (kiln/sdk/host_memory.hpp): buffers
// are 64-byte aligned host allocations, so a buffer of c:0 works on any other
// host-memory device (cblas:0...) by its host pointer, without a copy.
#pragma once

#include "shared_area.hpp"

#include <kiln/plugin.h>
#include <kiln/sdk/c_emitter.hpp>
#include <kiln/sdk/launch_args.hpp>
#include <kiln/sdk/plugin_table.hpp>
#include <kiln/sdk/timing.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kiln::cplugin {

inline constexpr const char* kPluginVersion = "0.1.0";
inline constexpr const char* kDefaultFlags = "-O3 -march=native -ffp-contract=fast";
// Added to the flags on AVX-512 targets (compiler.cpp, prefer_whole_vectors).
inline constexpr const char* kPreferWholeVectors = "-mprefer-vector-width=512";

// The system C compiler, as probed at init.
struct Compiler {
  std::string path;                // absolute
  std::chrono::milliseconds timeout{300000};  // per run of it (option 'compile_timeout')
  std::string version;             // first line of `<path> --version`
  std::vector<std::string> flags;  // from the options (plus -ffast-math when asked, -fno-math-errno,
                                   // and kPreferWholeVectors on AVX-512 targets)
  bool openmp = false;             // -fopenmp accepted (and wanted)
  std::string flags_error;         // the compiler's complaint about `flags`, "" if none
  // What `<path> <flags> -dM -E` says of the target.
  unsigned vector_bytes = 0;       // widest SIMD register: 64 AVX-512, 32 AVX, 16 SSE2/NEON, 0 none
  unsigned vector_registers = 0;   // how many of them
  bool fma = false;
  bool avx512_bf16 = false;        // __AVX512BF16__ and __AVX512VL__: DOT_BF16 compiles to VDPBF16PS
  bool libmvec = false;            // glibc's vector math library links (-lmvec)
  // Digest of the predefined macros under the flags: -march=native makes
  // different code on different CPUs, so a cache shared between machines
  // must tell them apart.
  std::string target_digest;
};

struct Settings {
  Compiler compiler;
  int threads = 1;                 // OpenMP threads per launch
  std::filesystem::path cache_dir;
  bool keep_source = false;
  bool vector_math = false;        // libm calls vectorise through libmvec
  double memory_bandwidth_gbps = 0;
  // How long an isolated launch (KILN_TIMED_ISOLATE) may take before its
  // worker is killed (option 'launch_timeout').
  std::chrono::milliseconds launch_timeout{60000};
  // Test only (options 'test_plant_fault' and 'test_plant_every'): every
  // plant_every-th compiled program (the 2nd, 4th, ... for 2) crashes
  // ("segv") or hangs ("hang") when it runs, so that tests can show a
  // faulty candidate cannot take the autotuner down. 0: never.
  std::string plant_fault;
  int plant_every = 0;
};

// Process-wide state: built by init, read-only until shutdown.
struct State {
  Settings settings;
  kiln_device_info info{};
  std::string cache_key;  // plugin version + compiler identity + flags; in every program's hash
  std::atomic<int> compiled{0};  // programs compiled since init (test_plant_every counts them)
  SharedArea isolation_area;      // what isolated launches copy their buffers into (isolated_launch.cpp)
};
State& state();  // throws INVALID_ARGUMENT outside init..shutdown

// A compiled kernel: the loaded entry point of a cached shared object.
struct Program {
  std::string source;
  std::vector<sdk::ParamSlot> params;  // by slot
  using Entry = void (*)(void* const* args, const std::int64_t* groups);
  Entry entry = nullptr;
  std::filesystem::path object;  // the cached shared object (isolated launches load it again)
};

// SHA-1 of `text` in hex (the cache's keys).
std::string sha1_hex(const std::string& text);

// Compiles write <key>.<pid>.<n>.c and <key>.<pid>.<n>.so.tmp into the cache
// (compile.cpp) and rename or remove them when done; a process killed
// mid-compile leaves them behind. Removes those whose process is gone
// (stale_temporaries.cpp); returns how many. Called at init.
std::size_t remove_stale_temporaries(const std::filesystem::path& cache_dir);

// compiler.cpp
Compiler probe_compiler(const std::string& name, std::vector<std::string> flags, bool want_openmp,
                        std::chrono::milliseconds timeout);
// Compiles a C file into a shared object. Throws COMPILE_FAILED with the
// compiler's output and the source's path.
void compile_shared_object(const Compiler& compiler, bool vector_math, const std::filesystem::path& source,
                           const std::filesystem::path& output);

// device.cpp
kiln_device_info describe_device(const Settings& settings);
extern const sdk::DeviceFunctions kDeviceFunctions;

// compile.cpp
extern const sdk::CompileFunctions kCompileFunctions;

// launch.cpp
extern const sdk::LaunchFunctions kLaunchFunctions;

// isolated_launch.cpp: whether the worker is installed beside the plugin,
// and one timed launch run there. Throws LAUNCH_FAILED naming the signal or
// the timeout when the program crashes or hangs.
bool can_isolate();
sdk::TimingResult isolated_timed_launch(const Program& program, const kiln_launch_args& launch,
                                        const sdk::HostArguments& arguments, const kiln_timed_launch_args& timed);

}  // namespace kiln::cplugin
