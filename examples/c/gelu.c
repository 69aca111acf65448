/*
 * gelu.c - GELU (tanh form) over a vector from C through <kiln/kiln.h>: the
 * kernel from the C builder, compiled for c:0, launched, checked against
 * libm and timed. docs/embedding.md shows it beside C++ and Python.
 *
 *   cc -std=c99 gelu.c -I PREFIX/include -L PREFIX/lib -lkiln -lm -Wl,-rpath,PREFIX/lib
 */
#include <kiln/kiln.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define TRY(call)                                                   \
  do {                                                              \
    kiln_status_t* s_ = (call);                                     \
    if (s_ != NULL) {                                               \
      fprintf(stderr, "%s: %s\n", #call, kiln_status_message(s_));  \
      kiln_status_free(s_);                                         \
      exit(1);                                                      \
    }                                                               \
  } while (0)

enum { N = 1 << 16, TANH = 14 /* KILN_UNARY_TANH, ABI 1.1 */ };

/* v = c * a */
static kiln_value_t scale(kiln_builder_t* b, double c, kiln_value_t a) {
  kiln_value_t k, v;
  TRY(kiln_builder_const_f64(b, KILN_DTYPE_F32, c, &k));
  TRY(kiln_builder_binary(b, KILN_BINARY_MUL, k, a, &v));
  return v;
}

/* tanh(z), or 1 - 2 / (exp(2z) + 1) where the device lacks tanh. */
static kiln_value_t tanh_of(kiln_builder_t* b, const kiln_device_t* device, kiln_value_t z) {
  kiln_value_t v, e, one, two;
  if (kiln_device_supports_unary(device, TANH, KILN_DTYPE_F32)) {
    TRY(kiln_builder_unary(b, TANH, z, &v));
    return v;
  }
  TRY(kiln_builder_const_f64(b, KILN_DTYPE_F32, 1.0, &one));
  TRY(kiln_builder_const_f64(b, KILN_DTYPE_F32, 2.0, &two));
  TRY(kiln_builder_unary(b, KILN_UNARY_EXP, scale(b, 2.0, z), &e));
  TRY(kiln_builder_binary(b, KILN_BINARY_ADD, e, one, &e));
  TRY(kiln_builder_binary(b, KILN_BINARY_DIV, two, e, &e));
  TRY(kiln_builder_binary(b, KILN_BINARY_SUB, one, e, &v));
  return v;
}

int main(void) {
  static float x[N], y[N];
  kiln_runtime_t* runtime;
  kiln_device_t* device;
  kiln_builder_t* b;
  kiln_kernel_t* kernel;
  kiln_program_t* program;
  kiln_buffer_t *in, *out;
  kiln_value_t px, py, n, i, v, v3, inner, t, one, half;
  kiln_launch_arg_t args[2];
  kiln_timing_t timing = {KILN_TIMING_T_SIZE, 0, 0, 0, 0};
  double worst = 0;
  int k;

  TRY(kiln_runtime_open(NULL, &runtime));
  TRY(kiln_device_open(runtime, "c:0", &device));

  /* y[i] = 0.5 * x * (1 + tanh(0.79788456 * (x + 0.044715 * x^3))) */
  TRY(kiln_builder_new(&b));
  TRY(kiln_builder_param(b, KILN_PARAM_GLOBAL, KILN_DTYPE_F32, N, &px));
  TRY(kiln_builder_param(b, KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, N, &py));
  TRY(kiln_builder_const_i64(b, KILN_DTYPE_I64, N, &n));
  TRY(kiln_builder_index(b, 0, n, &i));
  TRY(kiln_builder_load(b, px, i, &v));
  TRY(kiln_builder_binary(b, KILN_BINARY_MUL, v, v, &v3));
  TRY(kiln_builder_binary(b, KILN_BINARY_MUL, v3, v, &v3));
  TRY(kiln_builder_binary(b, KILN_BINARY_ADD, v, scale(b, 0.044715, v3), &inner));
  t = tanh_of(b, device, scale(b, 0.79788456, inner));
  TRY(kiln_builder_const_f64(b, KILN_DTYPE_F32, 1.0, &one));
  TRY(kiln_builder_binary(b, KILN_BINARY_ADD, one, t, &t));
  half = scale(b, 0.5, v);
  TRY(kiln_builder_binary(b, KILN_BINARY_MUL, half, t, &t));
  TRY(kiln_builder_store(b, py, i, t));
  TRY(kiln_builder_finish(b, &kernel));

  TRY(kiln_program_compile(device, kernel, NULL, &program));
  for (k = 0; k < N; ++k) x[k] = (float)(k % 2001 - 1000) / 250.0f + 0.001f;
  TRY(kiln_buffer_alloc(device, sizeof x, &in));
  TRY(kiln_buffer_alloc(device, sizeof y, &out));
  TRY(kiln_buffer_write(in, 0, x, sizeof x));
  args[0] = kiln_arg_buffer(in);
  args[1] = kiln_arg_buffer(out);
  TRY(kiln_program_launch(program, args, 2));
  TRY(kiln_buffer_read(out, 0, y, sizeof y));
  for (k = 0; k < N; ++k) {
    const double e = 0.5 * x[k] * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (x[k] + 0.044715 * pow(x[k], 3))));
    const double err = fabs(y[k] - e) / (fabs(e) > 1 ? fabs(e) : 1);
    if (err > worst) worst = err;
  }
  TRY(kiln_program_launch_timed(program, args, 2, 1, 5, &timing));
  printf("gelu on c:0: max error %.2e, median %.1f us\n", worst, (double)timing.median_ns / 1e3);

  kiln_buffer_free(in);
  kiln_buffer_free(out);
  kiln_program_free(program);
  kiln_kernel_free(kernel);
  kiln_builder_free(b);
  kiln_device_free(device);
  kiln_runtime_free(runtime);
  return worst < 1e-5 ? 0 : 1;
}
