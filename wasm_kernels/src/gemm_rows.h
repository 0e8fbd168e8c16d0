/* Rows of an int8 GEMM through the config's kernels, their row corrections included: what CONV_2D
 * (output pixels through its indirection) and BATCH_MATMUL (rows of A) share. */
#ifndef QNN_GEMM_ROWS_H
#define QNN_GEMM_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "requantization.h"

/* Row corrections are computed for this many rows at once (a multiple of every kernel's mr and of
 * 4), so that their sums are reduced four rows to a vector; a corrected op allocates this many
 * int32 per thread. */
#define QNN_CORRECTION_ROWS 64

struct qnn_gemm_rows {
  const struct qnn_gemm_config* config;
  size_t kc, ks;            /* channels per tap, taps per row (the IGEMM's kc and ks) */
  size_t tap_step;          /* 2 with split weights: row sums read every other (doubled) tap */
  int32_t input_zero_point, weights_zero_point;  /* the zero points of the row correction */
  size_t gemm_kc;           /* packa + GEMM: int16 values per row of a packed tile (ks x round_up(kc, 2)) */
  size_t gemm_rows;         /* packa + GEMM: rows packed and multiplied per GEMM call */
  struct qnn_qs8_minmax_params params;
};

/* packa + GEMM: the rows packed for one GEMM call, whole tiles of mr (a power-of-two count of them,
 * so chunks divide QNN_CORRECTION_ROWS) whose int16 rows stay within 32 KiB (L1), at most 16 tiles. */
size_t qnn_gemm_chunk_rows(size_t mr, size_t gemm_kc);

/* Whether rows need a correction: weights with a zero point, or weights packed XOR 0x80. */
static inline int qnn_gemm_rows_corrected(const struct qnn_gemm_config* config, int32_t weights_zero_point) {
  return weights_zero_point != 0 || config->weights_xor != 0;
}

/* `rows` rows (a[m * ks + t]) x `channels` output channels of the packed weights into output (row m
 * at output + m * output_stride). correction: QNN_CORRECTION_ROWS int32 of the thread's, or NULL
 * when no row needs correcting; the packa + GEMM kernels pack into the thread's scratch
 * (qnn_gemm_rows_scratch bytes reserved). */
void qnn_gemm_rows_run(const struct qnn_gemm_rows* g, const int8_t* const* a, size_t rows, const void* packed,
                       size_t channels, int8_t* output, size_t output_stride, int32_t* correction, uint32_t thread);

#endif
