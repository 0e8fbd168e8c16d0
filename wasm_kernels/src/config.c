/* Picks microkernels per variant. The variant is fixed at compile time by the target features
 * (-msimd128, -mrelaxed-simd); everything else in the module is shared. */
#include "config.h"

#include "common.h"
#include "packing.h"

#if defined(__wasm_relaxed_simd__)
  #include <wasm_simd128.h>
#endif

/* -DQNN_PREFER_RELAXED_HALVES=1 keeps the halves kernel on saturating engines (to test and measure it). */
#if !defined(QNN_PREFER_RELAXED_HALVES)
  #define QNN_PREFER_RELAXED_HALVES 0
#endif

#if defined(__wasm_relaxed_simd__)
  #define QNN_VARIANT 2
#elif defined(__wasm_simd128__)
  #define QNN_VARIANT 1
#else
  #define QNN_VARIANT 0
#endif

int32_t QNN_EXPORT(qnn_variant)(void) { return QNN_VARIANT; }

static struct qnn_gemm_config gemm_config;
/* A narrower tile for convolutions with few output channels, where gemm_config's NR would leave
 * much of its last block empty (igemm NULL: none). */
static struct qnn_gemm_config narrow_gemm_config;
static struct qnn_dwconv_config dwconv_config;
static int madd_fused;
static int initialized;

#if QNN_VARIANT == 2
/* What the engine's i32x4.relaxed_dot_i8x16_i7x16_add_s does when the second ("i7") operand has
 * its top bit set. The spec lets it read that operand as signed or unsigned and lets the i16 sums
 * of product pairs saturate. Engines on x86 with VNNI read it as unsigned (vpdpbusd), ARM engines
 * as signed (sdot), x86 engines without VNNI as unsigned with saturation (pmaddubsw). */
enum relaxed_dot_kind {
  RELAXED_DOT_OTHER = 0,              /* trust only operands in [0, 127] */
  RELAXED_DOT_USDOT = 1,              /* unsigned, exact */
  RELAXED_DOT_SDOT = 2,               /* signed, exact */
  RELAXED_DOT_UNSIGNED_SATURATE = 3,  /* unsigned, i16 pair sums saturate */
};

/* Runs the instruction once on operands that tell the kinds apart. volatile keeps the compiler
 * from evaluating it at compile time. Lane 0 overflows an i16 pair sum only when read as unsigned;
 * lanes 1-3 never overflow when read as unsigned (lane 1 hits -32768, lane 2 hits 32512, the
 * extremes the halves kernel produces) and give other results when read as signed. */
static enum relaxed_dot_kind probe_relaxed_dot(void) {
  static volatile int8_t probe_a[16] = {
    127, 127, 127, 127,  -128, -128, -128, -128,  127, 127, -128, 127,  100, -100, 50, -1};
  static volatile uint8_t probe_b[16] = {
    0xFF, 0xFF, 0xFF, 0xFF,  0x80, 0x80, 0x80, 0x80,  0x80, 0x80, 0x7F, 0x01,  0x81, 0x90, 0x7F, 0xFF};
  static volatile int32_t probe_c[4] = {1, -2, 3, 1 << 20};
  int8_t av[16];
  uint8_t bv[16];
  int32_t cv[4], result[4];
  for (int i = 0; i < 16; i++) {
    av[i] = probe_a[i];
    bv[i] = probe_b[i];
  }
  for (int i = 0; i < 4; i++) cv[i] = probe_c[i];
  wasm_v128_store(result, wasm_i32x4_relaxed_dot_i8x16_i7x16_add(
      wasm_v128_load(av), wasm_v128_load(bv), wasm_v128_load(cv)));
  int usdot = 1, sdot = 1, unsigned_unsaturated = 1;
  for (int i = 0; i < 4; i++) {
    int32_t unsigned_sum = cv[i], signed_sum = cv[i];
    for (int k = 4 * i; k < 4 * i + 4; k++) {
      unsigned_sum += (int32_t) av[k] * (int32_t) bv[k];
      signed_sum += (int32_t) av[k] * (int32_t) (int8_t) bv[k];
    }
    usdot &= result[i] == unsigned_sum;
    sdot &= result[i] == signed_sum;
    if (i > 0) unsigned_unsaturated &= result[i] == unsigned_sum;
  }
  return usdot ? RELAXED_DOT_USDOT
       : sdot ? RELAXED_DOT_SDOT
       : unsigned_unsaturated ? RELAXED_DOT_UNSIGNED_SATURATE
       : RELAXED_DOT_OTHER;
}
#endif

