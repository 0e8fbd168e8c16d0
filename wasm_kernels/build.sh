#!/usr/bin/env bash
# Builds the three kernel variants into OUT_DIR (default: ../py_frontend/qnnweb/wasm):
#   qnnweb-scalar.wasm   no SIMD           (Emscripten)
#   qnnweb-simd128.wasm  SIMD128           (Emscripten)
#   qnnweb-relaxed.wasm  SIMD128 + relaxed (clang-19 + wasm-ld: Debian's binaryen 108 corrupts relaxed SIMD)
# Every module is validated with wasm-tools and has the same export list.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/../py_frontend/qnnweb/wasm}"
mkdir -p "$out"
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"

cd "$here"
shopt -s nullglob
common_srcs=(src/allocator.c src/config.c src/plan.c src/packing.c src/indirection.c src/operators/*.c)
scalar_srcs=(src/qs8-igemm/*-scalar.c src/qs8-dwconv/*-scalar.c)
simd128_srcs=(src/qs8-igemm/*-simd128.c src/qs8-dwconv/*-simd128.c)
relaxed_srcs=(src/qs8-igemm/*-relaxed.c)
cflags=(-O3 -std=c99 -Iinclude -Isrc -Wall -Wextra -Werror -mbulk-memory -mnontrapping-fptoint -mmutable-globals -msign-ext)


emcc_build() {  # name, extra flags..., -- sources...
  local name="$1"; shift
  emcc "${cflags[@]}" "$@" -sSTANDALONE_WASM --no-entry -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=1MB \
    -sTOTAL_STACK=64KB -o "$out/qnnweb-$name.wasm"
}

emcc_build scalar "${common_srcs[@]}" "${scalar_srcs[@]}"
emcc_build simd128 -msimd128 "${common_srcs[@]}" "${scalar_srcs[@]}" "${simd128_srcs[@]}"

clang19="${CLANG19:-clang-19}"
wasm_ld="${WASM_LD19:-/usr/lib/llvm-19/bin/wasm-ld}"
objdir="$(mktemp -d)"
trap 'rm -rf "$objdir"' EXIT
objs=()
for src in "${common_srcs[@]}" "${scalar_srcs[@]}" "${simd128_srcs[@]}" "${relaxed_srcs[@]}"; do
  obj="$objdir/$(echo "$src" | tr '/' '_').o"
  "$clang19" --target=wasm32 -nostdlib -ffreestanding "${cflags[@]}" -msimd128 -mrelaxed-simd -c "$src" -o "$obj"
  objs+=("$obj")
done
"$wasm_ld" --no-entry --export-dynamic --growable-table --stack-first -z stack-size=65536 \
  --initial-memory=1048576 --max-memory=2147483648 "${objs[@]}" -o "$out/qnnweb-relaxed.wasm"

for variant in scalar simd128 relaxed; do
  wasm-tools validate --features all "$out/qnnweb-$variant.wasm"
done
ls -l "$out"/qnnweb-*.wasm
