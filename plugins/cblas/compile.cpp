// compile: a matrix-product kernel becomes a planned sgemm/dgemm call; any
// other kernel is UNSUPPORTED with failed_op (expected: the autotuner and the
// runtime skip such kernels for this device).
#include "cblas_plugin.hpp"

#include <kiln/sdk/launch_args.hpp>
#include <kiln/sdk/grid.hpp>
#include <kiln/sdk/plugin_support.hpp>
#include <kiln/sdk/wire.hpp>

#include <memory>

namespace kiln::cblas {

namespace {

// K must be computable before launch: CONSTs, VARIABLE params and integer
// arithmetic over them. Probed with every scalar set to 1.
void check_trip_count(const GemmPlan& plan) {
  std::vector<kiln_arg> probe(plan.params.size());
  for (std::size_t slot = 0; slot < plan.params.size(); ++slot) {
    probe[slot].kind = plan.params[slot].kind == KILN_PARAM_VARIABLE ? KILN_ARG_SCALAR : KILN_ARG_BUFFER;
    probe[slot].dtype = plan.params[slot].dtype;
    probe[slot].scalar_bits = 1;
  }
  try {
    sdk::eval_host_expr(plan.ops, plan.k_op, probe);
  } catch (const sdk::PluginError& e) {
    sdk::fail(KILN_STATUS_UNSUPPORTED, "cblas: the loop's trip count is not known before launch: " + std::string(e.what()), plan.k_op);
  }
}

}  // namespace

kiln_error* compile(kiln_compile_args* raw) {
  return sdk::guard_compile(raw, [&] {
    auto args = sdk::read_args(raw);
    auto program = std::make_unique<Program>();
    program->plan = match_gemm(sdk::kernel_ops(args.kernel));
    check_trip_count(program->plan);
    program->text = describe_call(program->plan);
    args.program = reinterpret_cast<kiln_program*>(program.release());
    sdk::write_args(raw, args);
  });
}

kiln_error* program_source(kiln_program_source_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    if (args.program == nullptr) sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "cblas: program_source: program is NULL");
    const Program* program = reinterpret_cast<const Program*>(args.program);
    args.language = "blas-call";
    args.text = program->text.c_str();
    args.text_len = program->text.size();
    sdk::write_args(raw, args);
  });
}

void program_release(kiln_program* program) { delete reinterpret_cast<Program*>(program); }

kiln_error* cache_key(kiln_cache_key_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    args.key = state().cache_key.c_str();
    sdk::write_args(raw, args);
  });
}

}  // namespace kiln::cblas