#if QNN_VARIANT == 2
/* Whether f32x4.relaxed_madd rounds once (a fused multiply-add: V8 and wasmtime on x86 with FMA3,
 * ARM) or twice (a multiply, then an add). The exact product of (1 + 2^-12)^2 is 1 + 2^-11 + 2^-24;
 * less 1 + 2^-11 that leaves 2^-24 fused, 0 when the product was rounded first. */
static int probe_relaxed_madd_fused(void) {
  static volatile float probe[3] = {1.0f + 0x1.0p-12f, 1.0f + 0x1.0p-12f, -(1.0f + 0x1.0p-11f)};
  float result[4];
  wasm_v128_store(result, wasm_f32x4_relaxed_madd(wasm_f32x4_splat(probe[0]), wasm_f32x4_splat(probe[1]),
                                                  wasm_f32x4_splat(probe[2])));
  return result[0] == 0x1.0p-24f && result[3] == 0x1.0p-24f;
}
#endif

#if QNN_VARIANT >= 1
/* SIMD128 convolutions: each tile's rows sign-extended to int16 once (packa), then a GEMM whose
 * inner loop is only loads, dot products and adds (see the kernel). */
static struct qnn_gemm_config simd128_gemm_config(void) {
  return (struct qnn_gemm_config) {
      .gemm = qnn_qs8_gemm_minmax_fp32_ukernel_4x8c2__simd128_dot16x2, .packa = qnn_qs8_packa_4c2_i16__simd128,
      .mr = 4, .nr = 8, .kr = 2, .sr = 1, .input_zero_point_offset = 0,
      .name = "qs8-gemm-4x8c2-simd128-dot16x2"};
}
#endif

