#!/usr/bin/env python3
# hoist.py IN OUT [GROUPS]: a hand edit of kiln-emitted CUDA (gen.sh's modes
# hoist and hoist2): each 16-byte load of a kernel input, and the integer
# index arithmetic before it, moved as far up its block as its operands
# allow, so all of a straight run's loads go out before their first use.
# GROUPS: a second __launch_bounds__ argument (groups an SM the registers
# must allow). Text-level and for reading only: kiln's own form of the idea
# for LOCAL rows is the async_copies() step.
import re, sys
src = open(sys.argv[1]).read().split("\n")
sig = next(l for l in src if "__global__" in l)
inputs = set(re.findall(r"const [a-z ]+\* __restrict__ (v\d+)", sig))
if len(sys.argv) > 3:
    src = [re.sub(r"__launch_bounds__\((\d+)\)", r"__launch_bounds__(\1, %s)" % sys.argv[3], l) for l in src]
defn = re.compile(r"^\s*const (int|unsigned char|long long|unsigned int|kiln_u16x8|float4|float2|uint4|uint2) (v\d+(?:_bits)?) = (.*);$")
def hoistable(line):
    m = defn.match(line)
    if not m: return None
    rhs = m.group(3)
    loads = re.findall(r"\(v(\d+) \+", rhs) if rhs.startswith("*(const") else []
    if rhs.startswith("*(const"):
        if not all("v" + l in inputs for l in loads): return None
    elif "[" in rhs or "(" in rhs and re.search(r"[a-z_]+\(", rhs): return None
    return m.group(2), set(re.findall(r"v\d+(?:_bits)?", rhs))
def boundary(line):
    s = line.strip()
    return s.endswith("{") or s.startswith("}") or "__syncthreads" in s or s.startswith("if") or s.startswith("for")
out = []
moved = 0
for line in src:
    h = hoistable(line)
    if not h:
        out.append(line); continue
    name, uses = h
    pos = len(out)
    while pos > 0:
        prev = out[pos - 1]
        if boundary(prev): break
        pm = defn.match(prev) or re.match(r"^\s*(?:const )?[\w ]+? (v\d+(?:_bits)?)(?:\[\d+\])? = ", prev)
        defined = set(re.findall(r"\b(v\d+(?:_bits)?)\s*=", prev.split("=")[0] + "=")) if "=" in prev else set()
        if defined & uses: break
        pos -= 1
    if pos != len(out): moved += 1
    out.insert(pos, line)
open(sys.argv[2], "w").write("\n".join(out))
print("hoisted", moved, "lines", file=sys.stderr)
