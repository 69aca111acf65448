#include "bench_anchors.hpp"

#include "cublas_gemm.hpp"
#include "sbgemm.hpp"
#include "triad.hpp"

#include <kiln/ir/dtype.hpp>
#include <kiln/kernels/run.hpp>

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>

namespace kiln::cli {

namespace {

// 2^25 floats per array (3 x 128 MiB) is far past any last-level cache;
// the quick run's 2^22 (3 x 16 MiB) is past this machine's and takes
// milliseconds.
constexpr std::size_t kTriadElements = std::size_t{1} << 25;
constexpr std::size_t kQuickTriadElements = std::size_t{1} << 22;
constexpr unsigned kTriadThreads = 2;
// The device copy: 256 MiB each way (quick: 16 MiB), at most a quarter of
// the device's free memory.
constexpr std::uint64_t kCopyBytes = std::uint64_t{256} << 20;
constexpr std::uint64_t kQuickCopyBytes = std::uint64_t{16} << 20;

std::string lower_case(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

}  // namespace

BenchAnchors::BenchAnchors(const kiln::Runtime& runtime, bool quick, unsigned repeats)
    : runtime_(runtime), quick_(quick), repeats_(std::max(1u, repeats)) {}

BenchAnchors::~BenchAnchors() = default;

AnchorRate BenchAnchors::anchor_for(const kiln::Device& device, const kiln::kernels::StandardKernel& kernel,
                                    bool is_matmul) {
  const bool host = device.info().host_memory();
  // bf16 on the host: OpenBLAS's cblas_sbgemm (Debian's cblas:0 has none).
  if (host && is_matmul && kernel.dtype == ir::DType::BF16) return sbgemm_matmul(kernel);
  if (host) return is_matmul ? cblas_matmul(kernel) : triad();
  if (!is_matmul) return device_copy(device);
  if (device.info().plugin == "cuda") return cublas_matmul(device, kernel);
  return {"", 0, "no vendor BLAS is loaded for the " + device.info().plugin + " plugin"};
}

AnchorRate BenchAnchors::triad() {
  if (triad_gbps_ == 0) {
    fmt::print(stderr, "bench: measuring the triad anchor ({} threads)\n", kTriadThreads);
    triad_ = std::make_unique<kiln::anchors::Triad>(quick_ ? kQuickTriadElements : kTriadElements, kTriadThreads);
    triad_gbps_ = triad_->best_gbps(std::max(repeats_, 3u));
  }
  return {"triad", triad_gbps_, ""};
}

AnchorRate BenchAnchors::cblas_matmul(const kiln::kernels::StandardKernel& kernel) {
  const std::string key = fmt::format("cblas {} {} {} {}", kernel.size.m, kernel.size.n, kernel.size.k,
                                      ir::dtype_name(kernel.dtype));
  if (auto it = measured_.find(key); it != measured_.end()) return it->second;
  AnchorRate anchor = [&]() -> AnchorRate {
    kiln::Result<kiln::Device> cblas = runtime_.device("cblas:0");
    if (!cblas) return {"", 0, "cblas:0 is absent: " + cblas.error().message};
    fmt::print(stderr, "bench: measuring the cblas:0 matmul anchor ({})\n", kiln::kernels::size_text(kernel));
    kiln::kernels::RunOptions options;
    options.check = false;  // the anchor's own row checks it
    options.timing.warmups = 1;
    options.timing.repeats = repeats_;
    kiln::Result<kiln::kernels::RunReport> report = kiln::kernels::run_standard_kernel(*cblas, kernel, options);
    if (!report) return {"", 0, "cblas:0 cannot run this matmul: " + report.error().message};
    if (!report->timing || report->timing->min_ns == 0) return {"", 0, "cblas:0 gave no timing"};
    return {"cblas:0", kernel.flops / static_cast<double>(report->timing->min_ns), ""};
  }();
  measured_[key] = anchor;
  return anchor;
}

AnchorRate BenchAnchors::sbgemm_matmul(const kiln::kernels::StandardKernel& kernel) {
  const std::string key = fmt::format("sbgemm {} {} {}", kernel.size.m, kernel.size.n, kernel.size.k);
  if (auto it = measured_.find(key); it != measured_.end()) return it->second;
  AnchorRate anchor = [&]() -> AnchorRate {
    if (kernel.name != "matmul") return {"", 0, "cblas_sbgemm is the anchor of matmul only, not " + kernel.name};
    fmt::print(stderr, "bench: measuring the cblas_sbgemm anchor ({}, {} threads)\n", kiln::kernels::size_text(kernel),
               kTriadThreads);
    const kiln::anchors::SbgemmTiming t =
        kiln::anchors::time_sbgemm(kernel.size.m, kernel.size.n, kernel.size.k, kTriadThreads, repeats_);
    if (!t.error.empty()) return {"", 0, t.error};
    return {"sbgemm", t.gflops, ""};
  }();
  measured_[key] = anchor;
  return anchor;
}

AnchorRate BenchAnchors::cublas_matmul(const kiln::Device& device, const kiln::kernels::StandardKernel& kernel) {
  const std::string key = fmt::format("cublas {} {} {} {} {}", device.id(), kernel.size.m, kernel.size.n,
                                      kernel.size.k, ir::dtype_name(kernel.dtype));
  if (auto it = measured_.find(key); it != measured_.end()) return it->second;
  AnchorRate anchor = [&]() -> AnchorRate {
    kiln::anchors::GemmType type = kiln::anchors::GemmType::F32;
    if (kernel.dtype == ir::DType::F16) type = kiln::anchors::GemmType::F16;
    else if (kernel.dtype == ir::DType::BF16) type = kiln::anchors::GemmType::BF16;
    else if (kernel.dtype != ir::DType::F32)
      return {"", 0, std::string("cuBLAS has no ") + std::string(ir::dtype_name(kernel.dtype)) + " matmul anchor"};
    fmt::print(stderr, "bench: measuring the cuBLAS matmul anchor on {} ({})\n", device.id(),
               kiln::kernels::size_text(kernel));
    const kiln::anchors::GemmTiming t =
        kiln::anchors::time_cublas_gemm(device.info().pci_bus_id, static_cast<int>(device.info().index), kernel.size.m,
                                        kernel.size.n, kernel.size.k, type, repeats_);
    if (!t.error.empty()) return {"", 0, "cuBLAS: " + t.error};
    return {"cublas", t.gflops, ""};
  }();
  measured_[key] = anchor;
  return anchor;
}

AnchorRate BenchAnchors::device_copy(const kiln::Device& device) {
  const std::string bus = lower_case(device.info().pci_bus_id);
  if (bus.empty()) return api_copy(device);
  // One GPU reached through several plugins (cuda:0, opencl:0 and vulkan:0
  // on the GPU machine) has one memory bandwidth, but not every API's copy
  // reaches it: NVIDIA's Vulkan copy ran at 775 GB/s where the CUDA copy of
  // the same GPU ran at 3975 (a copy engine rather than the SMs). The
  // anchor is the fastest copy of any device on the same PCI bus id, so a
  // kernel is never set against a slow copy path of its own API.
  AnchorRate best;
  std::vector<std::string> tried;
  for (const kiln::DeviceInfo& info : runtime_.devices()) {
    if (lower_case(info.pci_bus_id) != bus) continue;
    kiln::Result<kiln::Device> peer = runtime_.device(info.id);
    if (!peer) continue;
    const AnchorRate rate = api_copy(*peer);
    tried.push_back(fmt::format("{} {:.0f}", info.id, rate.rate));
    if (rate.rate > best.rate) best = {"copy via " + info.id, rate.rate, ""};
  }
  if (best.rate > 0) {
    if (tried.size() > 1 && !copy_peers_printed_.contains(bus)) {
      fmt::print(stderr, "bench: copy anchor of the GPU at {}: the fastest of {} GB/s\n", bus,
                 fmt::join(tried, ", "));
      copy_peers_printed_.insert(bus);
    }
    return best;
  }
  return api_copy(device);
}

AnchorRate BenchAnchors::api_copy(const kiln::Device& device) {
  if (auto it = measured_.find(device.id()); it != measured_.end()) return it->second;
  AnchorRate anchor = [&]() -> AnchorRate {
    std::uint64_t bytes = quick_ ? kQuickCopyBytes : kCopyBytes;
    if (kiln::Result<kiln::MemoryInfo> memory = device.memory_info(); memory && memory->free_bytes > 0)
      bytes = std::min(bytes, memory->free_bytes / 4);
    bytes = std::max<std::uint64_t>(bytes & ~std::uint64_t{255}, 256);
    fmt::print(stderr, "bench: measuring {}'s copy anchor ({} MiB)\n", device.id(), bytes >> 20);
    kiln::Result<kiln::Buffer> source = device.allocate(bytes);
    if (!source) return {"", 0, "could not allocate the copy anchor's buffers: " + source.error().message};
    kiln::Result<kiln::Buffer> target = device.allocate(bytes);
    if (!target) return {"", 0, "could not allocate the copy anchor's buffers: " + target.error().message};
    double best_s = 0;
    for (unsigned r = 0; r <= repeats_; ++r) {  // the first copy is a warm-up
      const auto start = std::chrono::steady_clock::now();
      if (kiln::Result<void> copied = target->copy_from(*source, bytes); !copied)
        return {"", 0, "the device copy failed: " + copied.error().message};
      // copy_from is synchronous: it returns when the bytes are there.
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (r > 0 && (best_s == 0 || seconds < best_s)) best_s = seconds;
    }
    if (best_s <= 0) return {"", 0, "the device copy took no measurable time"};
    // Each byte read once and written once, as the kernels' rates count.
    return {"copy", 2.0 * static_cast<double>(bytes) / best_s * 1e-9, ""};
  }();
  measured_[device.id()] = anchor;
  return anchor;
}

}  // namespace kiln::cli
