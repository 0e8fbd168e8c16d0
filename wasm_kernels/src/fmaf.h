/* float32 fused multiply-add without a hardware FMA (WebAssembly has none outside relaxed SIMD, whose
 * madd may round twice): the x86 FMA3 arithmetic that onnxruntime's float kernels (MLAS) and their
 * results follow. */
#ifndef QNN_FMAF_H
#define QNN_FMAF_H

/* a * b + c rounded once to float32, for every float32 a, b, c (infinities and NaN as IEEE's fma gives
 * them; NaN payloads aside). */
float qnn_fmaf(float a, float b, float c);

#endif
