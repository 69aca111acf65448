#!/usr/bin/env python3
# l1.py IN OUT [na]: a hand edit of kiln-emitted CUDA (gen.sh's modes l1 and
# l1na) for a row kernel with weights (rmsnorm): the kernel asks for the
# largest L1 its shared memory leaves (KILN_CARVEOUT 0, which bench.cu
# applies as the preferred shared-memory carveout), so that the weights, read
# again by every row, may stay in the SM's L1 from one group to the next
# instead of coming from L2 each row; with `na` every 16-byte load of the
# first input x goes out as ld.global.L1::no_allocate, so the streamed row
# does not evict them. For reading only: what it answers is whether the
# weights' L2 traffic holds rmsnorm under layernorm at n = 50257 in f32.
import re, sys
src = open(sys.argv[1]).read()
first, rest = src.split("\n", 1)
head = first + "\n#define KILN_CARVEOUT 0\n"
if len(sys.argv) > 3 and sys.argv[3] == "na":
    helper = ("static __device__ __forceinline__ kiln_f32x4 kiln_ld_na(const float* p) { kiln_f32x4 r;\n"
              "  asm(\"ld.global.L1::no_allocate.v4.f32 {%0, %1, %2, %3}, [%4];\"\n"
              "      : \"=f\"(r.v[0]), \"=f\"(r.v[1]), \"=f\"(r.v[2]), \"=f\"(r.v[3]) : \"l\"(p)); return r; }\n")
    rest, count = re.subn(r"\*\(const kiln_f32x4\*\)\(v0 \+ (v\d+)\)", r"kiln_ld_na(v0 + \1)", rest)
    if count == 0: sys.exit("l1.py: no 16-byte f32 load of v0 to edit in " + sys.argv[1])
    rest = rest.replace('extern "C" __global__', helper + 'extern "C" __global__', 1)
open(sys.argv[2], "w").write(head + rest)
