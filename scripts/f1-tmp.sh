# F1: full build + GPU tests + hvt + tunetime (short and 60 s) on the merged main
set -u
L=/tmp/L; mkdir -p $L
(KILN_GPU_STEPS=tests,tunetime KILN_GPU_TUNETIME_LONG=60 KILN_GPU_TUNETIME_MODEL=0 OUT=$L timeout 480 scripts/gpu-check.sh > $L/stdout-f1.txt 2>&1)
cp $L/stdout-f1.txt $L/tunetime.md $OUT/ 2>/dev/null
tar czf $OUT/logs-f1.tgz -C $L --exclude='*.sqlite' --exclude='tunetime-cache' . 2>/dev/null
source $L/env.sh 2>/dev/null
tar czf $OUT/logs-f1.tgz -C $L --exclude='*.sqlite' --exclude='tunetime-cache' . 2>/dev/null
grep -E "^(build|configure|cuda|opencl|vulkan|conformance|plugin|tune-tests|tunetime|mma-op)" $L/stdout-f1.txt | tail -20; cat $L/tunetime.md | tail -10
