#!/usr/bin/env python3
"""uload_variants.py: after `gen.sh rows-50257.list`, one edit of
.gpu/hand/rms_f16_reg.cu (rmsnorm f16 at n = 50257, rows that start anywhere,
blocks of 4, so w is read as four 2-byte loads a block) that asks what a
vector load at any element index is worth there:

  rms_f16_uload  each block's four weights as one 8-byte vector at any
                 element index: the two aligned 8-byte words around it (the
                 second only when the vector crosses into it) and funnel
                 shifts, as a CUDA dialect would emit LOAD unaligned f16x4
"""
import re
from pathlib import Path

HAND = Path(__file__).resolve().parents[2] / ".gpu" / "hand"
src = (HAND / "rms_f16_reg.cu").read_text()

helper = r"""
static __device__ __forceinline__ kiln_u16x4 kiln_load_any_u16x4(const unsigned short* p) {
  const unsigned long long a = (unsigned long long)p;
  const unsigned shift = (unsigned)(a & 7u) * 8u;
  const uint2* q = (const uint2*)(a & ~7ull);
  const uint2 lo = __ldg(q);
  uint2 hi = make_uint2(0u, 0u);
  if (shift != 0u) hi = __ldg(q + 1);
  const bool word = shift >= 32u;
  const unsigned w0 = word ? lo.y : lo.x, w1 = word ? hi.x : lo.y, w2 = word ? hi.y : hi.x;
  const unsigned s = shift & 31u;
  const unsigned r0 = __funnelshift_r(w0, w1, s), r1 = __funnelshift_r(w1, w2, s);
  kiln_u16x4 r;
  r.v[0] = (unsigned short)r0; r.v[1] = (unsigned short)(r0 >> 16);
  r.v[2] = (unsigned short)r1; r.v[3] = (unsigned short)(r1 >> 16);
  return r;
}
"""

lines = src.split("\n")
# index var -> (block start var, lane) for the lanes 1..3 of a block:
# `const int vB = ((unsigned int)vA + (unsigned int)v7|v8|v9);`
lane_of = {"v7": 1, "v8": 2, "v9": 3}
offset = {}
for line in lines:
    m = re.match(r"\s*const int (v\d+) = \(\(unsigned int\)(v\d+) \+ \(unsigned int\)(v[789])\);", line)
    if m:
        offset[m.group(1)] = (m.group(2), lane_of[m.group(3)])
load = re.compile(r"kiln_f16_to_f32\(v1\[(v\d+)\]\)")
starts = {base for base, _ in offset.values()}
out, edits = [], 0
for line in lines:
    m = load.search(line)
    if m and m.group(1) in starts:
        b = m.group(1)
        out.append(f"  const kiln_u16x4 w_{b} = kiln_load_any_u16x4(v1 + {b});")
        line = line.replace(m.group(0), f"kiln_f16_to_f32(w_{b}.v[0])")
        edits += 1
    elif m and m.group(1) in offset and offset[m.group(1)][0] in starts:
        b, lane = offset[m.group(1)]
        line = line.replace(m.group(0), f"kiln_f16_to_f32(w_{b}.v[{lane}])")
    out.append(line)
body = "\n".join(out)
at = body.index('extern "C" __global__')
(HAND / "rms_f16_uload.cu").write_text(body[:at] + helper + body[at:])
print(f"rms_f16_uload written to {HAND} ({edits} blocks of weights)")
