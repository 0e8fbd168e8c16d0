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

#include "common.h"
#include "config.h"
#include "gemm_rows.h"
#include "indirection.h"
#include "operators.h"
#include "packing.h"
#include "threadpool.h"

struct conv2d_op {
  struct qnn_op base;
  struct qnn_gemm_rows gemm;   /* the kernels, the row correction's zero points, the requantization */
  const int8_t** indirection;  /* groups consecutive buffers of pixels * taps pointers */
  const char* packed;          /* groups consecutive blocks of packed_group_size bytes */
  int8_t* output;
  size_t pixels, output_channels, groups, packed_group_size;
  int32_t* correction;      /* QNN_CORRECTION_ROWS values per thread; NULL when no row needs correcting */
  size_t block_bytes;       /* one block of nr output channels in the packed weights */
  /* im2col (few input channels): the window's pointers (window_taps per pixel) gathered into rows */
  const int8_t** window;    /* NULL: no im2col */
  int8_t* rows;             /* pixels rows of row_stride bytes; the indirection points at them */
  const uint8_t* whole;     /* per pixel, 1: every kernel row of its window is consecutive in the input */
  size_t window_taps, window_width, window_channels, row_stride;
};

/* Gathering the window into rows pays when padding each tap's channels wastes more than the rows'
 * padding does, and the rows stay small. */
static int use_im2col(const struct qnn_conv2d_record* r, const struct qnn_gemm_config* config, int64_t pixels,
                      int64_t window_taps) {
  const int64_t skr = (int64_t) config->kr * config->sr, kc = r->input_channels;
  if (r->groups != 1 || r->weights_zero_points != 0 || window_taps == 1 || r->weights_layout == QNN_WEIGHTS_IO) return 0;
  const int64_t row = qnn_round_up((size_t) (window_taps * kc), (size_t) skr);
  return row < window_taps * qnn_round_up((size_t) kc, (size_t) skr) && row <= 256 && pixels * row <= (16 << 20);
}

/* The checks of the record's fields that need no tensor. */
static int32_t check_record(const struct qnn_conv2d_record* r) {
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
  return QNN_OK;
}

/* The convolution as the kernels see it, derived once from the record and the kernel config. */
struct conv2d_geometry {
  const struct qnn_gemm_config* config;
  int64_t pixels, window_taps, groups, group_channels, pixel_stride;
  int split;                 /* per-channel weight zero points: every tap twice (the file's comment) */
  int64_t taps;              /* the kernels' taps: window_taps, twice that when split */
  int im2col;
  int64_t gemm_taps, gemm_channels;  /* what the IGEMM sees: taps x channels per output pixel */
  int64_t row_stride;        /* im2col: the bytes of one gathered row */
  int64_t entries;           /* the indirection's pointers per group */
  int64_t packed_group_size, gemm_kc;
  size_t gemm_rows;
  int corrected;             /* some row may need a correction: a correction buffer is allocated */
};

static struct conv2d_geometry geometry_of(const struct qnn_conv2d_record* r) {
  struct conv2d_geometry g;
  g.pixels = (int64_t) r->batch * r->output_height * r->output_width;
  g.window_taps = (int64_t) r->kernel_height * r->kernel_width;
  g.split = r->weights_zero_points != 0;
  g.taps = g.split ? 2 * g.window_taps : g.window_taps;
  g.groups = r->groups;
  g.group_channels = r->output_channels / r->groups;
  g.pixel_stride = g.groups * r->input_channels;
  g.config = qnn_get_gemm_config_for((size_t) g.group_channels);
  g.im2col = use_im2col(r, g.config, g.pixels, g.window_taps);
  g.gemm_taps = g.im2col ? 1 : g.taps;
  g.gemm_channels = g.im2col ? g.window_taps * r->input_channels : r->input_channels;
  g.row_stride = (int64_t) qnn_round_up((size_t) g.gemm_channels, g.config->kr * g.config->sr);
  g.entries = g.pixels * g.taps;
  g.packed_group_size = qnn_pack_qs8_igemm_size(g.group_channels, g.gemm_taps, g.gemm_channels, g.config->nr,
                                                g.config->kr, g.config->sr);
  g.gemm_kc = g.gemm_taps * (int64_t) qnn_round_up((size_t) g.gemm_channels, 2);
  g.gemm_rows = qnn_gemm_chunk_rows(g.config->mr, (size_t) g.gemm_kc);
  g.corrected = r->weights_zero_point != 0 || g.split || g.config->weights_xor != 0;
  return g;
}

