// A random kernel generator for the differential tests: kernels that are
// valid by construction (each passes ir::verify; the generator checks) and
// run without faults on the interpreter: elementwise expressions over
// several inputs, register-accumulator reductions over (nested) loops of
// odd, zero, one or dynamic length, ifs, index arithmetic that divides and
// takes remainders, constant subexpressions, loop-invariant work inside
// loops, and (optionally) a LOCAL exchange through barriers.
//
// Every output element is written by one thread only; indices stay in
// range (they are reduced modulo the buffer length); integer divisors are
// non-zero constants other than -1; float comparisons and floor() see loaded
// values, never computed ones, so that a device's different rounding cannot
// flip them.
#pragma once

#include "kiln/ir/builder.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"
#include "kiln/kernels/library.hpp"

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln::passes::test {

struct GeneratedKernel {
  ir::Kernel kernel;
  std::vector<kernels::ArgSpec> args;  // slot order: inputs, the output, then scalars
  ir::DType dtype = ir::DType::F32;
  std::int64_t reduction_length = 1;   // the longest loop nest a value sums over (for tolerances)
  bool uses_local = false;             // has a LOCAL index (c:0 cannot run it)
};

class RandomKernelGenerator {
 public:
  // The kernel for `seed`: the same on every run and platform (mt19937_64's
  // sequence is fixed by the standard; the distributions used map it the
  // same way on libstdc++ builds).
  static GeneratedKernel generate(std::uint64_t seed) { return RandomKernelGenerator(seed).make(); }

 private:
  explicit RandomKernelGenerator(std::uint64_t seed) : rng_(seed) {}

  GeneratedKernel make() {
    GeneratedKernel g;
    g.dtype = pick<ir::DType>({ir::DType::F32, ir::DType::F32, ir::DType::F32, ir::DType::F64, ir::DType::F16,
                               ir::DType::BF16, ir::DType::I32, ir::DType::I32, ir::DType::I64, ir::DType::U32});
    dtype_ = g.dtype;
    build(g);
    g.kernel = b_.finish();
    if (Result<void> valid = ir::verify(g.kernel); !valid.ok())
      throw std::logic_error("generated kernel does not verify: " + valid.error().to_string() + "\n" + ir::print(g.kernel));
    return g;
  }

  using Value = ir::Value;

  std::int64_t uniform(std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <class T>
  T pick(std::initializer_list<T> options) {
    return *(options.begin() + uniform(0, static_cast<std::int64_t>(options.size()) - 1));
  }

  bool is_float() const { return ir::is_float(dtype_); }
  bool is_unsigned() const { return ir::is_int(dtype_) && !ir::is_signed_int(dtype_); }

  Value i64(std::int64_t v) { return b_.constant_i64(v); }
  Value number(double v) { return b_.constant(dtype_, v); }
  Value small_constant() {
    if (is_float()) return number(static_cast<double>(uniform(-8, 8)) / 4.0);
    return number(static_cast<double>(uniform(is_unsigned() ? 0 : -5, 5)));
  }

  // A value from memory: an input at the thread's element, its mirror, or
  // (in loops) an element chosen by the loop counter.
  Value leaf() {
    const Value input = inputs_[static_cast<std::size_t>(uniform(0, static_cast<std::int64_t>(inputs_.size()) - 1))];
    Value index = element_;
    const int choice = static_cast<int>(uniform(0, 3));
    if (choice == 1) index = b_.sub(i64(elements_ - 1), element_);
    if (choice >= 2 && !counters_.empty()) {
      const Value counter = counters_[static_cast<std::size_t>(uniform(0, static_cast<std::int64_t>(counters_.size()) - 1))];
      const Value scaled = b_.mul(counter, i64(uniform(1, 3)));
      const Value shifted = b_.add(element_, scaled);
      index = b_.mod(shifted, i64(elements_));  // element_ + counter*c >= 0: in range
    }
    return b_.load(input, index);
  }

  // A value of the kernel's dtype from a small integer (an index or counter).
  Value from_index(Value v) { return b_.cast(dtype_, v); }

  Value expression(int depth) {
    if (depth <= 0 || chance(0.25)) {
      switch (uniform(0, 5)) {
        case 0: return small_constant();
        case 1: return from_index(pick<Value>({row_, column_}));
        case 2:
          if (!counters_.empty()) return from_index(counters_.back());
          return leaf();
        default: return leaf();
      }
    }
    return is_float() ? float_expression(depth) : int_expression(depth);
  }

  Value float_expression(int depth) {
    switch (uniform(0, 17)) {
      case 0: { const Value x = expression(depth - 1); const Value y = expression(depth - 1); return b_.add(x, y); }
      case 1: { const Value x = expression(depth - 1); const Value y = expression(depth - 1); return b_.sub(x, y); }
      case 2: { const Value x = expression(depth - 1); const Value y = expression(depth - 1); return b_.mul(x, y); }
      case 3: { const Value x = expression(depth - 1); const Value y = expression(depth - 1); return b_.max(x, y); }
      case 4: { const Value x = expression(depth - 1); const Value y = expression(depth - 1); return b_.min(x, y); }
      case 5: return b_.neg(expression(depth - 1));
      case 6: return b_.abs(expression(depth - 1));
      case 7: { const Value x = expression(depth - 1); const Value y = expression(depth - 1); const Value z = expression(depth - 1); return b_.mad(x, y, z); }
      case 8: {  // select on loaded values only
        const Value a = leaf(); const Value c = leaf();
        const Value condition = b_.cmplt(a, c);
        const Value x = expression(depth - 1); const Value y = expression(depth - 1);
        return b_.select(condition, x, y);
      }
      case 9: return b_.sqrt(b_.abs(expression(depth - 1)));
      case 10: return b_.exp(b_.neg(b_.abs(expression(depth - 1))));
      case 11: { const Value x = b_.abs(expression(depth - 1)); return b_.ln(b_.add(x, number(1))); }
      case 12: { const Value x = expression(depth - 1); const Value y = b_.abs(expression(depth - 1)); return b_.div(x, b_.add(y, number(1))); }
      case 13: { const Value x = expression(depth - 1); return b_.pow(x, number(static_cast<double>(uniform(0, 4)))); }
      case 14: return b_.sin(expression(depth - 1));
      case 15: { const Value x = leaf(); return b_.floor(b_.mul(x, number(4))); }
      case 16: { const Value c1 = small_constant(); const Value c2 = small_constant(); const Value folded = b_.mul(c1, c2); return b_.add(expression(depth - 1), folded); }
      default: { const Value x = expression(depth - 1); return b_.div(x, number(pick<double>({1, 2, 4, 0.5, -1}))); }
    }
  }

  Value int_expression(int depth) {
    switch (uniform(0, 15)) {
      case 0: { const Value x = expression(depth - 1); const Value y = expression(depth - 1); return b_.add(x, y); }
      case 1: { const Value x = expression(depth - 1); const Value y = expression(depth - 1); return b_.sub(x, y); }
      case 2: { const Value x = expression(depth - 1); const Value y = expression(depth - 1); return b_.mul(x, y); }
      case 3: { const Value x = expression(depth - 1); const Value y = expression(depth - 1); return b_.max(x, y); }
      case 4: { const Value x = expression(depth - 1); const Value y = expression(depth - 1); return b_.min(x, y); }
      case 5: return b_.neg(expression(depth - 1));
      case 6: return b_.abs(expression(depth - 1));
      case 7: { const Value x = expression(depth - 1); const Value y = expression(depth - 1); return b_.bit_xor(x, y); }
      case 8: { const Value x = expression(depth - 1); const Value y = expression(depth - 1); return b_.bit_and(x, y); }
      case 9: { const Value x = expression(depth - 1); return b_.shl(x, number(static_cast<double>(uniform(0, 3)))); }
      case 10: { const Value x = expression(depth - 1); return b_.shr(x, number(static_cast<double>(uniform(0, 3)))); }
      case 11: {
        const Value x = expression(depth - 1);
        const std::int64_t d = is_unsigned() ? uniform(1, 8) : pick<std::int64_t>({-7, -4, -3, -2, 1, 2, 3, 4, 8});
        return b_.div(x, number(static_cast<double>(d)));
      }
      case 12: {
        const Value x = expression(depth - 1);
        const std::int64_t d = is_unsigned() ? uniform(1, 8) : pick<std::int64_t>({-5, -2, 2, 3, 4, 16});
        return b_.mod(x, number(static_cast<double>(d)));
      }
      case 13: {
        const Value a = leaf(); const Value c = leaf();
        const Value condition = b_.cmplt(a, c);
        const Value x = expression(depth - 1); const Value y = expression(depth - 1);
        return b_.select(condition, x, y);
      }
      case 14: { const Value x = expression(depth - 1); const Value y = expression(depth - 1); const Value z = expression(depth - 1); return b_.mad(x, y, z); }
      default: { const Value c1 = small_constant(); const Value c2 = small_constant(); const Value folded = b_.add(c1, c2); return b_.mul(expression(depth - 1), folded); }
    }
  }

  // A loop count: usually a small constant (0 and 1 included), sometimes a
  // VARIABLE param.
  Value loop_count(GeneratedKernel& g, std::int64_t& length) {
    length = pick<std::int64_t>({0, 1, 2, 3, 5, 7, 8});
    if (chance(0.25)) {
      length = uniform(0, 6);
      return scalar_param(g, length);
    }
    return i64(length);
  }

  Value scalar_param(GeneratedKernel& g, std::int64_t value) {
    const Value p = b_.param(ir::ParamKind::Variable, ir::DType::I64);
    scalars_.push_back({"s" + std::to_string(scalars_.size()), kernels::ArgRole::Scalar, ir::DType::I64, 1,
                        ir::encode_int(ir::DType::I64, value), 0, 0});
    (void)g;
    return p;
  }

  // acc = init; loop { [loop { ]acc = acc OP expr[ }] }; result uses acc.
  Value reduction(GeneratedKernel& g, int depth) {
    const Value acc = b_.storage(ir::Scope::Register, dtype_, 1);
    const bool use_max = chance(0.3);
    const double init = use_max ? (is_unsigned() ? 0.0 : -100.0) : 0.0;
    const Value zero = i64(0);
    b_.store(acc, zero, number(init));
    std::int64_t outer = 0, inner = 1;
    const Value count = loop_count(g, outer);
    const Value invariant = chance(0.4) ? expression(1) : Value{};
    const bool nested = chance(0.35);
    const Value inner_count = nested ? loop_count(g, inner) : Value{};  // params are top-level
    b_.for_loop(count, [&](Value k) {
      counters_.push_back(k);
      auto body = [&] {
        Value v = expression(depth);
        if (invariant.valid()) v = b_.add(v, invariant);
        if (is_float() && chance(0.3)) v = b_.exp(b_.neg(b_.abs(leaf())));  // loop-invariant load + math: LICM bait
        if (!is_float() && chance(0.3)) v = invariant.valid() ? invariant : small_constant();  // closed-form bait
        const Value current = b_.load(acc, zero);
        b_.store(acc, zero, use_max ? b_.max(current, v) : b_.add(current, v));
      };
      if (nested) {
        b_.for_loop(inner_count, [&](Value j) {
          counters_.push_back(j);
          body();
          counters_.pop_back();
        });
      } else {
        body();
      }
      counters_.pop_back();
    });
    g.reduction_length = std::max(g.reduction_length, std::max<std::int64_t>(outer * inner, 1));
    return b_.load(acc, zero);
  }

  void build(GeneratedKernel& g) {
    const std::int64_t rows = uniform(1, 13);
    const std::int64_t columns = pick<std::int64_t>({1, 1, 2, 3, 4, 7});
    const bool local = chance(0.15);
    const std::int64_t threads = local ? uniform(1, 8) : 1;
    elements_ = rows * columns * threads;
    const int n_inputs = static_cast<int>(uniform(1, 3));
    const double low = is_float() ? -1.0 : (is_unsigned() ? 0.0 : -9.0);
    const double high = is_float() ? 1.0 : 9.0;
    for (int i = 0; i < n_inputs; ++i) {
      inputs_.push_back(b_.param(ir::ParamKind::Global, dtype_, static_cast<std::uint64_t>(elements_)));
      g.args.push_back({"in" + std::to_string(i), kernels::ArgRole::Input, dtype_, static_cast<std::uint64_t>(elements_), 0,
                        low, high});
    }
    const Value out = b_.param(ir::ParamKind::GlobalMut, dtype_, static_cast<std::uint64_t>(elements_));
    g.args.push_back({"out", kernels::ArgRole::Output, dtype_, static_cast<std::uint64_t>(elements_), 0, 0, 0});

    const Value row_length = chance(0.3) ? scalar_param(g, rows) : i64(rows);
    row_ = b_.group_index(0, row_length);
    column_ = columns > 1 || chance(0.3) ? b_.group_index(1, columns) : i64(0);
    Value lane;
    if (local) {
      lane = b_.local_index(0, static_cast<std::uint32_t>(threads));
      g.uses_local = true;
    }
    // element = (row * columns + column) * threads + lane
    Value element = b_.add(b_.mul(row_, i64(columns)), column_);
    if (local) element = b_.add(b_.mul(element, i64(threads)), lane);
    element_ = element;

    Value result = expression(static_cast<int>(uniform(1, 3)));
    if (chance(0.5)) {
      const Value reduced = reduction(g, static_cast<int>(uniform(0, 2)));
      result = chance(0.5) ? b_.add(result, reduced) : b_.max(result, reduced);
    }
    if (chance(0.3)) {  // recover row and column by division: range-based rewrite bait
      const Value flat = b_.add(b_.mul(row_, i64(columns)), column_);
      const Value r = b_.div(flat, i64(columns));
      const Value c = b_.mod(flat, i64(columns));
      result = b_.add(result, from_index(b_.add(r, c)));
    }
    if (local) result = exchange(result, lane, threads);
    b_.store(out, element_, result);
    if (chance(0.3)) {  // a second, conditional store of the same element
      const Value third = b_.mod(row_, i64(3));
      const Value condition = b_.cmplt(third, i64(1));
      b_.if_then(condition, [&] { b_.store(out, element_, expression(1)); });
    }
    for (kernels::ArgSpec& scalar : scalars_) g.args.push_back(scalar);
  }

  // Threads of a group swap values through LOCAL memory: t reads what
  // threads-1-t wrote, between barriers.
  Value exchange(Value value, Value lane, std::int64_t threads) {
    const Value shared = b_.storage(ir::Scope::Local, dtype_, static_cast<std::uint64_t>(threads));
    b_.store(shared, lane, value);
    b_.barrier();
    const Value partner = b_.sub(i64(threads - 1), lane);
    const Value theirs = b_.load(shared, partner);
    b_.barrier();
    return b_.add(value, theirs);
  }

  std::mt19937_64 rng_;
  ir::Builder b_;
  ir::DType dtype_ = ir::DType::F32;
  std::vector<Value> inputs_;
  std::vector<Value> counters_;
  std::vector<kernels::ArgSpec> scalars_;
  Value row_, column_, element_;
  std::int64_t elements_ = 1;
};

}  // namespace kiln::passes::test
