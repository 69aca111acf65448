// One Runtime used from several host threads at once: compiles, launches,
// copies and a tuning, on one device and on several (c:0, dummy:0, dummy:1),
// for about two seconds; every result is checked against the reference.
// The guarantees under test are written in core/include/kiln/runtime/*.hpp
// and kiln/tune/tuner.hpp. Run under ThreadSanitizer too (docs/architecture.md).
#include "loader/scratch.hpp"

#include "kiln/kernels/library.hpp"
#include "kiln/tune/tuner.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

namespace {

using kiln::test::ScratchDir;

kiln::Runtime make_runtime(const ScratchDir& dir) {
  const std::string config = R"({"plugins": {"cblas": {"enabled": false}, "cuda": {"enabled": false},
      "opencl": {"enabled": false}, "vulkan": {"enabled": false},
      "c": {"options": {"cache_dir": ")" + (dir / "c-cache").string() + R"(", "threads": 2}},
      "dummy": {"enabled": true, "options": {"simulate": [{"name": "sim-a"}, {"name": "sim-b"}], "noise": 0}}},
    "tuning_db": "tuning.sqlite"})";
  return kiln::test::runtime_from(dir, config).value();
}

// Compiles, uploads, launches, downloads and checks one add, `rounds` times
// or until `stop`; returns the problems seen.
std::vector<std::string> worker(const kiln::Device& device, const kiln::kernels::StandardKernel& add,
                                std::uint64_t seed, const std::atomic<bool>& stop) {
  std::vector<std::string> problems;
  auto fail = [&](const std::string& what) {
    problems.push_back(device.id() + ": " + what);
    return problems;
  };
  for (std::uint64_t round = 0; !stop.load(); ++round) {
    kiln::Result<kiln::Program> program = device.compile(add.kernel);
    if (!program) return fail(program.error().to_string());
    const std::vector<kiln::kernels::HostBuffer> inputs = add.make_inputs(seed + round);
    std::vector<kiln::kernels::HostBuffer> expected = add.make_outputs();
    add.reference(inputs, expected);
    std::vector<kiln::Buffer> buffers;
    buffers.reserve(add.args.size());  // LaunchArgs point at them
    std::vector<kiln::LaunchArg> args;
    std::size_t next_input = 0;
    for (const kiln::kernels::ArgSpec& arg : add.args) {
      kiln::Result<kiln::Buffer> buffer = device.allocate(arg.elements * 4);
      if (!buffer) return fail(buffer.error().to_string());
      if (arg.role == kiln::kernels::ArgRole::Input)
        if (kiln::Result<void> w = buffer->write(inputs[next_input++].data()); !w) return fail(w.error().to_string());
      buffers.push_back(std::move(buffer).value());
      args.push_back(kiln::LaunchArg::buffer(buffers.back()));
    }
    if (round % 2 == 0) {
      kiln::Result<kiln::Event> done = device.launch(*program, args);
      if (!done) return fail(done.error().to_string());
      if (kiln::Result<void> w = done->wait(); !w) return fail(w.error().to_string());
    } else {
      kiln::TimedLaunchOptions once;
      once.warmups = 0;
      once.repeats = 1;
      if (kiln::Result<kiln::Timing> t = device.timed_launch(*program, args, once); !t) return fail(t.error().to_string());
    }
    kiln::kernels::HostBuffer actual(add.dtype, add.args.back().elements);
    if (kiln::Result<void> r = buffers.back().read(actual.data()); !r) return fail(r.error().to_string());
    if (kiln::kernels::compare(actual, expected.back()) > add.tolerance) return fail("wrong result in round " + std::to_string(round));
  }
  return problems;
}

TEST(Threads, OneRuntimeFromManyThreadsOnOneDeviceAndOnSeveral) {
  ScratchDir dir;
  const kiln::Runtime runtime = make_runtime(dir);
  std::vector<kiln::Device> devices;
  for (const char* id : {"c:0", "dummy:0", "dummy:1"}) {
    kiln::Result<kiln::Device> device = runtime.device(id);
    if (!device) {
      if (std::string(id) == "c:0") GTEST_SKIP() << "no c:0: " << device.error().to_string();
      FAIL() << device.error().to_string();
    }
    devices.push_back(std::move(device).value());
  }
  const kiln::kernels::StandardKernel add = kiln::kernels::make_standard_kernel("add", {.m = 1, .n = 256}).value();

  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::vector<std::string> problems;
  std::vector<std::thread> threads;
  // Two threads on each device (so one device serves two at once), and
  // threads on different devices side by side.
  for (std::size_t t = 0; t < 2 * devices.size(); ++t)
    threads.emplace_back([&, t] {
      std::vector<std::string> found = worker(devices[t % devices.size()], add, 1000 * t, stop);
      std::lock_guard lock(mutex);
      problems.insert(problems.end(), found.begin(), found.end());
    });
  // A tuning on dummy:1 and one on c:0 while the others run; their database
  // is one file.
  std::vector<std::thread> tuners;
  for (const kiln::Device* device : {&devices[2], &devices[0]})
    tuners.emplace_back([&, device] {
      kiln::tune::TuneOptions options = kiln::tune::options_from(runtime.config());
      options.settings.n_launches = 4;
      options.settings.max_sequence_length = 1;
      options.settings.repeats = 1;
      options.settings.budget_s = 20;
      options.args = add.args;
      options.force = true;
      kiln::CompileOptions compile{.mode = kiln::CompileMode::Tuned, .tune_on_miss = true, .tuning = options};
      kiln::Result<kiln::Program> tuned = device->compile(add.kernel, compile);
      std::lock_guard lock(mutex);
      if (!tuned) problems.push_back("tune on " + device->id() + ": " + tuned.error().to_string());
    });
  // And a second Runtime opened meanwhile: the plugins are shared.
  std::thread opener([&] {
    ScratchDir other;
    kiln::Result<kiln::Runtime> second = kiln::test::runtime_from(other, R"({"plugins": {"dummy": {"enabled": true}}})");
    std::lock_guard lock(mutex);
    if (!second) problems.push_back("second runtime: " + second.error().to_string());
  });
  for (std::thread& t : tuners) t.join();
  opener.join();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  stop = true;
  for (std::thread& t : threads) t.join();
  for (const std::string& p : problems) ADD_FAILURE() << p;
}

}  // namespace