struct conv2d_tensors {
  const int8_t* input;
  int8_t* output;
  const int8_t* weights;
  const int32_t* zero_points;  /* per output channel; NULL unless split */
  const float* scales;
  const int32_t* bias;         /* NULL: none */
};

/* The record's tensors and constants, each checked for its size (and the zero points for int8). */
static int32_t find_tensors(struct qnn_plan* plan, const struct qnn_conv2d_record* r, const struct conv2d_geometry* g,
                            struct conv2d_tensors* t) {
  t->input = qnn_plan_tensor(
      plan, r->input, (int64_t) r->batch * r->input_height * r->input_width * g->pixel_stride, "conv2d input");
  t->output = qnn_plan_tensor(plan, r->output, g->pixels * r->output_channels, "conv2d output");
  t->weights = qnn_plan_constant(
      r->weights, (int64_t) r->output_channels * g->window_taps * r->input_channels, "conv2d weights");
  t->zero_points = g->split ? qnn_plan_constant(r->weights_zero_points, (int64_t) r->output_channels * 4,
                                                "conv2d weights_zero_points") : NULL;
  if (g->split && t->zero_points == NULL) return QNN_ERROR_INVALID_RECORD;
  for (int32_t n = 0; g->split && n < r->output_channels; n++) {
    if (!qnn_check_int8(t->zero_points[n], "conv2d weights_zero_points")) return QNN_ERROR_INVALID_RECORD;
  }
  t->scales = qnn_plan_constant(r->scales, (int64_t) r->output_channels * 4, "conv2d scales");
  t->bias = r->bias != 0 ? qnn_plan_constant(r->bias, (int64_t) r->output_channels * 4, "conv2d bias") : NULL;
  if (t->input == NULL || t->output == NULL || t->weights == NULL || t->scales == NULL || (r->bias != 0 && t->bias == NULL)) {
    return QNN_ERROR_INVALID_RECORD;
  }
  return QNN_OK;
}

struct conv2d_buffers {
  struct conv2d_op* op;
  int8_t* zero;                 /* what padded taps read: input_zero_point bytes */
  const int8_t** indirection;   /* groups buffers of entries pointers */
  char* packed;
  int32_t* correction;          /* NULL unless corrected */
  const int8_t** row_pointers;  /* im2col only: a pointer per pixel into rows */
  int8_t* rows;                 /* im2col only */
  uint8_t* whole;               /* im2col only */
};

static size_t zero_bytes(const struct qnn_conv2d_record* r, const struct qnn_gemm_config* config) {
  return qnn_round_up((size_t) r->input_channels, config->kr * config->sr) + QNN_EXTRA_BYTES;
}

/* The plan's memory for the operator, and each thread's scratch for the packa + GEMM kernels. */
static int32_t allocate_buffers(struct qnn_plan* plan, const struct qnn_conv2d_record* r, const struct conv2d_geometry* g,
                                struct conv2d_buffers* b) {
  b->op = qnn_plan_alloc(plan, sizeof(struct conv2d_op));
  b->zero = qnn_plan_alloc(plan, zero_bytes(r, g->config));
  b->indirection = qnn_plan_alloc(plan, g->groups * g->entries * (int64_t) sizeof(int8_t*));
  b->packed = qnn_plan_alloc(plan, g->groups * g->packed_group_size);
  b->correction = g->corrected ? qnn_plan_alloc(plan, (int64_t) QNN_CORRECTION_ROWS * QNN_MAX_THREADS * 4) : NULL;
  b->row_pointers = g->im2col ? qnn_plan_alloc(plan, g->pixels * (int64_t) sizeof(int8_t*)) : NULL;
  b->rows = g->im2col ? qnn_plan_alloc(plan, g->pixels * g->row_stride + QNN_EXTRA_BYTES) : NULL;
  b->whole = g->im2col ? qnn_plan_alloc(plan, g->pixels) : NULL;
  if (b->op == NULL || b->zero == NULL || b->indirection == NULL || b->packed == NULL ||
      (g->corrected && b->correction == NULL) ||
      (g->im2col && (b->row_pointers == NULL || b->rows == NULL || b->whole == NULL)) ||
      (g->config->gemm != NULL &&
       !qnn_reserve_scratch(g->gemm_rows * (size_t) g->gemm_kc * sizeof(int16_t) + QNN_GEMM_PACKA_EXTRA))) {
    return QNN_ERROR_OUT_OF_MEMORY;
  }
  return QNN_OK;
}

