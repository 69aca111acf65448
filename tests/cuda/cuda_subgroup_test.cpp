// SUBGROUP_REDUCE in the CUDA dialect: every width up to 32, every
// reduction and the dtypes a device claims (f32, f16, bf16, f64, i32, i8,
// u64) emit __shfl_xor_sync butterflies that compile with NVRTC (no GPU
// needed), whose PTX holds the shuffles (shfl.sync.bfly), over a 2-D group
// (linear thread ids) and a group of one partial warp (a member mask of the
// segment, not of the whole warp). Wider subgroups, the C and OpenCL
// dialects, and GLSL for the dtypes it cannot shuffle are refused as
// UNSUPPORTED naming the op. (GLSL's shuffles run on lavapipe:
// tests/passes/subgroup_devices_test.cpp.) On a CUDA device the chain of
// reductions gives the interpreter's bits exactly, every dtype (without a
// driver that test skips visibly).
#include <gtest/gtest.h>

#include "cuda_source.hpp"
#include "nvrtc_compiler.hpp"
#include "support/kernel_runner.hpp"
#include "support/wire_builder.hpp"

#include <kiln/sdk/c_emitter.hpp>
#include <kiln/sdk/capabilities.hpp>
#include <kiln/sdk/half.hpp>
#include <kiln/sdk/plugin_support.hpp>
#include <kiln/sdk/wire.hpp>

#include <bit>
#include <memory>
#include <random>

using namespace kiln::cuda;
using kiln::test::WireBuilder;

namespace {

constexpr unsigned kDtypes[] = {KILN_DTYPE_F32, KILN_DTYPE_F16, KILN_DTYPE_BF16, KILN_DTYPE_F64,
                                KILN_DTYPE_I32, KILN_DTYPE_I8,  KILN_DTYPE_U64};
constexpr unsigned kReductions[] = {KILN_BINARY_ADD, KILN_BINARY_MUL, KILN_BINARY_MAX, KILN_BINARY_MIN};

// x_d[t] for every dtype d, through a chain of subgroup reductions of every
// width <= max_width, each reduction in turn, into y_d[t]. `last` gets the
// id of the last reduction.
std::vector<kiln_op> reduce_kernel(std::int64_t x_threads, std::int64_t y_threads, unsigned max_width,
                                   std::uint32_t* last = nullptr) {
  WireBuilder w;
  const std::uint64_t n = static_cast<std::uint64_t>(x_threads * y_threads);
  std::vector<WireBuilder::Id> xs, ys;
  std::uint32_t slot = 0;
  for (unsigned dt : kDtypes) {
    xs.push_back(w.param(KILN_PARAM_GLOBAL, static_cast<std::uint8_t>(dt), slot++, n));
    ys.push_back(w.param(KILN_PARAM_GLOBAL_MUT, static_cast<std::uint8_t>(dt), slot++, n));
  }
  const auto tx = w.local_index(0, w.const_i64(x_threads));
  WireBuilder::Id t = tx;
  if (y_threads > 1) {
    const auto ty = w.local_index(1, w.const_i64(y_threads));
    t = w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, tx, w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, ty, w.const_i64(x_threads)));
  }
  unsigned turn = 0;
  for (std::size_t i = 0; i < std::size(kDtypes); ++i) {
    const auto dt = static_cast<std::uint8_t>(kDtypes[i]);
    auto v = w.load(dt, xs[i], t);
    for (unsigned width = 2; width <= max_width; width *= 2) {
      v = w.op(KILN_OP_SUBGROUP_REDUCE, dt, static_cast<std::uint8_t>(kReductions[turn++ % 4]), v, KILN_NO_OPERAND,
               KILN_NO_OPERAND, width);
      if (last != nullptr) *last = v;
    }
    w.store(dt, ys[i], t, v);
  }
  return w.ops;
}

}  // namespace

