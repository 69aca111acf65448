#!/usr/bin/env python3
# exp_poly.py IN OUT all|half: a hand edit of kiln-emitted CUDA (gen.sh's
# modes expfma and exphalf) for softmax-rows: every exponential (all), or
# every second one in the source (half), computed on the FMA pipe (a degree-6
# polynomial of the fraction, the integer part added to the exponent bits)
# instead of MUFU.EX2. The question (bench/gpu-hand/README.md, "softmax's
# exponentials"): does the special-function unit bound the 16-bit softmax at
# n = 50257 on the H200? An SM issues 16 MUFU.EX2 a clock against 128 FMAs,
# and the LOCAL-row softmax computes two exponentials an element (its sum
# loop and its writing loop).
import re
import sys

src = open(sys.argv[1]).read()
helper = r"""static __device__ __forceinline__ float kiln_exp2_fma(float x) {
  x = fmaxf(x, -126.0f);
  const float t = x + 12582912.0f;  // 1.5 * 2^23: t's low bits hold round(x)
  const float f = x - (t - 12582912.0f);
  float p = 1.5403530e-4f;
  p = fmaf(p, f, 1.3333558e-3f);
  p = fmaf(p, f, 9.6181291e-3f);
  p = fmaf(p, f, 5.5504109e-2f);
  p = fmaf(p, f, 2.4022651e-1f);
  p = fmaf(p, f, 6.9314718e-1f);
  p = fmaf(p, f, 1.0f);
  return __int_as_float(__float_as_int(p) + (__float_as_int(t) << 23));
}
"""
head, body = src.split('extern "C" __global__', 1)
calls = iter(range(1 << 30))
every = 1 if sys.argv[3] == "all" else 2
body, count = re.subn(r"kiln_exp2_f32\(",
                      lambda m: "kiln_exp2_fma(" if next(calls) % every == 0 else m.group(0), body)
if count == 0:
    sys.exit("exp_poly.py: no kiln_exp2_f32 call in " + sys.argv[1])
open(sys.argv[2], "w").write(head + helper + 'extern "C" __global__' + body)