QNN_PLAN_CODE static void init_configs(void) {
#if QNN_VARIANT == 2
  /* -DQNN_RELAXED_DOT_KIND=0..3 overrides the probe: only for testing every kernel on one engine. */
  enum relaxed_dot_kind kind = probe_relaxed_dot();
#if defined(QNN_RELAXED_DOT_KIND)
  kind = (enum relaxed_dot_kind) QNN_RELAXED_DOT_KIND;
#endif
  if (kind == RELAXED_DOT_USDOT || kind == RELAXED_DOT_SDOT) {
    /* usdot: the weights are the operand read as unsigned, packed as w + 128 and corrected per row */
    const int32_t weights_xor = kind == RELAXED_DOT_USDOT ? 0x80 : 0;
    gemm_config = (struct qnn_gemm_config) {
      .igemm = qnn_qs8_igemm_minmax_fp32_ukernel_2x24c4__relaxed_dot, .mr = 2, .nr = 24, .kr = 4, .sr = 1,
      .weights_xor = weights_xor,
      .name = kind == RELAXED_DOT_USDOT ? "qs8-igemm-2x24c4-relaxed-usdot" : "qs8-igemm-2x24c4-relaxed-sdot"};
    narrow_gemm_config = gemm_config;
    narrow_gemm_config.igemm = qnn_qs8_igemm_minmax_fp32_ukernel_2x16c4__relaxed_dot;
    narrow_gemm_config.nr = 16;
    narrow_gemm_config.name = kind == RELAXED_DOT_USDOT ? "qs8-igemm-2x16c4-relaxed-usdot" : "qs8-igemm-2x16c4-relaxed-sdot";
  } else if (kind == RELAXED_DOT_UNSIGNED_SATURATE && !QNN_PREFER_RELAXED_HALVES) {
    /* The exact two-dot "halves" form is slower here than the SIMD128 kernels (even than an older
     * SIMD128 IGEMM, and the packa + GEMM pair is faster still: docs/performance-log.md, "Figures
     * moved out of code comments"), so engines whose relaxed dot saturates get the SIMD128 packa + GEMM. */
    gemm_config = simd128_gemm_config();
    gemm_config.name = "qs8-gemm-4x8c2-simd128-dot16x2 (relaxed dot saturates)";
  } else if (kind == RELAXED_DOT_UNSIGNED_SATURATE) {
    gemm_config = (struct qnn_gemm_config) {
      .igemm = qnn_qs8_igemm_minmax_fp32_ukernel_2x16c4__relaxed_halves, .mr = 2, .nr = 16, .kr = 4, .sr = 1,
      .input_zero_point_offset = 128, .name = "qs8-igemm-2x16c4-relaxed-halves"};
  } else {
    gemm_config = (struct qnn_gemm_config) {
      .igemm = qnn_qs8_igemm_minmax_fp32_ukernel_2x16c4__relaxed_split, .mr = 2, .nr = 16, .kr = 4, .sr = 1,
      .input_zero_point_offset = 128, .name = "qs8-igemm-2x16c4-relaxed-split"};
  }
#elif QNN_VARIANT == 1
  gemm_config = simd128_gemm_config();
#else
  gemm_config = (struct qnn_gemm_config) {
      .igemm = qnn_qs8_igemm_minmax_fp32_ukernel_2x4c1__scalar, .mr = 2, .nr = 4, .kr = 1, .sr = 1,
      .input_zero_point_offset = 0, .name = "qs8-igemm-2x4c1-scalar"};
#endif
#if QNN_VARIANT >= 1
  dwconv_config = (struct qnn_dwconv_config) {
    qnn_qs8_dwconv_minmax_fp32_ukernel_c16__simd128_dot16x2, NULL, 16, QNN_DWCONV_TAP_PAIRS, 0, 0, "qs8-dwconv-c16-simd128-dot16x2"};
#else
  dwconv_config = (struct qnn_dwconv_config) {
    qnn_qs8_dwconv_minmax_fp32_ukernel_c1__scalar, NULL, 1, QNN_DWCONV_TAPS, 0, 0, "qs8-dwconv-c1-scalar"};
#endif
#if QNN_VARIANT == 2
  /* Four taps per relaxed dot where it is exact (the dot16x2 kernel is bound by its shuffles and
   * sign extensions: 20 instructions per 32 multiply-adds, against 24 per 64 here). */
  if (kind == RELAXED_DOT_USDOT) {
    dwconv_config = (struct qnn_dwconv_config) {
      qnn_qs8_dwconv_minmax_fp32_ukernel_c16__relaxed_tap4,
      qnn_qs8_dwconv_minmax_fp32_ukernel_3x3s1p2_c16__relaxed, 16, QNN_DWCONV_TAP_QUADS, 128, 0x80, "qs8-dwconv-c16-relaxed-tap4+3x3s1p2-usdot"};
  } else if (kind == RELAXED_DOT_SDOT) {
    dwconv_config = (struct qnn_dwconv_config) {
      qnn_qs8_dwconv_minmax_fp32_ukernel_c16__relaxed_tap4,
      qnn_qs8_dwconv_minmax_fp32_ukernel_3x3s1p2_c16__relaxed, 16, QNN_DWCONV_TAP_QUADS, 0, 0, "qs8-dwconv-c16-relaxed-tap4+3x3s1p2-sdot"};
  }
#endif
#if QNN_VARIANT == 2
  madd_fused = probe_relaxed_madd_fused();
#endif
  initialized = 1;
}

int qnn_relaxed_madd_fused(void) {
  if (!initialized) init_configs();
  return madd_fused;
}

const struct qnn_gemm_config* qnn_get_gemm_config(void) {
  if (!initialized) init_configs();
  return &gemm_config;
}

/* The 2x24 tile runs a channel slot in about 7/8 of the 2x16 tile's time (the 7 and 8 below;
 * docs/performance-log.md, "Figures moved out of code comments"): the narrow tile where its padded
 * channels cost less, e.g. 16, 32 or 80 output channels (MobileNetV2's first convolutions, 16
 * channels, were slower with 2x24). */
const struct qnn_gemm_config* qnn_get_gemm_config_for(size_t output_channels) {
  const struct qnn_gemm_config* wide = qnn_get_gemm_config();
  if (narrow_gemm_config.igemm == NULL) return wide;
  const size_t narrow_slots = qnn_round_up(output_channels, narrow_gemm_config.nr);
  const size_t wide_slots = qnn_round_up(output_channels, wide->nr);
  return 8 * narrow_slots < 7 * wide_slots ? &narrow_gemm_config : wide;
}

const struct qnn_dwconv_config* qnn_get_dwconv_config(void) {
  if (!initialized) init_configs();
  return &dwconv_config;
}

/* Names of the kernels in use, so the frontend can report what really ran. */
const char* QNN_EXPORT(qnn_gemm_kernel_name)(void) { return qnn_get_gemm_config()->name; }
const char* QNN_EXPORT(qnn_dwconv_kernel_name)(void) { return qnn_get_dwconv_config()->name; }
