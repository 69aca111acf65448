// compile: a matrix-product kernel becomes a planned sgemm/dgemm call; any
// other kernel is UNSUPPORTED with failed_op (expected: the autotuner and the
// runtime skip such kernels for this device).
#include "cblas.hpp"

#include <kiln/sdk/launch_args.hpp>
#include <kiln/sdk/grid.hpp>
#include <kiln/sdk/plugin_entry.hpp>
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
  return sdk::answer_program_source(raw, "cblas: program_source", [](kiln_program* program) {
    return sdk::ProgramText{"blas-call", reinterpret_cast<const Program*>(program)->text};
  });
}

void program_release(kiln_program* program) { delete reinterpret_cast<Program*>(program); }

}  // namespace

const sdk::CompileFunctions kCompileFunctions = {compile, program_source, program_release};

}  // namespace kiln::cblas