/* The zero buffer and the indirection: a pointer per output pixel and tap (every tap twice when
 * split), one buffer per group. */
static void build_indirection(const struct qnn_conv2d_record* r, const struct conv2d_geometry* g, const int8_t* input,
                              const struct conv2d_buffers* b) {
  qnn_memset(b->zero, r->input_zero_point, zero_bytes(r, g->config));
  const struct qnn_window window = {
    r->batch, r->input_height, r->input_width, (size_t) g->pixel_stride, r->output_height, r->output_width,
    r->kernel_height, r->kernel_width, r->stride_height, r->stride_width, r->dilation_height, r->dilation_width,
    r->padding_top, r->padding_left};
  const int8_t** indirection = b->indirection;
  qnn_indirection_init(&window, input, b->zero, indirection);
  if (g->split) {  /* every tap twice; backwards, so in place (entry i moves to 2i and 2i + 1) */
    for (int64_t i = g->pixels * g->window_taps - 1; i >= 0; i--) {
      indirection[2 * i] = indirection[2 * i + 1] = indirection[i];
    }
  }
  for (int64_t group = 1; group < g->groups; group++) {
    const int8_t** group_indirection = indirection + group * g->entries;
    for (int64_t i = 0; i < g->entries; i++) {
      group_indirection[i] = indirection[i] == b->zero ? b->zero : indirection[i] + group * r->input_channels;
    }
  }
}

/* The weights as packing reads them: value (n, t, k) at data[n * n_stride + t * t_stride + k * k_stride]. */
struct weights_view {
  const int8_t* data;
  size_t n_stride, t_stride, k_stride;
};

/* The record's weights in their layout: OHWI and OIHW hold each channel's taps x channels together;
 * IO (1x1) strides them by the group's output channels. */
static struct weights_view weights_in_layout(const struct qnn_conv2d_record* r, const struct conv2d_geometry* g,
                                             const int8_t* weights) {
  const size_t kc = (size_t) r->input_channels, window_ks = (size_t) g->window_taps;
  if (r->weights_layout == QNN_WEIGHTS_OIHW) return (struct weights_view) {weights, window_ks * kc, 1, window_ks};
  if (r->weights_layout == QNN_WEIGHTS_IO) return (struct weights_view) {weights, 1, 0, (size_t) g->group_channels};
  return (struct weights_view) {weights, window_ks * kc, kc, 1};
}

/* Per-channel weight zero points: the two int8 halves of w - zw[n] - c as taps 2t and 2t + 1, OHWI
 * (the file's comment). *row_zero_point becomes -c. */