TEST(CudaSubgroup, EveryWidthAndDtypeCompilesToShuffles) {
  const NvrtcApi nvrtc = load_nvrtc(nvrtc_candidates(""));
  NvrtcOptions options;
  options.include_dirs = default_include_dirs();
  options.force_ptx = true;
  for (const auto& [x, y, width] : {std::tuple{16, 4, 32u}, std::tuple{16, 1, 16u}}) {
    SCOPED_TRACE(std::to_string(x) + " x " + std::to_string(y) + " threads, widths to " + std::to_string(width));
    try {
      const std::string source = generate_cuda_source(reduce_kernel(x, y, width));
      if (width == 32) {
        EXPECT_NE(source.find("__shfl_xor_sync(0xffffffffu"), std::string::npos) << source;
      } else {
        EXPECT_NE(source.find("(0xffffffffu >> 16) <<"), std::string::npos) << source;  // a segment's mask
      }
      const DeviceCode ptx = compile_cuda(nvrtc, source, 8, 0, options);
      const std::string text(ptx.image.data());
      EXPECT_NE(text.find("shfl.sync.bfly"), std::string::npos) << text.substr(0, 2000);
      NvrtcOptions cubin_options = options;
      cubin_options.force_ptx = false;
      const DeviceCode cubin = compile_cuda(nvrtc, source, 9, 0, cubin_options);
      EXPECT_TRUE(cubin.is_cubin);
    } catch (const kiln::sdk::PluginError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

TEST(CudaSubgroup, WiderSubgroupsAndOtherDialectsAreRefusedNamingTheOp) {
  std::uint32_t id = 0;
  const auto wide = reduce_kernel(64, 1, 64, &id);
  try {
    generate_cuda_source(wide);
    ADD_FAILURE() << "emitted subgroups of 64";
  } catch (const kiln::sdk::PluginError& e) {
    EXPECT_EQ(e.status(), KILN_STATUS_UNSUPPORTED) << e.what();
    EXPECT_NE(std::string(e.what()).find("subgroups of 64"), std::string::npos) << e.what();
  }
  // C and OpenCL have no shuffles; GLSL's subgroupShuffleXor takes no i8
  // or u64 without the extended-types extensions.
  const auto ops = reduce_kernel(32, 1, 32, &id);
  for (const kiln::sdk::Dialect* d : {&kiln::sdk::c_dialect(), &kiln::sdk::opencl_dialect(), &kiln::sdk::glsl_dialect()}) {
    SCOPED_TRACE(std::string(d->name));
    try {
      kiln::sdk::emit_c_family(ops, *d, {});
      ADD_FAILURE() << "emitted";
    } catch (const kiln::sdk::PluginError& e) {
      EXPECT_EQ(e.status(), KILN_STATUS_UNSUPPORTED) << e.what();
      if (d->local_index == nullptr) continue;  // C: no LOCAL threads, refused at the index already
      EXPECT_NE(std::string(e.what()).find("subgroup_reduce"), std::string::npos) << e.what();
    }
  }
}

TEST(CudaSubgroupDevice, EveryDtypeGivesTheInterpretersBits) {
  std::unique_ptr<kiln::test::AbiPlugin> plugin;
  try {
    plugin = std::make_unique<kiln::test::AbiPlugin>(kiln::test::plugin_path("cuda"), "{}");
  } catch (const kiln::test::AbiError& e) {
    if (e.status == KILN_STATUS_UNAVAILABLE) GTEST_SKIP() << "no CUDA device: " << e.what();
    throw;
  }
  const kiln_device_info info = plugin->info(0);
  for (unsigned dt : kDtypes) ASSERT_TRUE(kiln::sdk::has_op_kind(info, dt, KILN_OP_SUBGROUP_REDUCE)) << dt;
  kiln_device* device = plugin->open(0);
  std::mt19937_64 rng(20261202);
  std::uniform_real_distribution<float> value(0.5f, 1.5f);  // products of the chain stay finite in f16
  for (const auto& [x, y] : {std::pair{16, 4}, std::pair{16, 1}}) {
    SCOPED_TRACE(std::to_string(x) + " x " + std::to_string(y) + " threads");
    const std::size_t n = static_cast<std::size_t>(x * y);
    std::vector<kiln::test::HostArg> args;
    for (unsigned dt : kDtypes) {
      kiln::test::HostArg in = kiln::test::HostArg::buffer(static_cast<std::uint8_t>(dt), n);
      for (std::size_t e = 0; e < n; ++e) {
        const float v = value(rng);
        std::uint64_t bits = rng() % 7 + 1;  // integers: small, nonzero
        if (dt == KILN_DTYPE_F32) bits = std::bit_cast<std::uint32_t>(v);
        if (dt == KILN_DTYPE_F64) bits = std::bit_cast<std::uint64_t>(static_cast<double>(v));
        if (dt == KILN_DTYPE_F16) bits = kiln::sdk::f32_to_f16_bits(v);
        if (dt == KILN_DTYPE_BF16) bits = kiln::sdk::f32_to_bf16_bits(v);
        in.set(e, bits);
      }
      args.push_back(in);
      args.push_back(kiln::test::HostArg::poisoned(static_cast<std::uint8_t>(dt), n));
    }
    const std::vector<kiln_op> ops = reduce_kernel(x, y, y > 1 ? 32 : 16);
    const std::vector<kiln::test::HostArg> want = kiln::conformance::interpreted(ops, args);
    std::vector<kiln::test::HostArg> got = args;
    kiln::conformance::run_kernel(*plugin, device, ops, got);
    for (std::size_t i = 1; i < got.size(); i += 2)
      for (std::size_t e = 0; e < n; ++e)
        ASSERT_EQ(got[i].get(e), want[i].get(e)) << kiln::sdk::dtype_name(kDtypes[i / 2]) << " thread " << e;
  }
}
