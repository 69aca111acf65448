// launch / launch_timed: one sgemm/dgemm on the host pointers, synchronous
// (events are NULL), timed with a steady clock around the call.
#include "cblas.hpp"

#include <kiln/sdk/grid.hpp>
#include <kiln/sdk/launch_args.hpp>
#include <kiln/sdk/handles.hpp>
#include <kiln/sdk/plugin_support.hpp>
#include <kiln/sdk/timing.hpp>
#include <kiln/sdk/wire.hpp>

#include <bit>
#include <cstring>

namespace kiln::cblas {

namespace {

// Everything one call needs, worked out (and checked) once per launch.
struct GemmCall {
  unsigned dtype = 0;
  CBLAS_TRANSPOSE trans_a = CblasNoTrans, trans_b = CblasNoTrans;
  int m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  double alpha = 1;
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;

  void run(const OpenBlas& blas) const {
    if (dtype == KILN_DTYPE_F32)
      blas.sgemm(CblasRowMajor, trans_a, trans_b, m, n, k, static_cast<float>(alpha), static_cast<const float*>(a), lda,
                 static_cast<const float*>(b), ldb, 0.0f, static_cast<float*>(c), ldc);
    else
      blas.dgemm(CblasRowMajor, trans_a, trans_b, m, n, k, alpha, static_cast<const double*>(a), lda,
                 static_cast<const double*>(b), ldb, 0.0, static_cast<double*>(c), ldc);
  }
};

// The operand's first element, after checking that every element the
// product touches lies within the bound memory.
char* operand_at(const Operand& o, const char* name, const GemmDims& d, const GemmPlan& p, const kiln_launch_args& launch,
                 const sdk::HostArguments& args, bool touched) {
  const std::int64_t extent[4] = {p.row_axis == 0 ? d.m : p.col_axis == 0 ? d.n : 1,
                                  p.row_axis == 1 ? d.m : p.col_axis == 1 ? d.n : 1,
                                  p.row_axis == 2 ? d.m : p.col_axis == 2 ? d.n : 1, d.k};
  const unsigned size = sdk::dtype_bytes(p.dtype);
  if (touched) {
    __int128 last = o.index.constant;
    for (int s = 0; s < 4; ++s) last += static_cast<__int128>(o.index.coefficient[s]) * (extent[s] - 1);
    const std::uint64_t elements = launch.args[o.slot].bytes / size;
    if (last >= static_cast<__int128>(elements))
      sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "cblas: launch: " + std::string(name) + " (argument " + std::to_string(o.slot) +
                                                  ") reaches element " + std::to_string(static_cast<long long>(last)) + " of " +
                                                  std::to_string(elements));
  }
  return static_cast<char*>(args.pointers[o.slot]) + o.index.constant * size;
}

GemmCall plan_call(const Program& program, const kiln_launch_args& launch, const sdk::HostArguments& args) {
  const GemmPlan& p = program.plan;
  GemmDims d;
  d.m = p.row_axis >= 0 ? args.groups[p.row_axis] : 1;
  d.n = p.col_axis >= 0 ? args.groups[p.col_axis] : 1;
  d.k = std::max<std::int64_t>(0, sdk::eval_host_expr(p.ops, p.k_op, {launch.args, launch.n_args}));
  Operand a = p.a, b = p.b;
  if (const std::string problem = settle_layout(a, b, p.c, d); !problem.empty())
    sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "cblas: launch: at M=" + std::to_string(d.m) + " N=" + std::to_string(d.n) +
                                                " K=" + std::to_string(d.k) + ", " + problem);
  const LeadingDims ld = leading_dims(a, b, p.c, d);
  GemmCall call;
  call.dtype = p.dtype;
  call.trans_a = a.transposed ? CblasTrans : CblasNoTrans;
  call.trans_b = b.transposed ? CblasTrans : CblasNoTrans;
  call.m = static_cast<int>(d.m);
  call.n = static_cast<int>(d.n);
  call.k = static_cast<int>(d.k);
  call.lda = static_cast<int>(ld.lda);
  call.ldb = static_cast<int>(ld.ldb);
  call.ldc = static_cast<int>(ld.ldc);
  if (p.alpha_kind == GemmPlan::Alpha::Constant) call.alpha = p.alpha;
  if (p.alpha_kind == GemmPlan::Alpha::Variable) {
    const std::uint64_t bits = args.scalars[p.alpha_slot];
    call.alpha = p.dtype == KILN_DTYPE_F32 ? std::bit_cast<float>(static_cast<std::uint32_t>(bits)) : std::bit_cast<double>(bits);
  }
  call.a = operand_at(a, "A", d, p, launch, args, d.k > 0);
  call.b = operand_at(b, "B", d, p, launch, args, d.k > 0);
  call.c = operand_at(p.c, "C", d, p, launch, args, true);
  return call;
}

const Program& checked_program(const kiln_launch_args& launch) {
  return sdk::checked_program<const Program>(launch.program, "cblas: launch");
}

kiln_error* launch(kiln_launch_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    const Program& program = checked_program(args);
    const sdk::HostArguments arguments = sdk::host_arguments(args, program.plan.params);
    plan_call(program, args, arguments).run(*state().blas);
    args.event = nullptr;
    sdk::write_args(raw, args);
  });
}

kiln_error* launch_timed(kiln_timed_launch_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    const kiln_launch_args launch = sdk::timed_launch_of(args);
    const Program& program = checked_program(launch);
    const sdk::HostArguments arguments = sdk::host_arguments(launch, program.plan.params);
    const GemmCall call = plan_call(program, launch, arguments);
    const bool flush = (args.flags & KILN_TIMED_FLUSH_CACHE) != 0;
    const OpenBlas& blas = *state().blas;
    const sdk::TimingResult result = sdk::time_runs(args.warmups, args.repeats, args.abort_ns, [&] {
      if (flush) sdk::flush_host_caches(arguments, launch);
      return sdk::steady_ns([&] { call.run(blas); });
    });
    sdk::store_timing(args, result, KILN_TIMER_HOST);
    sdk::write_args(raw, args);
  });
}

}  // namespace

const sdk::LaunchFunctions kLaunchFunctions = {launch, launch_timed};

}  // namespace kiln::cblas