static int32_t split_weights(struct qnn_plan* plan, const struct qnn_conv2d_record* r, const struct conv2d_geometry* g,
                             const int32_t* zero_points, struct weights_view* w, int32_t* row_zero_point) {
  const size_t kc = (size_t) r->input_channels, ks = (size_t) g->taps, window_ks = (size_t) g->window_taps;
  int8_t* halves = qnn_plan_alloc(plan, (int64_t) r->output_channels * g->taps * r->input_channels);
  if (halves == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  int32_t c = 0;
  for (size_t n = 0; n < (size_t) r->output_channels; n++) {
    for (size_t i = 0; i < window_ks * kc; i++) {
      const size_t t = i / kc, k = i % kc;
      if ((int32_t) w->data[n * w->n_stride + t * w->t_stride + k * w->k_stride] - zero_points[n] == 255) c = 1;
    }
  }
  *row_zero_point = -c;
  for (size_t n = 0; n < (size_t) r->output_channels; n++) {
    for (size_t t = 0; t < window_ks; t++) {
      for (size_t k = 0; k < kc; k++) {
        const int32_t v = (int32_t) w->data[n * w->n_stride + t * w->t_stride + k * w->k_stride] - zero_points[n] - c;
        const int32_t low = qnn_max_i32(qnn_min_i32(v, 127), -128);
        halves[(n * ks + 2 * t) * kc + k] = (int8_t) low;
        halves[(n * ks + 2 * t + 1) * kc + k] = (int8_t) (v - low);
      }
    }
  }
  *w = (struct weights_view) {halves, ks * kc, kc, 1};
  return QNN_OK;
}

/* im2col: each pixel's row pointer, and whether its window's kernel rows lie whole in the input. */
static void point_rows(const struct qnn_conv2d_record* r, const struct conv2d_geometry* g, const struct conv2d_buffers* b) {
  for (int64_t p = 0; p < g->pixels; p++) {
    b->row_pointers[p] = b->rows + p * g->row_stride;
    const int8_t* const* taps_of_p = b->indirection + p * g->window_taps;
    b->whole[p] = 1;
    for (int64_t t = 0; t < g->window_taps; t++) {
      const int64_t column = t % r->kernel_width;
      if (taps_of_p[t] != taps_of_p[t - column] + column * r->input_channels) b->whole[p] = 0;
    }
  }
}

/* im2col: the weights as one tap of the window's channels, tap-major as the rows (OIHW reordered to
 * OHWI). */
static int32_t weights_as_one_tap(struct qnn_plan* plan, const struct qnn_conv2d_record* r,
                                  const struct conv2d_geometry* g, struct weights_view* w) {
  const size_t kc = (size_t) r->input_channels, window_ks = (size_t) g->window_taps;
  if (r->weights_layout == QNN_WEIGHTS_OIHW) {
    int8_t* ohwi = qnn_plan_alloc(plan, (int64_t) r->output_channels * g->window_taps * r->input_channels);
    if (ohwi == NULL) return QNN_ERROR_OUT_OF_MEMORY;
    for (size_t n = 0; n < (size_t) r->output_channels; n++) {
      for (size_t t = 0; t < window_ks; t++) {
        for (size_t k = 0; k < kc; k++) ohwi[(n * window_ks + t) * kc + k] = w->data[n * w->n_stride + t + k * window_ks];
      }
    }
    w->data = ohwi;
  }
  w->t_stride = 0;
  w->k_stride = 1;
  return QNN_OK;
}

/* One packed-weights block per group: gemm_taps x gemm_channels per output channel. */
static void pack_weights(const struct qnn_conv2d_record* r, const struct conv2d_geometry* g, const struct weights_view* w,
                         const struct conv2d_tensors* t, char* packed) {
  const struct qnn_gemm_config* config = g->config;
  const size_t nc = (size_t) g->group_channels;
  for (int64_t group = 0; group < g->groups; group++) {
    const size_t first = (size_t) group * nc;
    qnn_pack_qs8_igemm_w(nc, (size_t) g->gemm_taps, (size_t) g->gemm_channels, config->nr, config->kr, config->sr,
                         r->input_zero_point + config->input_zero_point_offset, config->weights_xor,
                         w->data + first * w->n_stride, w->n_stride, w->t_stride, w->k_stride,
                         t->bias != NULL ? t->bias + first : NULL, t->scales + first, packed + group * g->packed_group_size);
  }
}

static void fill_op(const struct qnn_conv2d_record* r, const struct conv2d_geometry* g, const struct conv2d_tensors* t,
                    const struct conv2d_buffers* b, int bounded, int32_t row_zero_point) {
  const struct qnn_gemm_config* config = g->config;
  struct conv2d_op* op = b->op;
  op->gemm.config = config;
  op->indirection = g->im2col ? b->row_pointers : b->indirection;
  op->window = g->im2col ? b->indirection : NULL;
  op->rows = b->rows;
  op->whole = b->whole;
  op->window_taps = (size_t) g->window_taps;
  op->window_width = (size_t) r->kernel_width;
  op->window_channels = (size_t) r->input_channels;
  op->row_stride = (size_t) g->row_stride;
  op->packed = b->packed;
  op->output = t->output;
  op->pixels = (size_t) g->pixels;
  op->output_channels = r->output_channels;
  op->gemm.kc = (size_t) g->gemm_channels;
  op->gemm.ks = (size_t) g->gemm_taps;
  op->groups = (size_t) g->groups;
  op->packed_group_size = (size_t) g->packed_group_size;
  op->block_bytes =
      (size_t) qnn_pack_qs8_igemm_size(config->nr, g->gemm_taps, g->gemm_channels, config->nr, config->kr, config->sr);
  op->gemm.gemm_kc = (size_t) g->gemm_kc;
  op->gemm.gemm_rows = g->gemm_rows;
  op->gemm.params = qnn_qs8_minmax_params_init(r->output_zero_point, r->output_min, r->output_max, 0);
  op->gemm.params.products_bounded = bounded;
  op->gemm.input_zero_point = r->input_zero_point;
  op->gemm.weights_zero_point = row_zero_point;
  op->gemm.tap_step = g->split ? 2 : 1;
  op->correction = row_zero_point != 0 || config->weights_xor != 0 ? b->correction : NULL;
}

QNN_PLAN_CODE int32_t qnn_create_conv2d(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_conv2d_record* r = record;
  int32_t status = check_record(r);
  if (status != QNN_OK) return status;
  const struct conv2d_geometry g = geometry_of(r);
  struct conv2d_tensors t;
  if ((status = find_tensors(plan, r, &g, &t)) != QNN_OK) return status;
  struct conv2d_buffers b;
  if ((status = allocate_buffers(plan, r, &g, &b)) != QNN_OK) return status;
  build_indirection(r, &g, t.input, &b);
  struct weights_view w = weights_in_layout(r, &g, t.weights);
  const int bounded = qnn_products_bounded((size_t) r->output_channels, (size_t) (g.window_taps * r->input_channels),
                                           w.data, w.n_stride, r->weights_layout == QNN_WEIGHTS_IO ? (size_t) g.group_channels : 1,
                                           r->weights_zero_point, t.zero_points, t.bias, t.scales);
  int32_t row_zero_point = r->weights_zero_point;
  if (g.split && (status = split_weights(plan, r, &g, t.zero_points, &w, &row_zero_point)) != QNN_OK) return status;
  if (g.im2col) {
    point_rows(r, &g, &b);
    if ((status = weights_as_one_tap(plan, r, &g, &w)) != QNN_OK) return status;
  }
  pack_weights(r, &g, &w, &t, b.packed);
  fill_op(r, &g, &t, &b, bounded, row_zero_point);
  *result = &b.op->base;
  return QNN_OK;
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
  const size_t mr = op->gemm.config->mr, group_channels = op->output_channels / op->groups;
  const size_t g = task / (split->pixel_tasks * split->channel_tasks);
  const size_t rest = task % (split->pixel_tasks * split->channel_tasks);
  const size_t pixel_task = rest / split->channel_tasks, channel_task = rest % split->channel_tasks;
  const size_t first_pixel = qnn_split_start(pixel_task, split->pixel_tasks, split->tiles) * mr;
  const size_t end_pixel = qnn_min_size(op->pixels, qnn_split_start(pixel_task + 1, split->pixel_tasks, split->tiles) * mr);
  const size_t first_channel = qnn_split_start(channel_task, split->channel_tasks, split->blocks) * op->gemm.config->nr;
  const size_t channels =
      qnn_min_size(qnn_split_start(channel_task + 1, split->channel_tasks, split->blocks) * op->gemm.config->nr, group_channels) - first_channel;
  if (op->window != NULL) gather_rows(op, first_pixel, end_pixel);
  int32_t* correction = op->correction != NULL ? op->correction + thread * QNN_CORRECTION_ROWS : NULL;
  const int8_t* const* indirection = op->indirection + g * op->pixels * op->gemm.ks;
  const char* packed = op->packed + g * op->packed_group_size + first_channel / op->gemm.config->nr * op->block_bytes;
  int8_t* output = op->output + g * group_channels + first_channel;
  qnn_gemm_rows_run(&op->gemm, indirection + first_pixel * op->gemm.ks, end_pixel - first_pixel, packed, channels,
                    output + first_pixel * op->output_channels, op->output_channels, correction, thread);
}

void qnn_run_conv2d(const struct qnn_op* base) {
  const struct conv2d_op* op = (const struct conv2d_op*) base;
  const size_t nr = op->gemm.config->nr, threads = qnn_thread_count();
  const size_t group_channels = op->output_channels / op->groups;
  const size_t tiles = qnn_divide_round_up(op->pixels, op->gemm.config->mr), blocks = qnn_divide_round_up(group_channels, nr);
  const uint64_t macs = (uint64_t) op->pixels * op->output_channels * op->gemm.kc * op->gemm.ks;
  const size_t max_tasks = qnn_max_tasks(macs, QNN_TASK_MACS);
  const uint64_t tile_macs = (uint64_t) op->gemm.config->mr * op->output_channels * op->gemm.kc * op->gemm.ks;
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
