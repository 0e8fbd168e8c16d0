/* Microkernel signatures. One function type per kernel family; config.c picks the tile. */
#ifndef QNN_MICROKERNELS_H
#define QNN_MICROKERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "requantization.h"

/* Indirect GEMM (convolution). Computes mr output pixels x nc output channels: any mr, in tiles of
 * the kernel's MR rows (one call per chunk of rows: per-tile calls and their requantization setup
 * cost measurably, most in small-K layers; docs/performance-log.md, "Figures moved out of code comments").
 *   a[m * ks + t]  input row (kc int8 channels) of tap t for output pixel m; may point at `zero`.
 *   w              packed weights (see packing.h), NR channels per block.
 *   c              first output pixel; pixel m is at c + m * c_stride; channels contiguous.
 * kc is the true channel count; the kernel reads round_up(kc, KR) bytes per row (over-read is
 * allowed: QNN_EXTRA_BYTES) and the matching packed weights are zero.
 * params->row_correction (NULL when no row needs it) adds one int32 per row (mr of them) before requantization:
 * weights with a zero point, and weights packed XOR 0x80 (config.h weights_xor). */
typedef void (*qnn_qs8_igemm_ukernel_fn)(
    size_t mr, size_t nc, size_t kc, size_t ks,
    const int8_t* const* a, const void* w, int8_t* c, size_t c_stride,
    const struct qnn_qs8_minmax_params* params);

/* Depthwise convolution of `pixels` consecutive output pixels, all channels (one call per op:
 * per-pixel calls cost as much as a 3x3 window of a few channel tiles).
 *   a[p * ks + t]  input row of tap t of pixel p (channels contiguous), or the zero buffer.
 *   w              packed per channel tile (packing.h).
 *   output         pixel p at output + p * channels. */
typedef void (*qnn_qs8_dwconv_ukernel_fn)(
    size_t pixels, size_t channels, size_t ks, const int8_t* const* a, const void* w, int8_t* output,
    const struct qnn_qs8_minmax_params* params);

/* GEMM on activations packed by the matching packa kernel (each tile's MR rows sign-extended to int16
 * and interleaved by pairs, packed[k / 2][m][k % 2]): computes mr rows (any number: consecutive
 * tiles, the last possibly partial) x nc output channels.
 *   a              the packed tiles, MR * kc int16 values each (kc even: taps x round_up(channels, 2))
 *   w              packed weights (packing.h), NR channels per block.
 *   c, c_stride    as for the IGEMM. */
typedef void (*qnn_qs8_gemm_ukernel_fn)(
    size_t mr, size_t nc, size_t kc, const int16_t* a, const void* w, int8_t* c, size_t c_stride,
    const struct qnn_qs8_minmax_params* params);

/* Packs `rows` (<= MR) output pixels' taps (a[m * ks + t], kc int8 channels each) for a
 * qnn_qs8_gemm_ukernel_fn; rows past `rows` repeat the last one. The buffer holds
 * MR * ks * round_up(kc, 2) int16 values and QNN_GEMM_PACKA_EXTRA bytes more. */
typedef void (*qnn_qs8_packa_fn)(size_t rows, size_t kc, size_t ks, const int8_t* const* a, int16_t* packed);
#define QNN_GEMM_PACKA_EXTRA 64

#define QNN_DECLARE_QS8_IGEMM(fn) void fn( \
    size_t mr, size_t nc, size_t kc, size_t ks, const int8_t* const* a, const void* w, \
    int8_t* c, size_t c_stride, const struct qnn_qs8_minmax_params* params);
#define QNN_DECLARE_QS8_DWCONV(fn) void fn( \
    size_t pixels, size_t channels, size_t ks, const int8_t* const* a, const void* w, int8_t* output, \
    const struct qnn_qs8_minmax_params* params);

#define QNN_DECLARE_QS8_GEMM(fn) void fn( \
    size_t mr, size_t nc, size_t kc, const int16_t* a, const void* w, int8_t* c, size_t c_stride, \
    const struct qnn_qs8_minmax_params* params);
#define QNN_DECLARE_QS8_PACKA(fn) void fn( \
    size_t rows, size_t kc, size_t ks, const int8_t* const* a, int16_t* packed);

#include "qs8-igemm/qs8-igemm.inc"
#include "qs8-gemm/qs8-gemm.inc"
#include "qs8-dwconv/qs8-dwconv.inc"

#endif
