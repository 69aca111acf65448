#!/usr/bin/env bash
# Writes the kernels of one small transformer layer (1024 tokens, width
# 1024) as IR files, from kiln's standard kernels (`kiln ir NAME --size N`):
# the folder `kiln tune bench/model-kernels --budget B` tunes under one
# budget (docs/autotune.md, "Several kernels under one budget"; gpu-check
# step `multitune`). Run from the repository root after a build:
#   bench/model-kernels/make.sh [path/to/kiln]
set -eu
KILN=${1:-build/bin/kiln}
DIR=$(dirname "$0")
write() {  # file name size
  "$KILN" ir "$2" --size "$3" >"$DIR/$1.kir"
}
write 01-layernorm-1024x1024 layernorm-rows 1024
write 02-matmul-qkv-1024 matmul 1024
write 03-matmul-bt-scores-1024 matmul-bt 1024
write 04-max-rows-1024x1024 max-rows 1024
write 05-softmax-1024x1024 softmax-rows 1024
write 06-transpose-1024x1024 transpose 1024
write 07-add-residual-1048576 add 1048576
write 08-rmsnorm-1024x1024 rmsnorm-rows 1024
write 09-exp-chain-1048576 exp-chain 1048576
write 10-sum-rows-1024x1024 sum-rows 1024
write 11-matmul-out-512 matmul 512
