// Search spaces built from parts, and the version string that keys them in
// the tuning database.
#include "kiln/tune/search_space.hpp"

#include "kiln/ir/verify.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

namespace kiln::tune {

const passes::Optimization* SearchSpace::find(std::string_view name) const {
  for (const passes::Optimization* opt : optimizations)
    if (opt->name() == name) return opt;
  return nullptr;
}

double SearchSpace::rank_estimate(const ir::Kernel& kernel, const DeviceInfo& device,
                                  std::span<const double> features) const {
  const double estimate = feature_cost && !features.empty() ? feature_cost(features) : cost(kernel, device);
  return std::isnan(estimate) ? std::numeric_limits<double>::infinity() : estimate;
}

namespace {

const passes::Optimization* find_in(const std::vector<const passes::Optimization*>& optimizations,
                                    std::string_view name) {
  for (const passes::Optimization* opt : optimizations)
    if (opt->name() == name) return opt;
  return nullptr;
}

Error with_step(Error error, const passes::OptStep& step) {
  error.message = "step `" + step.to_string() + "`: " + error.message;
  return error;
}

}  // namespace

SearchSpace make_search_space(std::vector<const passes::Optimization*> optimizations, KernelPass normalize,
                              KernelPass finalize, CostModel cost) {
  SearchSpace space;
  space.optimizations = std::move(optimizations);
  space.normalize = normalize;
  space.cost = std::move(cost);
  space.version = search_space_version(space.optimizations);
  // The functions capture copies: a SearchSpace may be copied and outlive
  // whatever built it.
  space.apply = [optimizations = space.optimizations, normalize](
                    const ir::Kernel& normalized, const passes::OptStep& step,
                    const DeviceInfo& device) -> Result<ir::Kernel> {
    const passes::Optimization* opt = find_in(optimizations, step.opt);
    if (opt == nullptr)
      return with_step(make_error(ErrorCode::NotFound, "no optimization named '" + step.opt + "'"), step);
    Result<ir::Kernel> applied = opt->apply(normalized, step, device);
    if (!applied) return with_step(std::move(applied).error(), step);
    if (Result<void> valid = ir::verify(*applied); !valid)
      return with_step(make_error(ErrorCode::Internal, "the optimization produced an invalid kernel: " +
                                                           valid.error().to_string()),
                       step);
    return normalize(*applied, device);
  };
  space.lower = [apply = space.apply, normalize, finalize](const ir::Kernel& kernel, const passes::OptSequence& sequence,
                                                           const DeviceInfo& device) -> Result<ir::Kernel> {
    KILN_TRY(ir::verify(kernel));
    ir::Kernel current = normalize(kernel, device);
    for (const passes::OptStep& step : sequence) {
      KILN_TRY_ASSIGN(current, apply(current, step, device));
    }
    current = finalize(current, device);
    KILN_TRY(ir::verify(current));
    return current;
  };
  return space;
}

std::string search_space_version(std::span<const passes::Optimization* const> optimizations) {
  // FNV-1a over the names, each followed by a NUL: stable across builds.
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const passes::Optimization* opt : optimizations) {
    for (char c : opt->name()) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    h = (h ^ 0u) * 0x100000001b3ull;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%d-%08x", kSearchSpaceVersion, static_cast<unsigned>(h ^ (h >> 32)));
  return text;
}

}  // namespace kiln::tune
