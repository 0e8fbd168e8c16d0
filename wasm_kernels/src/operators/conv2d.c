/* CONV_2D (and FULLY_CONNECTED as a 1x1 conv): indirect GEMM over packed weights.
 *
 * Weights with a zero point zw: the packed weights are the raw int8 w and the kernels compute
 * bias + sum (x - x_zp) w as for symmetric weights; per tile of mr output pixels the operator sums
 * R[p] = sum (x - x_zp) over the pixel's taps and channels (padded taps read the zero buffer, which
 * holds x_zp, and add 0) and the kernels add -zw * R[p] to the row before requantization. int32
 * arithmetic wraps (computed in uint32), as the kernels' accumulators do.
 *
 * Per-channel weight zero points zw[n] (weights_zero_points): v = w - zw[n] is in [-255, 255], and
 * two int8 values sum to [-256, 254]; so v - c (c = 1 when some v is 255, else 0) is split into two
 * int8 halves, packed as two taps that read the same input row (the indirection lists every tap
 * twice), and c * sum (x - x_zp) is added per row as for a per-tensor zero point -c. The result is
 * sum (x - x_zp)(w - zw[n]) exactly, at twice the work.
 *
 * Few input channels (the RGB first convolution): a tap's kc channels are padded to the kernel's
 * SR * KR (8), so 3 channels compute 8. Such convolutions gather each output pixel's window into a
 * row of taps * kc channels at run time (im2col: 27 of 32 computed for 3x3x3) and run as a 1x1
 * IGEMM over those rows; the packed weights see one tap of taps * kc channels (tap-major: OIHW
 * weights are reordered to OHWI at packing).
 *
 * Variants whose config has a packa + GEMM pair (SIMD128) instead of an IGEMM: each task packs
 * its tile's rows (the taps read through the same indirection buffer) into int16 in its
 * thread's scratch, and the GEMM runs on them.
 *
 * Grouped convolution (groups > 1): one indirection buffer and one packed-weights block per group;
 * group g's buffer points g * input_channels bytes into each input pixel, and its IGEMM writes its
 * output channels into the full-width output rows. */
#include "qnnweb.h"

#if defined(__wasm_simd128__)
  #include <wasm_simd128.h>
#endif

#include "common.h"
#include "config.h"
#include "indirection.h"
#include "operators.h"
#include "packing.h"
#include "threadpool.h"

/* Row corrections are computed for this many rows at once (a multiple of every kernel's mr and of
 * 4), so that their sums are reduced four rows to a vector. */
#define CORRECTION_ROWS 64

struct conv2d_op {
  struct qnn_op base;
  const struct qnn_gemm_config* config;
  const int8_t** indirection;  /* groups consecutive buffers of pixels * taps pointers */
  const char* packed;          /* groups consecutive blocks of packed_group_size bytes */
  int8_t* output;
  size_t pixels, output_channels, input_channels, taps, groups, packed_group_size;
  struct qnn_qs8_minmax_params params;
  int32_t input_zero_point, weights_zero_point;  /* the zero point of the row correction */
  size_t tap_step;          /* 2 with split weights: row sums read every other (doubled) tap */
  int32_t* correction;      /* CORRECTION_ROWS values per thread; NULL when no row needs correcting */
  size_t block_bytes;       /* one block of nr output channels in the packed weights */
  size_t gemm_kc;           /* packa + GEMM: int16 values per row of a packed tile (taps x round_up(channels, 2)) */
  size_t gemm_rows;         /* packa + GEMM: rows packed and multiplied per GEMM call (gemm_chunk_rows) */
  /* im2col (few input channels): the window's pointers (window_taps per pixel) gathered into rows */
  const int8_t** window;    /* NULL: no im2col */
  int8_t* rows;             /* pixels rows of row_stride bytes; the indirection points at them */
  const uint8_t* whole;     /* per pixel, 1: every kernel row of its window is consecutive in the input */
  size_t window_taps, window_width, window_channels, row_stride;
};

/* packa + GEMM: the rows packed for one GEMM call, whole tiles of mr (a power-of-two count of them,
 * so chunks divide CORRECTION_ROWS) whose int16 rows stay within 32 KiB (L1), at most 16 tiles. */
static size_t gemm_chunk_rows(size_t mr, size_t gemm_kc) {
  size_t tiles = 1;
  while (tiles < 16 && 2 * tiles * mr * gemm_kc * sizeof(int16_t) <= 32768) tiles *= 2;
  return tiles * mr;
}

