// Isolated timed launches (KILN_TIMED_ISOLATE): the compiled object runs in
// kiln-c-worker, a process of its own, on a copy of the launch's buffers in
// shared memory. A candidate that crashes or hangs costs that process: the
// launch fails naming the signal or the timeout, and the host's buffers are
// left as they were. On success the mutable buffers are copied back, so the
// caller sees what an in-process launch would have written.
//
// Cost per launch: one posix_spawn, the worker's dlopen of the object (and
// of libgomp), and a copy of every buffer in and of the mutable ones out,
// through shared memory kept from launch to launch (shared_area.hpp);
// docs/autotune.md gives measured figures. Timings are of the kernel runs
// in the worker alone, with the same policy (sdk::time_runs) as in-process.
#include "c.hpp"
#include "owned_fd.hpp"
#include "shared_area.hpp"
#include "subprocess.hpp"
#include "worker_protocol.hpp"

#include <kiln/sdk/plugin_support.hpp>

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

extern char** environ;

namespace kiln::cplugin {

namespace fs = std::filesystem;

namespace {

void write_exact(int fd, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) sdk::fail(KILN_STATUS_INTERNAL, std::string("c: isolated launch: write: ") + std::strerror(errno));
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
}

std::string read_from_start(int fd) {
  std::string out;
  if (::lseek(fd, 0, SEEK_SET) < 0) return out;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return out;
}

// The worker executable beside this plugin's library.
const fs::path& worker_path() {
  static const fs::path path = [] {
    Dl_info info{};
    if (::dladdr(reinterpret_cast<const void*>(&worker_path), &info) == 0 || info.dli_fname == nullptr) return fs::path();
    return fs::path(info.dli_fname).parent_path() / "kiln-c-worker";
  }();
  return path;
}

// One region per distinct buffer (args naming the same memory share it).
struct Region {
  char* host = nullptr;
  std::uint64_t bytes = 0;
  std::uint64_t offset = 0;
  bool mutable_ = false;
};

std::string seconds_text(std::chrono::milliseconds ms) {
  std::string text = std::to_string(ms.count() / 1000);
  if (ms.count() % 1000 != 0) text += "." + std::to_string(ms.count() % 1000 / 100);
  return text;
}

}  // namespace

bool can_isolate() {
  const fs::path& worker = worker_path();
  return !worker.empty() && ::access(worker.c_str(), X_OK) == 0;
}

