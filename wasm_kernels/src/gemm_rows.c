/* Rows of an int8 GEMM through the config's kernels (gemm_rows.h). */
#include "gemm_rows.h"

#if defined(__wasm_simd128__)
  #include <wasm_simd128.h>
#endif

#include "common.h"

size_t qnn_gemm_chunk_rows(size_t mr, size_t gemm_kc) {
  size_t tiles = 1;
  while (tiles < 16 && 2 * tiles * mr * gemm_kc * sizeof(int16_t) <= 32768) tiles *= 2;
  return tiles * mr;
}

#if defined(__wasm_simd128__)
/* vsum's four lanes += the sums of four bytes of v each */
static inline v128_t add_bytes(v128_t vsum, v128_t v) {
#if defined(__wasm_relaxed_simd__)
  /* a dot with ones: its "i7" operand in [0, 127], where every engine agrees */
  return wasm_i32x4_relaxed_dot_i8x16_i7x16_add(v, wasm_i8x16_const_splat(1), vsum);
#else
  return wasm_i32x4_add(vsum, wasm_i32x4_extadd_pairwise_i16x8(wasm_i16x8_extadd_pairwise_i8x16(v)));
#endif
}
#endif

/* correction[m] for `rows` rows of the indirection `a`: -zw * sum over the window's taps and
 * channels of (x - x_zp) (with split weights every tap is listed twice: one of each pair), plus,
 * where the weights are packed XOR 0x80 (w + 128), -128 * the sum of the row's activations over
 * every tap the kernel reads. Up to round_up(rows, mr) the last row repeats, as the kernels repeat
 * it. */
static void row_corrections(const struct qnn_gemm_rows* op, const int8_t* const* a, size_t rows, size_t mr,
                            int32_t* correction) {
  const size_t ks = op->ks, kc = op->kc, step = op->tap_step;
  const uint32_t zero_sum = (uint32_t) op->input_zero_point * (uint32_t) (ks / step * kc);
  const uint32_t minus_zw = (uint32_t) -op->weights_zero_point;
  const uint32_t minus_offset = op->config->weights_xor != 0 ? (uint32_t) -128 * (uint32_t) step : 0;
#if defined(__wasm_simd128__)
  /* Four rows at a time, their 16-byte chunks side by side; the last chunk of each tap's kc
   * channels masked to them (it reads up to 15 bytes past them: QNN_EXTRA_BYTES). */
  const size_t full = kc & ~(size_t) 15;
  const v128_t tail_mask = wasm_i8x16_gt(wasm_i8x16_splat((int8_t) (kc & 15)),
                                         wasm_i8x16_const(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  for (size_t m0 = 0; m0 < rows; m0 += 4) {
    const int8_t* const* row[4];
    v128_t vsum[4];
    for (size_t i = 0; i < 4; i++) {
      row[i] = a + qnn_min_size(m0 + i, rows - 1) * ks;
      vsum[i] = wasm_i32x4_const_splat(0);
    }
    for (size_t t = 0; t < ks; t += step) {
      const int8_t* x[4] = {row[0][t], row[1][t], row[2][t], row[3][t]};
      for (size_t k = 0; k < full; k += 16) {
        for (size_t i = 0; i < 4; i++) vsum[i] = add_bytes(vsum[i], wasm_v128_load(x[i] + k));
      }
      if (full != kc) {
        for (size_t i = 0; i < 4; i++) vsum[i] = add_bytes(vsum[i], wasm_v128_and(wasm_v128_load(x[i] + full), tail_mask));
      }
    }
    /* lanes of four rows -> one sum per lane */
    const v128_t v01 = wasm_i32x4_add(wasm_i32x4_shuffle(vsum[0], vsum[1], 0, 4, 1, 5), wasm_i32x4_shuffle(vsum[0], vsum[1], 2, 6, 3, 7));
    const v128_t v23 = wasm_i32x4_add(wasm_i32x4_shuffle(vsum[2], vsum[3], 0, 4, 1, 5), wasm_i32x4_shuffle(vsum[2], vsum[3], 2, 6, 3, 7));
    const v128_t vrows = wasm_i32x4_add(wasm_i32x4_shuffle(v01, v23, 0, 1, 4, 5), wasm_i32x4_shuffle(v01, v23, 2, 3, 6, 7));
    const v128_t v = wasm_i32x4_add(wasm_i32x4_mul(wasm_i32x4_splat((int32_t) minus_zw), wasm_i32x4_sub(vrows, wasm_i32x4_splat((int32_t) zero_sum))),
                                    wasm_i32x4_mul(wasm_i32x4_splat((int32_t) minus_offset), vrows));
    wasm_v128_store(correction + m0, v);  /* QNN_CORRECTION_ROWS is a multiple of 4: room for the four */
  }
#else
  for (size_t m = 0; m < rows; m++) {
    uint32_t sum = 0;
    for (size_t t = 0; t < ks; t += step) {
      const int8_t* x = a[m * ks + t];
      for (size_t k = 0; k < kc; k++) sum += (uint32_t) (int32_t) x[k];
    }
    correction[m] = (int32_t) (minus_zw * (sum - zero_sum) + minus_offset * sum);
  }
#endif
  for (size_t m = rows; m < qnn_round_up(rows, mr); m++) correction[m] = correction[rows - 1];
}

void qnn_gemm_rows_run(const struct qnn_gemm_rows* g, const int8_t* const* a, size_t rows, const void* packed,
                       size_t channels, int8_t* output, size_t output_stride, int32_t* correction, uint32_t thread) {
  const struct qnn_gemm_config* config = g->config;
  struct qnn_qs8_minmax_params params = g->params;
  int16_t* packed_rows = config->gemm != NULL ? qnn_scratch(thread) : NULL;
  /* a kernel takes a chunk of rows a call (microkernels.h): an igemm QNN_CORRECTION_ROWS, the gemm
   * the tiles packa packed */
  const size_t step = packed_rows == NULL ? QNN_CORRECTION_ROWS : g->gemm_rows;
  for (size_t p = 0; p < rows; p += step) {
    const size_t chunk = qnn_min_size(step, rows - p);
    const int8_t* const* rows_a = a + p * g->ks;
    if (correction != NULL) {
      const size_t offset = p % QNN_CORRECTION_ROWS;
      if (offset == 0) row_corrections(g, rows_a, qnn_min_size(QNN_CORRECTION_ROWS, rows - p), config->mr, correction);
      params.row_correction = correction + offset;
    }
    if (packed_rows != NULL) {
      for (size_t m = 0; m < chunk; m += config->mr) {
        config->packa(qnn_min_size(config->mr, chunk - m), g->kc, g->ks, rows_a + m * g->ks, packed_rows + m * g->gemm_kc);
      }
      config->gemm(chunk, channels, g->gemm_kc, packed_rows, packed, output + p * output_stride, output_stride, &params);
    } else {
      config->igemm(chunk, channels, g->kc, g->ks, rows_a, packed, output + p * output_stride, output_stride, &params);
    }
  }
}
