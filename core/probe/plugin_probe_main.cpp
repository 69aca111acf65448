// kiln-plugin-probe: loads one plugin the way the host's loader does
// (dlopen, kiln_plugin_query, init with the config's options, device_count,
// device_info of each device) in a process of its own, so that a plugin that
// crashes, hangs or exits there costs this process, not the host
// (core/runtime/plugin_probe.cpp starts it; docs/config.md, "Plugin probe").
//
//   kiln-plugin-probe <library> <host ABI minor>   (options JSON on stdin)
//   kiln-plugin-probe <library> <host ABI minor> compile <device index>
//       (also: the kernel's kiln_op array on file descriptor 4)
//
// The second form is the compile probe of a plugin with "isolate_compile"
// (docs/config.md): after init it opens the device and compiles the kernel
// there, so that a compile that crashes or hangs costs this process.
//
// Before each step it writes "stage <name>" to file descriptor 3 (a memfd of
// the host), and "done" after the last: a report that survives the process
// dying mid-step, so the host can tell where it died. A step that fails
// cleanly (dlopen error, a NULL or mismatched table, init returning an
// error) ends the probe with "stop <step>": the host then loads the plugin
// in-process, which reports the exact reason as before.
//
// Deliberately independent of libkiln: it speaks only plugin.h, starts in a
// few milliseconds, and cannot itself pull in whatever the host links.
#include <kiln/plugin.h>

#include <dlfcn.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <new>
#include <string>
#include <vector>

struct kiln_error {
  kiln_status status;
};

namespace {

constexpr int kReportFd = 3;
constexpr int kKernelFd = 4;  // compile probe: the kiln_op array
constexpr std::uint32_t kMaxDevices = 4096;  // as the host's loader (plugin_loader.cpp)

void report(const std::string& line) {
  const std::string text = line + "\n";
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(kReportFd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    written += static_cast<std::size_t>(n);
  }
}

[[noreturn]] void stop(const std::string& step) {
  report("stop " + step);
  std::_Exit(0);
}

kiln_error g_out_of_memory{KILN_STATUS_OUT_OF_MEMORY};

kiln_error* error_create(kiln_status status, const char*, std::size_t) {
  kiln_error* error = new (std::nothrow) kiln_error{status};
  return error != nullptr ? error : &g_out_of_memory;
}

void log_line(void*, kiln_log_level, const char*, std::size_t) {}

// The whole of file descriptor `fd` (the host's memfd, at offset 0).
std::string read_all(int fd) {
  std::string out;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return out;
    out.append(buffer, static_cast<std::size_t>(n));
  }
}

// The compile probe's steps after init: open device `index`, compile the
// kernel read from kKernelFd. A clean failure stops the probe (the host's
// in-process compile then reports it exactly).
void compile_on_device(const kiln_plugin_api& table, std::uint32_t index) {
  const std::string bytes = read_all(kKernelFd);
  if (bytes.empty() || bytes.size() % sizeof(kiln_op) != 0 || table.device_open == nullptr || table.compile == nullptr)
    stop("compile");
  std::vector<kiln_op> ops(bytes.size() / sizeof(kiln_op));
  std::memcpy(ops.data(), bytes.data(), bytes.size());
  kiln_device_open_args open{};
  open.struct_size = KILN_DEVICE_OPEN_ARGS_STRUCT_SIZE;
  open.index = index;
  report("stage device_open");
  if (table.device_open(&open) != nullptr) stop("device_open");
  kiln_kernel kernel{};
  kernel.struct_size = KILN_KERNEL_STRUCT_SIZE;
  kernel.ops = ops.data();
  kernel.n_ops = ops.size();
  kernel.op_size = sizeof(kiln_op);
  kiln_compile_args compile{};
  compile.struct_size = KILN_COMPILE_ARGS_STRUCT_SIZE;
  compile.device = open.device;
  compile.kernel = &kernel;
  compile.failed_op = -1;
  report("stage compile");
  if (table.compile(&compile) != nullptr) stop("compile");
}

}  // namespace

int main(int argc, char** argv) {
  const bool compiling = argc == 5 && std::string(argv[3]) == "compile";
  if (argc != 3 && !compiling) {
    std::cerr << "usage: kiln-plugin-probe <library> <host ABI minor> [compile <device index>] (options JSON on "
                 "stdin; with compile, the kernel's ops on fd 4)\n";
    return 2;
  }
  // Dies with the host: a probe of a hanging plugin must not outlive a
  // host killed while it waits.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  const std::string library = argv[1];
  const auto host_minor = static_cast<std::uint32_t>(std::strtoul(argv[2], nullptr, 10));
  const std::string options((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());

  report("stage dlopen");
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) stop("dlopen");
  using Query = const kiln_plugin_api* (*)(std::uint32_t, std::uint32_t);
  auto query = reinterpret_cast<Query>(::dlsym(handle, KILN_PLUGIN_QUERY_SYMBOL));
  if (query == nullptr) stop("dlsym");

  report("stage query");
  const kiln_plugin_api* table = query(KILN_ABI_MAJOR, host_minor);
  // The host's checks (loaded_library.cpp), so that the probe goes no
  // further than the host would.
  if (table == nullptr || table->abi_major != KILN_ABI_MAJOR || table->abi_minor > host_minor ||
      table->struct_size < KILN_PLUGIN_API_STRUCT_SIZE_1_0 || table->init == nullptr ||
      table->device_count == nullptr || table->device_info == nullptr)
    stop("query");

  kiln_host_api host{};
  host.struct_size = KILN_HOST_API_STRUCT_SIZE;
  host.abi_major = KILN_ABI_MAJOR;
  host.abi_minor = KILN_ABI_MINOR;
  host.host_version = KILN_VERSION;
  host.error_create = error_create;
  host.log = log_line;
  kiln_init_args init{};
  init.struct_size = KILN_INIT_ARGS_STRUCT_SIZE;
  init.host = &host;
  init.options_json = options.c_str();
  init.options_json_len = options.size();
  report("stage init");
  if (table->init(&init) != nullptr) stop("init");

  kiln_device_count_args count{};
  count.struct_size = KILN_DEVICE_COUNT_ARGS_STRUCT_SIZE;
  report("stage device_count");
  if (table->device_count(&count) != nullptr || count.count > kMaxDevices) stop("device_count");
  if (compiling) {
    const auto index = static_cast<std::uint32_t>(std::strtoul(argv[4], nullptr, 10));
    if (index >= count.count) stop("device_count");
    compile_on_device(*table, index);
    report("done");
    std::_Exit(0);
  }
  for (std::uint32_t index = 0; index < count.count; ++index) {
    kiln_device_info info{};
    info.struct_size = KILN_DEVICE_INFO_STRUCT_SIZE;
    kiln_device_info_args args{};
    args.struct_size = KILN_DEVICE_INFO_ARGS_STRUCT_SIZE;
    args.index = index;
    args.info = &info;
    report("stage device_info " + std::to_string(index));
    (void)table->device_info(&args);
  }
  report("done");
  // No shutdown and no exit handlers: the host runs those at its own exit,
  // and a probe that lingers in a driver's teardown would only cost time.
  std::_Exit(0);
}
