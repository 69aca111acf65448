// The standard kernel registry: names, allowed dtypes, size checks, and the
// argument buffers every consumer makes the same way.
#include "kiln/kernels/library.hpp"

#include "kernel_writer.hpp"
#include "kiln/ir/dtype.hpp"

#include <algorithm>
#include <array>
#include <limits>

namespace kiln::kernels {

using ir::DType;

namespace {

enum class Shape { Elementwise, Rows, Matmul };

struct Entry {
  std::string_view name;
  Shape shape;
  bool integers_allowed;  // i32 and i64 besides the float dtypes
  StandardKernel (*make)(const KernelSize&, DType);
};

constexpr std::array<Entry, 11> kEntries = {{
    {"add", Shape::Elementwise, true, detail::make_add},
    {"add-dyn", Shape::Elementwise, true, detail::make_add_dyn},
    {"exp-chain", Shape::Elementwise, false, detail::make_exp_chain},
    {"sum-rows", Shape::Rows, true, detail::make_sum_rows},
    {"max-rows", Shape::Rows, true, detail::make_max_rows},
    {"softmax-rows", Shape::Rows, false, detail::make_softmax_rows},
    {"layernorm-rows", Shape::Rows, false, detail::make_layernorm_rows},
    {"rmsnorm-rows", Shape::Rows, false, detail::make_rmsnorm_rows},
    {"matmul", Shape::Matmul, true, detail::make_matmul},
    {"matmul-bt", Shape::Matmul, true, detail::make_matmul_bt},
    {"transpose", Shape::Rows, true, detail::make_transpose},
}};

constexpr auto kNames = [] {
  std::array<std::string_view, kEntries.size()> names{};
  for (std::size_t i = 0; i < kEntries.size(); ++i) names[i] = kEntries[i].name;
  return names;
}();

// Buffers beyond 2^40 elements are not a sensible standard kernel.
constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;

Result<void> check_size(const Entry& entry, const KernelSize& size) {
  std::vector<std::pair<std::string_view, std::int64_t>> used;
  if (entry.shape != Shape::Elementwise) used.emplace_back("m", size.m);
  used.emplace_back("n", size.n);
  if (entry.shape == Shape::Matmul) used.emplace_back("k", size.k);
  for (const auto& [dim, value] : used)
    if (value < 1 || value > kMaxElements)
      return make_error(ErrorCode::InvalidArgument, std::string(entry.name) + ": size " + std::string(dim) + " = " +
                                                        std::to_string(value) + " (must be 1.." +
                                                        std::to_string(kMaxElements) + ")");
  const auto exceeds = [](std::int64_t a, std::int64_t b) { return static_cast<__int128>(a) * b > kMaxElements; };
  const bool too_big =
      (entry.shape == Shape::Rows && exceeds(size.m, size.n)) ||
      (entry.shape == Shape::Matmul && (exceeds(size.m, size.k) || exceeds(size.k, size.n) || exceeds(size.m, size.n)));
  if (too_big) return make_error(ErrorCode::InvalidArgument, std::string(entry.name) + ": a buffer would exceed 2^40 elements");
  return {};
}

std::vector<DType> allowed_dtypes(const Entry& entry) {
  std::vector<DType> dtypes = {DType::F32, DType::F16, DType::BF16, DType::F64};
  if (entry.integers_allowed) dtypes.insert(dtypes.end(), {DType::I32, DType::I64});
  return dtypes;
}

std::int64_t reduction_length(const Entry& entry, const KernelSize& size) {
  switch (entry.shape) {
    case Shape::Matmul: return size.k;
    case Shape::Rows: return entry.name == "transpose" ? 1 : size.n;
    default: return 1;
  }
}

}  // namespace

std::span<const std::string_view> standard_kernel_names() { return kNames; }

Result<StandardKernel> make_standard_kernel(std::string_view name, const KernelSize& size, DType dtype) {
  const Entry* entry = nullptr;
  for (const Entry& e : kEntries)
    if (e.name == name) entry = &e;
  if (entry == nullptr) {
    std::string known;
    for (std::string_view n : kNames) known += (known.empty() ? "" : ", ") + std::string(n);
    return make_error(ErrorCode::NotFound, "no standard kernel '" + std::string(name) + "' (known: " + known + ")");
  }
  KILN_TRY(check_size(*entry, size));
  const std::vector<DType> dtypes = allowed_dtypes(*entry);
  if (std::find(dtypes.begin(), dtypes.end(), dtype) == dtypes.end()) {
    std::string allowed;
    for (DType d : dtypes) allowed += (allowed.empty() ? "" : ", ") + std::string(ir::dtype_name(d));
    return make_error(ErrorCode::Unsupported, std::string(name) + " does not support dtype " +
                                                  std::string(ir::dtype_name(dtype)) + " (allowed: " + allowed + ")");
  }
  StandardKernel kernel = entry->make(size, dtype);
  kernel.name = std::string(entry->name);
  kernel.size = size;
  kernel.dtype = dtype;
  kernel.dtypes = dtypes;
  kernel.tolerance = tolerance(dtype, reduction_length(*entry, size));
  kernel.tf32_tolerance =
      dtype == DType::F32 ? std::max(kernel.tolerance, tolerance(DType::F16, reduction_length(*entry, size)))
                          : kernel.tolerance;
  return kernel;
}

}  // namespace kiln::kernels