sdk::TimingResult isolated_timed_launch(const Program& program, const kiln_launch_args& launch,
                                        const sdk::HostArguments& arguments, const kiln_timed_launch_args& timed) {
  const Settings& s = state().settings;
  std::vector<worker::Slot> slots(program.params.size());
  std::map<char*, Region> regions;
  std::uint64_t total = 0;
  for (std::size_t slot = 0; slot < program.params.size(); ++slot) {
    if (!program.params[slot].is_buffer()) {
      slots[slot].offset_or_bits = arguments.scalars[slot];
      continue;
    }
    auto* host = static_cast<char*>(arguments.pointers[slot]);
    const std::uint64_t bytes = launch.args[slot].bytes;
    Region& region = regions[host];
    region.host = host;
    region.bytes = std::max(region.bytes, bytes);
    region.mutable_ = region.mutable_ || program.params[slot].kind == KILN_PARAM_GLOBAL_MUT;
  }
  // Distinct buffers must not overlap: copies of overlapping memory would
  // not alias in the worker as they do here.
  char* end_of_previous = nullptr;
  for (auto& [host, region] : regions) {
    if (end_of_previous != nullptr && host < end_of_previous)
      sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "c: isolated launch: two buffer arguments overlap without being equal");
    end_of_previous = host + region.bytes;
    region.offset = total;
    total += (region.bytes + 63) / 64 * 64;
  }
  for (std::size_t slot = 0; slot < program.params.size(); ++slot) {
    if (!program.params[slot].is_buffer()) continue;
    slots[slot].is_buffer = 1;
    slots[slot].offset_or_bits = regions.at(static_cast<char*>(arguments.pointers[slot])).offset;
    slots[slot].bytes = launch.args[slot].bytes;
  }

  const SharedArea::Lease shared = state().isolation_area.lease(std::max<std::uint64_t>(total, 64));
  for (const auto& [host, region] : regions) std::memcpy(shared.data() + region.offset, host, region.bytes);

  worker::Request request;
  request.n_slots = static_cast<std::uint32_t>(slots.size());
  request.warmups = timed.warmups;
  request.repeats = std::max<std::uint32_t>(timed.repeats, 1);
  request.abort_ns = timed.abort_ns;
  request.flush = (timed.flags & KILN_TIMED_FLUSH_CACHE) != 0 ? 1u : 0u;
  const std::string object = program.object.string();
  request.path_bytes = static_cast<std::uint32_t>(object.size());
  for (int axis = 0; axis < 3; ++axis) request.groups[axis] = arguments.groups[axis];
  request.buffer_bytes = total;
  OwnedFd input(memfd("kiln-c-request"));
  write_exact(input.get(), &request, sizeof request);
  write_exact(input.get(), object.data(), object.size());
  write_exact(input.get(), slots.data(), slots.size() * sizeof(worker::Slot));
  ::lseek(input.get(), 0, SEEK_SET);
  OwnedFd output(memfd("kiln-c-response"));

  // The caller's limit per run (timeout_ns) bounds the whole worker: every
  // run may take it; the plugin's option 'launch_timeout' caps it.
  std::chrono::milliseconds limit = s.launch_timeout;
  if (timed.timeout_ns != 0) {
    const std::uint64_t runs = std::uint64_t{request.warmups} + request.repeats;
    const std::uint64_t ms = timed.timeout_ns / 1'000'000 + 1;
    const std::uint64_t total = ms > UINT64_MAX / runs ? UINT64_MAX : ms * runs;
    if (total < static_cast<std::uint64_t>(limit.count())) limit = std::chrono::milliseconds(static_cast<std::int64_t>(total));
  }
  const ProcessResult ended =
      run_process({worker_path().string()}, limit,
                  {{input.get(), 0}, {shared.fd(), worker::kBuffersFd}, {output.get(), worker::kResponseFd}});
  const std::string response_bytes = read_from_start(output.get());
  worker::Response response;
  const bool answered = ended.exit_code == 0 && !ended.timed_out && response_bytes.size() >= sizeof response;
  if (answered) std::memcpy(&response, response_bytes.data(), sizeof response);
  if (!answered || response.magic != worker::kResponseMagic ||
      response_bytes.size() != sizeof response + response.runs * sizeof(std::uint64_t)) {
    std::string message;
    if (ended.timed_out && limit < s.launch_timeout)
      sdk::fail(KILN_STATUS_TIMEOUT, "c: an isolated launch passed its time limit (no answer within " + seconds_text(limit) +
                                         " s: timeout_ns of the timed launch x " +
                                         std::to_string(request.warmups + request.repeats) +
                                         " runs); the worker was killed, the buffers are left as they were");
    if (ended.timed_out)
      message = "c: the program hung in an isolated launch (no answer within " + seconds_text(s.launch_timeout) +
                " s, option 'launch_timeout'; killed)";
    else if (ended.signal != 0)
      message = "c: the program crashed in an isolated launch (" + ended.how_it_ended() + ")";
    else
      message = "c: the isolated launch failed (" + ended.how_it_ended() + ")";
    message += "; the buffers are left as they were";
    if (!ended.output.empty()) message += ":\n" + ended.output.substr(0, 2000);
    sdk::fail(KILN_STATUS_LAUNCH_FAILED, message);
  }
  for (const auto& [host, region] : regions)
    if (region.mutable_) std::memcpy(host, shared.data() + region.offset, region.bytes);

  sdk::TimingResult result;
  result.samples_ns.resize(response.runs);
  std::memcpy(result.samples_ns.data(), response_bytes.data() + sizeof response, response.runs * sizeof(std::uint64_t));
  result.min_ns = response.min_ns;
  result.median_ns = response.median_ns;
  result.aborted = response.aborted != 0;
  return result;
}

}  // namespace kiln::cplugin
