#!/usr/bin/env bash
# Builds the three kernel variants into OUT_DIR (default: ../py_frontend/qnnweb/wasm):
#   qnnweb-scalar.wasm   no SIMD            compiled by Emscripten's clang
#   qnnweb-simd128.wasm  SIMD128            compiled by Emscripten's clang
#   qnnweb-relaxed.wasm  SIMD128 + relaxed  compiled by clang-19 (Debian's Emscripten has LLVM 14, which
#                                           lacks relaxed SIMD, and its binaryen 108 corrupts such code)
#   qnnweb-VARIANT-threads.wasm             the same kernels for several threads (clang-19, atomics):
#                                           memory is imported (env.memory, shared, 2 GiB maximum) so
#                                           that every thread's instance runs on it; src/threadpool.c
# All three are linked by the same wasm-ld command (no wasm-opt, no Emscripten runtime), so their
# export lists are identical: memory and the qnn_* functions (marked with QNN_EXPORT). Every module is
# validated with wasm-tools.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mkdir -p "${1:-$here/../py_frontend/qnnweb/wasm}" && cd "${1:-$here/../py_frontend/qnnweb/wasm}" && pwd)"
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"
clang19="${CLANG19:-clang-19}"
wasm_ld="${WASM_LD19:-/usr/lib/llvm-19/bin/wasm-ld}"

cd "$here"
shopt -s nullglob
common_srcs=(src/allocator.c src/threadpool.c src/config.c src/plan.c src/packing.c src/indirection.c src/gemm_rows.c src/fmaf.c
             src/operators/*.c)
scalar_srcs=(src/qs8-igemm/*-scalar.c src/qs8-dwconv/*-scalar.c)
simd128_srcs=(src/qs8-igemm/*-simd128*.c src/qs8-gemm/*-simd128*.c src/qs8-packa/*-simd128*.c src/qs8-dwconv/*-simd128*.c)
relaxed_srcs=(src/qs8-igemm/*-relaxed*.c src/qs8-dwconv/*-relaxed*.c)
cflags=(-O3 -std=c99 -Iinclude -Isrc -Wall -Wextra -Werror -ffreestanding
        -mbulk-memory -mnontrapping-fptoint -mmutable-globals -msign-ext)
# Extra flags for testing only, e.g. QNN_EXTRA_CFLAGS=-DQNN_RELAXED_DOT_KIND=1 (see src/config.c).
read -r -a extra_cflags <<< "${QNN_EXTRA_CFLAGS:-}"
cflags+=("${extra_cflags[@]}")

objdir="$(mktemp -d)"
trap 'rm -rf "$objdir"' EXIT

# The SIMD128 microkernels are compiled by Emscripten's clang in every module, the relaxed and threaded
# ones too: V8 runs its code for them faster than clang 19's (the packa + GEMM kernels; figures in
# docs/performance-log.md, 'Figures moved out of code comments').
kernel_cc=(emcc)

build() {  # variant, compiler command..., -- sources...
  local variant="$1"; shift
  local compiler=()
  while [ "$1" != "--" ]; do compiler+=("$1"); shift; done
  shift
  local objs=() link=() features=()
  case "$variant" in
    *-threads) link=(--import-memory --shared-memory --export=__stack_pointer); features+=(-matomics) ;;
  esac
  case "$variant" in simd128*|relaxed*) features+=(-msimd128) ;; esac
  mkdir -p "$objdir/$variant"
  for src in "$@"; do
    local obj="$objdir/$variant/$(echo "$src" | tr '/' '_').o"
    case "$src" in
      src/qs8-*/*-simd128*.c) "${kernel_cc[@]}" "${features[@]}" "${cflags[@]}" -c "$src" -o "$obj" ;;
      *) "${compiler[@]}" "${cflags[@]}" -c "$src" -o "$obj" ;;
    esac
    objs+=("$obj")
  done
  # --strip-all: no name section (function names for debuggers only: 3 KB of the size budget)
  "$wasm_ld" --no-entry --stack-first --strip-all -z stack-size=65536 "${link[@]}" \
    --initial-memory=1048576 --max-memory=2147483648 "${objs[@]}" -o "$out/qnnweb-$variant.wasm"
  wasm-tools validate --features all "$out/qnnweb-$variant.wasm"
}

build scalar emcc -- "${common_srcs[@]}" "${scalar_srcs[@]}"
build simd128 emcc -msimd128 -- "${common_srcs[@]}" "${scalar_srcs[@]}" "${simd128_srcs[@]}"
build relaxed "$clang19" --target=wasm32 -msimd128 -mrelaxed-simd -- \
  "${common_srcs[@]}" "${scalar_srcs[@]}" "${simd128_srcs[@]}" "${relaxed_srcs[@]}"
threads=("$clang19" --target=wasm32 -matomics)
build scalar-threads "${threads[@]}" -- "${common_srcs[@]}" "${scalar_srcs[@]}"
build simd128-threads "${threads[@]}" -msimd128 -- "${common_srcs[@]}" "${scalar_srcs[@]}" "${simd128_srcs[@]}"
build relaxed-threads "${threads[@]}" -msimd128 -mrelaxed-simd -- \
  "${common_srcs[@]}" "${scalar_srcs[@]}" "${simd128_srcs[@]}" "${relaxed_srcs[@]}"
ls -l "$out"/qnnweb-*.wasm
