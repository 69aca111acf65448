#!/usr/bin/env python3
# wstage.py IN OUT N [scalar]: a hand edit of kiln-emitted CUDA (gen.sh's mode wstage)
# for rmsnorm-rows: every group copies the weights w (v1) into shared memory
# with cp.async at its start, before any load of its row, and its writing
# loop reads them from there. The question (bench/gpu-hand/README.md,
# "rmsnorm's weights staged"): is rmsnorm's gap to layernorm on the H200 the
# latency of the weights' L2 loads in the writing loop (stores alone go out
# without waiting; the weight loads do not), rather than their bytes?
# With `scalar` the writing loop reads its blocks of weights from shared
# memory element by element (what kiln's LOCAL loads would be: the CUDA
# dialect reads vectors at any index from params only), else as kiln_load_any
# does from global memory (two aligned chunks and shifts).
# The copies are whole 16-byte chunks: the last one may read up to 14 bytes
# past w (inside cudaMalloc's granularity; a probe, not kiln's code).
import re
import sys

src = open(sys.argv[1]).read()
first, rest = src.split("\n", 1)
n = int(sys.argv[3])
smem = int(re.search(r"smem=(\d+)", first).group(1))
sig = re.search(r'extern "C" __global__ void .*?\bk\(([^)]*)\)', rest)
w_type = re.search(r"const (\w[\w ]*?)\* __restrict__ v1\b", sig.group(1)).group(1)
esize = 4 if w_type == "float" else 2
base = (smem + 15) // 16 * 16
chunks = (n * esize + 15) // 16
first = first.replace(f"smem={smem}", f"smem={base + chunks * 16}")
at = rest.index("{", sig.end()) + 1
stage = f"""
  extern __shared__ __align__(16) unsigned char kiln_wdyn[];
  {w_type}* kiln_w = ({w_type}*)(kiln_wdyn + {base});
  for (unsigned int kiln_i = threadIdx.x; kiln_i < {chunks}u; kiln_i += blockDim.x) {{
    const unsigned int kiln_dst = (unsigned int)__cvta_generic_to_shared(kiln_wdyn + {base} + 16u * kiln_i);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\\n" :: "r"(kiln_dst), "l"((const unsigned char*)v1 + 16u * kiln_i));
  }}
  asm volatile("cp.async.commit_group;\\n");"""
body = rest[at:]
if len(sys.argv) > 4 and sys.argv[4] == "scalar":
    body = re.sub(r"kiln_load_any<(\w+), (\d)>\(v1 \+ ", r"kiln_lds_scalars<\1, \2>(v1 + ", body)
    helper = ("template <typename V, unsigned int E, typename T>\n"
              "static __device__ __forceinline__ V kiln_lds_scalars(const T* p) {\n"
              "  V v;\n#pragma unroll\n"
              "  for (unsigned int i = 0; i < sizeof(V) / E; ++i) memcpy((unsigned char*)&v + i * E, p + i, E);\n"
              "  return v;\n}\n")
    rest = rest.replace('extern "C" __global__', helper + 'extern "C" __global__', 1)
    at = rest.index("{", re.search(r'extern "C" __global__ void .*?\bk\(([^)]*)\)', rest).end()) + 1
body, count = re.subn(r"\bv1\b", "kiln_w", body)
if count == 0:
    sys.exit("wstage.py: no read of the weights v1 in " + sys.argv[1])
# Every thread waits for its own copies before the first barrier, which then
# makes all of them visible to the group (the writing loop comes after it).
sync = body.index("__syncthreads();")
body = body[:sync] + 'asm volatile("cp.async.wait_all;\\n" ::: "memory");\n  ' + body[sync:]
open(sys.argv[2], "w").write(first + "\n" + rest[:at] + stage + body)