/* Gathering the window into rows pays when padding each tap's channels wastes more than the rows'
 * padding does, and the rows stay small. */
static int use_im2col(const struct qnn_conv2d_record* r, const struct qnn_gemm_config* config, int64_t pixels,
                      int64_t window_taps) {
  const int64_t skr = (int64_t) config->kr * config->sr, kc = r->input_channels;
  if (r->groups != 1 || r->weights_zero_points != 0 || window_taps == 1 || r->weights_layout == QNN_WEIGHTS_IO) return 0;
  const int64_t row = qnn_round_up((size_t) (window_taps * kc), (size_t) skr);
  return row < window_taps * qnn_round_up((size_t) kc, (size_t) skr) && row <= 256 && pixels * row <= (16 << 20);
}

int32_t qnn_create_conv2d(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_conv2d_record* r = record;
  if (!qnn_check_positive(&r->batch, 13, "conv2d")) return QNN_ERROR_INVALID_RECORD;
  if (r->groups < 1 || r->output_channels % r->groups != 0 || (int64_t) r->groups * r->input_channels > (1 << 24)) {
    qnn_set_error("conv2d: groups must be positive and divide output_channels");
    return QNN_ERROR_INVALID_RECORD;
  }
  if (r->weights_zero_points != 0 && r->weights_zero_point != 0) {
    qnn_set_error("conv2d: weights_zero_point must be 0 when weights_zero_points is given");
    return QNN_ERROR_INVALID_RECORD;
  }
  if (r->groups > 1 && r->weights_layout == QNN_WEIGHTS_IO) {
    qnn_set_error("conv2d: weights_layout 2 (IO) has no groups");
    return QNN_ERROR_INVALID_RECORD;
  }
  if (r->padding_top < 0 || r->padding_left < 0 || r->padding_top >= (1 << 16) || r->padding_left >= (1 << 16)) {
    qnn_set_error("conv2d: negative or huge padding");
    return QNN_ERROR_INVALID_RECORD;
  }
  if (r->weights_layout < QNN_WEIGHTS_OHWI || r->weights_layout > QNN_WEIGHTS_IO) {
    qnn_set_error("conv2d: weights_layout must be 0 (OHWI), 1 (OIHW) or 2 (IO)");
    return QNN_ERROR_INVALID_RECORD;
  }
  if (r->weights_layout == QNN_WEIGHTS_IO && (r->kernel_height != 1 || r->kernel_width != 1)) {
    qnn_set_error("conv2d: weights_layout 2 (IO) needs a 1x1 kernel");
    return QNN_ERROR_INVALID_RECORD;
  }
  if (!qnn_check_int8(r->input_zero_point, "conv2d") || !qnn_check_int8(r->output_zero_point, "conv2d") ||
      !qnn_check_int8(r->output_min, "conv2d") || !qnn_check_int8(r->output_max, "conv2d") ||
      !qnn_check_int8(r->weights_zero_point, "conv2d")) {
    return QNN_ERROR_INVALID_RECORD;
  }
  const int64_t pixels = (int64_t) r->batch * r->output_height * r->output_width;
  const int64_t window_taps = (int64_t) r->kernel_height * r->kernel_width;
  const int split = r->weights_zero_points != 0;
  const int64_t taps = split ? 2 * window_taps : window_taps;  /* the kernels' taps */
  const int64_t groups = r->groups, group_channels = r->output_channels / r->groups;
  const int64_t pixel_stride = groups * r->input_channels;
  const int8_t* input = qnn_plan_tensor(
      plan, r->input, (int64_t) r->batch * r->input_height * r->input_width * pixel_stride, "conv2d input");
  int8_t* output = qnn_plan_tensor(plan, r->output, pixels * r->output_channels, "conv2d output");
  const int8_t* weights = qnn_plan_constant(
      r->weights, (int64_t) r->output_channels * window_taps * r->input_channels, "conv2d weights");
  const int32_t* zero_points = split ? qnn_plan_constant(r->weights_zero_points, (int64_t) r->output_channels * 4,
                                                         "conv2d weights_zero_points") : NULL;
  if (split && zero_points == NULL) return QNN_ERROR_INVALID_RECORD;
  for (int32_t n = 0; split && n < r->output_channels; n++) {
    if (!qnn_check_int8(zero_points[n], "conv2d weights_zero_points")) return QNN_ERROR_INVALID_RECORD;
  }
  const float* scales = qnn_plan_constant(r->scales, (int64_t) r->output_channels * 4, "conv2d scales");
  const int32_t* bias = r->bias != 0 ? qnn_plan_constant(r->bias, (int64_t) r->output_channels * 4, "conv2d bias") : NULL;
  if (input == NULL || output == NULL || weights == NULL || scales == NULL || (r->bias != 0 && bias == NULL)) {
    return QNN_ERROR_INVALID_RECORD;
  }

  const struct qnn_gemm_config* config = qnn_get_gemm_config_for((size_t) group_channels);
  const int im2col = use_im2col(r, config, pixels, window_taps);
  /* what the IGEMM sees: taps x channels per output pixel */
  const int64_t gemm_taps = im2col ? 1 : taps, gemm_channels = im2col ? window_taps * r->input_channels : r->input_channels;
  const int64_t row_stride = (int64_t) qnn_round_up((size_t) gemm_channels, config->kr * config->sr);
  struct conv2d_op* op = qnn_plan_alloc(plan, sizeof(struct conv2d_op));
  int8_t* zero = qnn_plan_alloc(plan, qnn_round_up((size_t) r->input_channels, config->kr * config->sr) + QNN_EXTRA_BYTES);
  const int64_t entries = pixels * taps;
  const int8_t** indirection = qnn_plan_alloc(plan, groups * entries * (int64_t) sizeof(int8_t*));
  const int64_t packed_group_size =
      qnn_pack_qs8_igemm_size(group_channels, gemm_taps, gemm_channels, config->nr, config->kr, config->sr);
  const int64_t gemm_kc = gemm_taps * (int64_t) qnn_round_up((size_t) gemm_channels, 2);
  const size_t gemm_rows = gemm_chunk_rows(config->mr, (size_t) gemm_kc);
  char* packed = qnn_plan_alloc(plan, groups * packed_group_size);
  const int corrected = r->weights_zero_point != 0 || split || config->weights_xor != 0;
  int32_t* correction = corrected ? qnn_plan_alloc(plan, (int64_t) CORRECTION_ROWS * QNN_MAX_THREADS * 4) : NULL;
  const int8_t** row_pointers = im2col ? qnn_plan_alloc(plan, pixels * (int64_t) sizeof(int8_t*)) : NULL;
  int8_t* rows = im2col ? qnn_plan_alloc(plan, pixels * row_stride + QNN_EXTRA_BYTES) : NULL;
  uint8_t* whole = im2col ? qnn_plan_alloc(plan, pixels) : NULL;
  if (op == NULL || zero == NULL || indirection == NULL || packed == NULL || (corrected && correction == NULL) ||
      (im2col && (row_pointers == NULL || rows == NULL || whole == NULL)) ||
      (config->gemm != NULL &&
       !qnn_reserve_scratch(gemm_rows * (size_t) gemm_kc * sizeof(int16_t) + QNN_GEMM_PACKA_EXTRA))) {
    return QNN_ERROR_OUT_OF_MEMORY;
  }

  qnn_memset(zero, r->input_zero_point, qnn_round_up((size_t) r->input_channels, config->kr * config->sr) + QNN_EXTRA_BYTES);
  const struct qnn_window window = {
    r->batch, r->input_height, r->input_width, (size_t) pixel_stride, r->output_height, r->output_width,
    r->kernel_height, r->kernel_width, r->stride_height, r->stride_width, r->dilation_height, r->dilation_width,
    r->padding_top, r->padding_left};
  qnn_indirection_init(&window, input, zero, indirection);
  if (split) {  /* every tap twice; backwards, so in place (entry i moves to 2i and 2i + 1) */
    for (int64_t i = pixels * window_taps - 1; i >= 0; i--) {
      indirection[2 * i] = indirection[2 * i + 1] = indirection[i];
    }
  }
  for (int64_t g = 1; g < groups; g++) {
    const int8_t** group_indirection = indirection + g * entries;
    for (int64_t i = 0; i < entries; i++) {
      group_indirection[i] = indirection[i] == zero ? zero : indirection[i] + g * r->input_channels;
    }
  }
  size_t kc = (size_t) r->input_channels, ks = (size_t) taps;
  const size_t nc = (size_t) group_channels;
  const size_t window_ks = (size_t) window_taps;
  size_t n_stride = window_ks * kc, t_stride = kc, k_stride = 1;      /* OHWI */
  if (r->weights_layout == QNN_WEIGHTS_OIHW) {
    t_stride = 1;
    k_stride = window_ks;
  } else if (r->weights_layout == QNN_WEIGHTS_IO) {
    n_stride = 1;
    t_stride = 0;
    k_stride = nc;
  }
  /* OHWI and OIHW hold each channel's taps x channels together; IO (1x1) strides them by nc */
  const int bounded = qnn_products_bounded((size_t) r->output_channels, window_ks * kc, weights, n_stride,
                                       r->weights_layout == QNN_WEIGHTS_IO ? nc : 1, r->weights_zero_point,
                                       zero_points, bias, scales);
  int32_t row_zero_point = r->weights_zero_point;
  if (split) {  /* the two halves of w - zw[n] - c, as taps 2t and 2t + 1, OHWI */
    int8_t* halves = qnn_plan_alloc(plan, (int64_t) r->output_channels * taps * r->input_channels);
    if (halves == NULL) return QNN_ERROR_OUT_OF_MEMORY;
    int32_t c = 0;
    for (size_t n = 0; n < (size_t) r->output_channels; n++) {
      for (size_t i = 0; i < window_ks * kc; i++) {
        const size_t t = i / kc, k = i % kc;
        if ((int32_t) weights[n * n_stride + t * t_stride + k * k_stride] - zero_points[n] == 255) c = 1;
      }
    }
    row_zero_point = -c;
    for (size_t n = 0; n < (size_t) r->output_channels; n++) {
      for (size_t t = 0; t < window_ks; t++) {
        for (size_t k = 0; k < kc; k++) {
          const int32_t v = (int32_t) weights[n * n_stride + t * t_stride + k * k_stride] - zero_points[n] - c;
          const int32_t low = qnn_max_i32(qnn_min_i32(v, 127), -128);
          halves[(n * ks + 2 * t) * kc + k] = (int8_t) low;
          halves[(n * ks + 2 * t + 1) * kc + k] = (int8_t) (v - low);
        }
      }
    }
    weights = halves;
    n_stride = ks * kc;
    t_stride = kc;
    k_stride = 1;
  }
  if (im2col) {  /* one tap of the window's channels, tap-major as the rows */
    for (int64_t p = 0; p < pixels; p++) {
      row_pointers[p] = rows + p * row_stride;
      const int8_t* const* taps_of_p = indirection + p * window_taps;
      whole[p] = 1;
      for (int64_t t = 0; t < window_taps; t++) {
        const int64_t column = t % r->kernel_width;
        if (taps_of_p[t] != taps_of_p[t - column] + column * r->input_channels) whole[p] = 0;
      }
    }
    if (r->weights_layout == QNN_WEIGHTS_OIHW) {
      int8_t* ohwi = qnn_plan_alloc(plan, (int64_t) r->output_channels * window_taps * r->input_channels);
      if (ohwi == NULL) return QNN_ERROR_OUT_OF_MEMORY;
      for (size_t n = 0; n < (size_t) r->output_channels; n++) {
        for (size_t t = 0; t < window_ks; t++) {
          for (size_t k = 0; k < kc; k++) ohwi[(n * window_ks + t) * kc + k] = weights[n * n_stride + t + k * window_ks];
        }
      }
      weights = ohwi;
    }
    ks = 1;
    kc = (size_t) gemm_channels;
    t_stride = 0;
    k_stride = 1;
  }
  for (int64_t g = 0; g < groups; g++) {
    const size_t first = (size_t) g * nc;
    qnn_pack_qs8_igemm_w(nc, ks, kc, config->nr, config->kr, config->sr, r->input_zero_point + config->input_zero_point_offset,
                         config->weights_xor, weights + first * n_stride, n_stride, t_stride, k_stride, bias != NULL ? bias + first : NULL,
                         scales + first, packed + g * packed_group_size);
  }

  op->config = config;
  op->indirection = im2col ? row_pointers : indirection;
  op->window = im2col ? indirection : NULL;
  op->rows = rows;
  op->whole = whole;
  op->window_taps = (size_t) window_taps;
  op->window_width = (size_t) r->kernel_width;
  op->window_channels = (size_t) r->input_channels;
  op->row_stride = (size_t) row_stride;
  op->packed = packed;
  op->output = output;
  op->pixels = (size_t) pixels;
  op->output_channels = r->output_channels;
  op->input_channels = (size_t) gemm_channels;
  op->taps = (size_t) gemm_taps;
  op->groups = (size_t) groups;
  op->packed_group_size = (size_t) packed_group_size;
  op->block_bytes = (size_t) qnn_pack_qs8_igemm_size(config->nr, gemm_taps, gemm_channels, config->nr, config->kr, config->sr);
  op->gemm_kc = (size_t) gemm_kc;
  op->gemm_rows = gemm_rows;
  op->params = qnn_qs8_minmax_params_init(r->output_zero_point, r->output_min, r->output_max, 0);
  op->params.products_bounded = bounded;
  op->input_zero_point = r->input_zero_point;
  op->weights_zero_point = row_zero_point;
  op->tap_step = split ? 2 : 1;
  op->correction = row_zero_point != 0 || config->weights_xor != 0 ? correction : NULL;
  *result = &op->base;
  return QNN_OK;
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
static void row_corrections(const struct conv2d_op* op, const int8_t* const* a, size_t rows, size_t mr,
                            int32_t* correction) {
  const size_t ks = op->taps, kc = op->input_channels, step = op->tap_step;
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
    wasm_v128_store(correction + m0, v);  /* CORRECTION_ROWS is a multiple of 4: room for the four */
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

/* im2col: each pixel's window (taps x kc channels, padding taps read the zero buffer) into its row,
 * tap-major. Up to 4 (8) channels are copied as one 4 (8)-byte word: the bytes past kc land where
 * the next tap's channels go, or in the row's tail, whose weights are zero (rows have room for
 * them: gather_word). Reading past kc is the kernels' usual over-read (QNN_EXTRA_BYTES). */
static size_t gather_word(size_t taps, size_t kc, size_t row_stride) {
  const size_t word = kc <= 4 ? 4 : kc <= 8 ? 8 : 0;
  return word != 0 && (taps - 1) * kc + word <= row_stride ? word : 0;
}

/* n (4 to 16) bytes, writing at most `room` (>= n) bytes at dst: 16 when there is room for them,
 * else two words that overlap where n is not a word's multiple. */
static inline void copy_4_to_16(int8_t* dst, const int8_t* src, size_t n, size_t room) {
  if (room >= 16) {
    qnn_memcpy(dst, src, 16);
  } else if (n >= 8) {
    uint64_t head, tail;
    qnn_memcpy(&head, src, 8), qnn_memcpy(&tail, src + n - 8, 8);
    qnn_memcpy(dst, &head, 8), qnn_memcpy(dst + n - 8, &tail, 8);
  } else {
    uint32_t head, tail;
    qnn_memcpy(&head, src, 4), qnn_memcpy(&tail, src + n - 4, 4);
    qnn_memcpy(dst, &head, 4), qnn_memcpy(dst + n - 4, &tail, 4);
  }
}

/* Where a pixel's kernel rows lie whole in the input (op->whole: undilated and off the padding, so a
 * row's width x kc bytes are consecutive there as in the row), each is copied as one block of up to
 * 16 bytes, in order, so what one writes past its end the next overwrites: a first convolution's 3x3
 * window of 3 channels in 3 copies instead of 9. */
static void gather_rows(const struct conv2d_op* op, size_t first, size_t end) {
  const size_t taps = op->window_taps, kc = op->window_channels, width = op->window_width;
  const size_t word = gather_word(taps, kc, op->row_stride), span = width * kc;
  const int by_rows = width > 1 && span >= 4 && span <= 16;
  for (size_t p = first; p < end; p++) {
    const int8_t* const* window = op->window + p * taps;
    int8_t* row = op->rows + p * op->row_stride;
    if (by_rows && op->whole[p]) {
      for (size_t t = 0; t < taps; t += width) copy_4_to_16(row + t * kc, window[t], span, op->row_stride - t * kc);
    } else if (word == 4) {
      for (size_t t = 0; t < taps; t++) qnn_memcpy(row + t * kc, window[t], 4);
    } else if (word == 8) {
      for (size_t t = 0; t < taps; t++) qnn_memcpy(row + t * kc, window[t], 8);
    } else {
      for (size_t t = 0; t < taps; t++) qnn_memcpy(row + t * kc, window[t], kc);
    }
  }
}

/* A run's split into tasks: groups x pixel ranges (whole mr tiles) x channel ranges (whole nr
 * blocks). Channels are split only when there are too few pixel tiles to keep every thread busy
 * (the last layers, fully connected ones); im2col convolutions are split by pixels only, so each
 * task gathers the rows it reads. */
struct conv2d_split {
  const struct conv2d_op* op;
  size_t tiles, pixel_tasks, blocks, channel_tasks;  /* each split evenly (qnn_split_start) */
};

static void conv2d_task(const void* context, size_t task, uint32_t thread) {
  const struct conv2d_split* split = context;
  const struct conv2d_op* op = split->op;
  const size_t mr = op->config->mr, group_channels = op->output_channels / op->groups;
  const size_t g = task / (split->pixel_tasks * split->channel_tasks);
  const size_t rest = task % (split->pixel_tasks * split->channel_tasks);
  const size_t pixel_task = rest / split->channel_tasks, channel_task = rest % split->channel_tasks;
  const size_t first_pixel = qnn_split_start(pixel_task, split->pixel_tasks, split->tiles) * mr;
  const size_t end_pixel = qnn_min_size(op->pixels, qnn_split_start(pixel_task + 1, split->pixel_tasks, split->tiles) * mr);
  const size_t first_channel = qnn_split_start(channel_task, split->channel_tasks, split->blocks) * op->config->nr;
  const size_t channels =
      qnn_min_size(qnn_split_start(channel_task + 1, split->channel_tasks, split->blocks) * op->config->nr, group_channels) - first_channel;
  if (op->window != NULL) gather_rows(op, first_pixel, end_pixel);
  struct qnn_qs8_minmax_params params = op->params;
  int32_t* correction = op->correction != NULL ? op->correction + thread * CORRECTION_ROWS : NULL;
  const int8_t* const* indirection = op->indirection + g * op->pixels * op->taps;
  const char* packed = op->packed + g * op->packed_group_size + first_channel / op->config->nr * op->block_bytes;
  int8_t* output = op->output + g * group_channels + first_channel;
  int16_t* packed_rows = op->config->gemm != NULL ? qnn_scratch(thread) : NULL;
  /* a kernel takes a chunk of rows a call (microkernels.h): an igemm CORRECTION_ROWS, the gemm the
   * tiles packa packed */
  const size_t step = packed_rows == NULL ? CORRECTION_ROWS : op->gemm_rows;
  for (size_t p = first_pixel; p < end_pixel; p += step) {
    const size_t rows = qnn_min_size(step, end_pixel - p);
    const int8_t* const* a = indirection + p * op->taps;
    if (correction != NULL) {
      const size_t offset = (p - first_pixel) % CORRECTION_ROWS;
      if (offset == 0) row_corrections(op, a, qnn_min_size(CORRECTION_ROWS, end_pixel - p), mr, correction);
      params.row_correction = correction + offset;
    }
    if (packed_rows != NULL) {
      for (size_t m = 0; m < rows; m += mr) {
        op->config->packa(qnn_min_size(mr, rows - m), op->input_channels, op->taps, a + m * op->taps,
                          packed_rows + m * op->gemm_kc);
      }
      op->config->gemm(rows, channels, op->gemm_kc, packed_rows, packed, output + p * op->output_channels,
                       op->output_channels, &params);
    } else {
      op->config->igemm(rows, channels, op->input_channels, op->taps, a, packed,
                        output + p * op->output_channels, op->output_channels, &params);
    }
  }
}

void qnn_run_conv2d(const struct qnn_op* base) {
  const struct conv2d_op* op = (const struct conv2d_op*) base;
  const size_t nr = op->config->nr, threads = qnn_thread_count();
  const size_t group_channels = op->output_channels / op->groups;
  const size_t tiles = qnn_divide_round_up(op->pixels, op->config->mr), blocks = qnn_divide_round_up(group_channels, nr);
  const uint64_t macs = (uint64_t) op->pixels * op->output_channels * op->input_channels * op->taps;
  const size_t max_tasks = qnn_max_tasks(macs, QNN_TASK_MACS);
  const uint64_t tile_macs = (uint64_t) op->config->mr * op->output_channels * op->input_channels * op->taps;
  struct conv2d_split split = {op, tiles, qnn_split_count(tiles, qnn_items_per_task(tiles, 1, 8, tile_macs, QNN_TASK_MACS)),
                               blocks, 1};
  const size_t wanted = qnn_min_size(8 * threads, max_tasks);  /* tasks per op: balance over equal-cost tasks */
  if (threads > 1 && split.pixel_tasks * op->groups < wanted && op->window == NULL) {
    const size_t per_pixel_task = qnn_divide_round_up(wanted, split.pixel_tasks * op->groups);  /* channel tasks wanted */
    const size_t blocks_per_task = qnn_divide_round_up(blocks, per_pixel_task);
    split.channel_tasks = qnn_split_count(blocks, blocks_per_task);
  }
  qnn_parallelize(conv2d_task, &split, op->groups * split.pixel_tasks * split.channel_tasks);
}
