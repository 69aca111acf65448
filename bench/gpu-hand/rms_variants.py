#!/usr/bin/env python3
"""rms_variants.py [BUILD_DIR]: after `gen.sh rows-50257.list`, three edits of
.gpu/hand/rms_f16_reg.cu (rmsnorm f16 at n = 50257, rows that start anywhere,
so w is read as scalars) that ask why it trails layernorm:

  rms_f16_aligned  the same recipe at n = 50256 (split_loop for split_aligned:
                   every row aligned, w read as 8-byte vectors): the ceiling
  rms_f16_cs       x read evict-first (__ldcs), so w may stay in L1
  rms_f16_wsm      w copied once a group into shared memory (16-byte loads),
                   read from there
"""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build"
HAND = ROOT / ".gpu" / "hand"
N = 50257

src = (HAND / "rms_f16_reg.cu").read_text()

aligned = ("split_loop(loop=1,factor=4); unroll(loop=2,factor=0); split_loop(loop=0,factor=4); "
           "unroll(loop=1,factor=0); tiled_reduce(loop=0,local=1024,branch=4,subgroup=32); "
           "tiled_reduce(loop=1,local=1024,branch=4); peel_loop(loop=1,count=12); peel_loop(loop=0,count=12); "
           "row_cache(loop=0); unroll(loop=1,factor=0); unroll(loop=0,factor=0); vectorize(lanes=4)")
with open(HAND / "rms_f16_aligned.cu", "w") as out:
    subprocess.run([str(BUILD / "bin" / "kiln_emit_cuda"), "rmsnorm-rows", "5342", str(N - 1), "f16", aligned],
                   stdout=out, check=True)

helper = ("static __device__ __forceinline__ kiln_u16x4 kiln_cs4(const unsigned short* p) "
          "{ const uint2 u = __ldcs((const uint2*)p); kiln_u16x4 r; memcpy(&r, &u, 8); return r; }\n")
cs = re.sub(r"\*\(const kiln_u16x4\*\)\(v0 \+ (v\d+)\)", r"kiln_cs4(v0 + \1)", src)
(HAND / "rms_f16_cs.cu").write_text(cs.replace('extern "C" __global__', helper + 'extern "C" __global__', 1))

first, rest = src.split("\n", 1)
smem = int(re.search(r"smem=(\d+)", first).group(1))
first = first.replace(f"smem={smem}", f"smem={smem + (N * 2 + 15) // 16 * 16}")
body = re.sub(r"kiln_f16_to_f32\(v1\[", "kiln_f16_to_f32(kiln_wsm[", first + "\n" + rest)
at = body.index("{", body.index('extern "C" __global__')) + 1
stage = f"""
  extern __shared__ __align__(16) unsigned char kiln_wdyn[];
  unsigned short* kiln_wsm = (unsigned short*)kiln_wdyn;
  for (int i = threadIdx.x; i < {N} / 8; i += blockDim.x) ((uint4*)kiln_wsm)[i] = __ldg(((const uint4*)v1) + i);
  if (threadIdx.x == 0) for (int i = {N} / 8 * 8; i < {N}; ++i) kiln_wsm[i] = v1[i];
  __syncthreads();"""
(HAND / "rms_f16_wsm.cu").write_text(body[:at] + stage + body[at:])
print("rms_f16_aligned rms_f16_cs rms_f16_wsm written to", HAND)
