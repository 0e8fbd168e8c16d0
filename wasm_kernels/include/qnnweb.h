/*
 * qnnweb kernel ABI: the one contract between the Python frontend and every .wasm variant.
 *
 * The frontend describes a whole inference as a list of op records (structs of 32-bit words) and
 * hands them to the module once, at load:
 *
 *   plan = qnn_plan_create(op_count, arena_bytes)   allocates the activation arena
 *   qnn_plan_add(plan, record)                       validates one op, packs its weights (once)
 *   qnn_run(plan)                                    runs every op, in order, in C
 *
 * Activation tensors are byte offsets into the arena (chosen by the frontend's memory planner).
 * Weights, biases and scales are wasm addresses of a staging buffer the frontend filled with
 * qnn_alloc + memory writes; qnn_plan_add copies what it needs into packed form, so the staging
 * buffer can be reused for the next op.
 *
 * Every record field is 4 bytes, little endian: int32_t or float. qnnweb/records.py mirrors these
 * structs field by field; tests/kernels/test_abi.py checks the two agree (qnn_record_words).
 *
 * Numbers follow the TFLite int8 quantization spec: asymmetric int8 activations, symmetric int8
 * weights (per tensor or per output channel; CONV_2D also takes a per-tensor weight zero point, as
 * ONNX models have), int32 bias with scale input_scale * weight_scale.
 * Requantization is fp32 (as XNNPACK's minmax_fp32 kernels): acc * scale in float32, clamped in
 * float to [min - zp, max - zp], rounded to nearest-even, plus the output zero point. The same
 * float32 operations in the same order run in every variant, so all variants are bit-exact.
 */
#ifndef QNNWEB_H
#define QNNWEB_H

#include <stdint.h>

/* Bumped whenever a record's layout or meaning changes: compiled models (.qnn files) store the
 * version they were written for, and loaders refuse a file whose version differs from the module's. */
#define QNN_ABI_VERSION 15

enum qnn_op_type {
  QNN_OP_QUANTIZE = 1,    /* float32 -> int8 */
  QNN_OP_DEQUANTIZE = 2,  /* int8 -> float32 */
  QNN_OP_REQUANTIZE = 3,  /* int8 -> int8 with another scale / zero point */
  QNN_OP_CONV2D = 4,      /* NHWC conv, OHWI / OIHW / IO weights; FULLY_CONNECTED is a 1x1 conv */
  QNN_OP_DWCONV2D = 5,    /* NHWC depthwise conv, [1,KH,KW,C*M] or [C*M,1,KH,KW] weights */
  QNN_OP_ADD = 6,         /* element-wise, broadcasting (strides over a 4-D output) */
  QNN_OP_AVGPOOL2D = 7,   /* average pooling; MEAN over H,W is a pool over the whole image */
  QNN_OP_PAD = 8,         /* constant pad of H, W and C */
  QNN_OP_SOFTMAX = 9,     /* over the innermost dimension */
  QNN_OP_COPY = 10,       /* raw bytes */
  QNN_OP_MUL = 11,        /* element-wise, broadcasting, fp32 requantization */
  QNN_OP_MAXPOOL2D = 12,  /* max pooling (input and output share quantization) */
  QNN_OP_COPY_SLICE = 13, /* [outer, inner_in] into columns of [outer, inner_out] (CONCATENATION) */
  QNN_OP_COPY_STRIDED = 14, /* strided copy over up to 6 dimensions (transposes, slices, gathers) */
  QNN_OP_LUT = 15,        /* byte -> byte through a 256-entry table (unary int8 / uint8 ops) */
  QNN_OP_QUANTIZE_CHANNELS = 16,    /* float32 -> int8, one scale / zero point per channel (ONNX axis) */
  QNN_OP_DEQUANTIZE_CHANNELS = 17,  /* int8 -> float32, one scale / zero point per channel */
  QNN_OP_LUT_F32 = 18,    /* byte -> float32 through a 256-entry table (a float op on a dequantized tensor) */
  QNN_OP_MAXIMUM = 19,    /* element-wise max or min of the stored int8 values, broadcasting */
  QNN_OP_RESIZE = 20,     /* NHWC bilinear (XNNPACK's or onnxruntime's arithmetic) or nearest-neighbour resize */
  QNN_OP_LUT_CHANNELS = 21, /* byte -> byte through one 256-entry table per channel (PRELU) */
  QNN_OP_LUT2D = 22,      /* byte x byte -> byte through a 256 x 256 table (float binary ops of ONNX models) */
  QNN_OP_DETECTION_POSTPROCESS = 23, /* SSD box decoding + non-maximum suppression (TFLite's custom op), float32 */
  QNN_OP_BINARY_F32 = 24, /* float32 add / subtract / multiply / divide, broadcasting (a model's float ops before it quantizes) */
  QNN_OP_LAYER_NORM = 25, /* normalization of int8 rows (ONNX LayerNormalization, InstanceNormalization) */
  QNN_OP_BATCH_MATMUL = 26, /* Y[b] = A[b] B[b] of two int8 activations, broadcasting batch dimensions */
  QNN_OP_UNARY_F32 = 27,  /* float32 -> float32 element function with onnxruntime's float arithmetic (erf, exp, ...) */
  QNN_OP_DYNAMIC_QUANTIZE = 28, /* float32 -> uint8 (held as int8) with a scale and zero point found at run time */
  QNN_OP_DYNAMIC_MATMUL = 29, /* float32 Y = dynamically quantized X times constant 8-bit weights, + bias */
  QNN_OP_REDUCE_F32 = 30, /* float32 mean / sum of each row, in onnxruntime's order (a model's float ReduceMean) */
  QNN_OP_BATCH_MATMUL_F32 = 31, /* float32 Y[b] = A[b] B[b] of two float32 activations (attention in float) */
  QNN_OP_GATHER = 32,     /* rows of a constant table picked by int32 / int64 indices (token embeddings) */
  QNN_OP_CONVERT_F32 = 33, /* int32 / int64 -> float32 (ONNX Cast of an integer input, an attention mask) */
  QNN_OP_DYNAMIC_CONV2D = 34, /* float32 Y = convolution of a dynamically quantized X by constant 8-bit weights, + bias */
  QNN_OP_TYPE_COUNT = 35,
};

enum qnn_status {
  QNN_OK = 0,
  QNN_ERROR_INVALID_RECORD = 1,
  QNN_ERROR_OUT_OF_MEMORY = 2,
  QNN_ERROR_UNKNOWN_OP = 3,
  QNN_ERROR_PLAN_FULL = 4,
  QNN_ERROR_PLAN_INCOMPLETE = 5,
};

/* Conversions between float32 and int8, element-wise over `size` elements. */
struct qnn_quantize_record {
  int32_t op, words;
  int32_t input, output, size;
  float scale;              /* output scale: q = rint(x / scale) + zero point (ONNX, TFLite's reference kernels) */
  int32_t zero_point;       /* output zero point */
  int32_t reciprocal;       /* 1: scale holds 1 / output scale and q = rint(x * scale) + zero point, as
                               XNNPACK (LiteRT's default kernels) converts float32 to int8 */
};

struct qnn_dequantize_record {
  int32_t op, words;
  int32_t input, output, size;
  float scale;              /* input scale */
  int32_t zero_point;       /* input zero point */
};

/* Per-channel (per-axis) conversions of a tensor viewed as [outer][channels][inner]: element
 * (o, c, i) uses scales[c] and zero_points[c], with the per-tensor records' arithmetic. */
struct qnn_quantize_channels_record {
  int32_t op, words;
  int32_t input, output;
  int32_t outer, channels, inner;
  int32_t scales;           /* address: float [channels], positive and finite (copied at qnn_plan_add) */
  int32_t zero_points;      /* address: int32 [channels], each in int8 range (copied at qnn_plan_add) */
};

struct qnn_dequantize_channels_record {
  int32_t op, words;
  int32_t input, output;
  int32_t outer, channels, inner;
  int32_t scales;           /* address: float [channels] */
  int32_t zero_points;      /* address: int32 [channels], each in int8 range */
};

struct qnn_requantize_record {
  int32_t op, words;
  int32_t input, output, size;
  float scale;              /* input_scale / output_scale */
  int32_t input_zero_point, output_zero_point;
};

/* Weight layouts (weights_layout), packed in C with strides:
 *   conv2d:   0 = OHWI [oc][kh][kw][ic] (TFLite), 1 = OIHW [oc][ic][kh][kw] (ONNX),
 *             2 = IO [ic][oc] (MatMul weights [K, N]; 1x1 kernels only)
 *   dwconv2d: 0 = [kh][kw][oc] (TFLite [1,KH,KW,C*M]), 1 = [oc][kh][kw] (ONNX [C*M,1,KH,KW]) */
enum qnn_weights_layout {
  QNN_WEIGHTS_OHWI = 0,
  QNN_WEIGHTS_OIHW = 1,
  QNN_WEIGHTS_IO = 2,
};

/* 2-D convolution, NHWC activations. Padding is explicit (top/left); the output size fixes the
 * bottom/right padding. Padded taps read a buffer filled with input_zero_point.
 * weights_zero_point zw (per tensor, int8): acc = bias + sum (x - input_zp) (w - zw), computed as
 * [bias + sum (x - input_zp) w] - zw * R[p] with R[p] = sum over pixel p's taps of (x - input_zp);
 * 0 (symmetric weights) costs nothing. */
struct qnn_conv2d_record {
  int32_t op, words;
  int32_t input, output;
  int32_t batch, input_height, input_width, input_channels;
  int32_t output_height, output_width, output_channels;
  int32_t kernel_height, kernel_width;
  int32_t stride_height, stride_width;
  int32_t dilation_height, dilation_width;
  int32_t padding_top, padding_left;
  int32_t weights;          /* address: int8, weights_layout (OHWI: [output_channels][kh][kw][input_channels]) */
  int32_t weights_layout;   /* enum qnn_weights_layout: 0 OHWI, 1 OIHW, 2 IO */
  int32_t bias;             /* address: int32 [output_channels], or 0 for none */
  int32_t scales;           /* address: float [output_channels] = input_scale * weight_scale[c] / output_scale */
  int32_t input_zero_point, output_zero_point;
  int32_t output_min, output_max;  /* fused activation, in the output's quantized domain */
  int32_t weights_zero_point;      /* per-tensor weight zero point, int8; 0 for symmetric weights */
  /* grouped convolution: the input has groups * input_channels channels, group g reads channels
   * [g * input_channels, (g + 1) * input_channels) and writes output channels
   * [g * output_channels / groups, ...); 1 for an ordinary convolution */
  int32_t groups;
  /* address: int32 [output_channels], per-channel weight zero points (int8 values), or 0 for none;
   * with it, weights_zero_point must be 0 */
  int32_t weights_zero_points;
};

/* Depthwise convolution: output channel c reads input channel c / depth_multiplier. */
struct qnn_dwconv2d_record {
  int32_t op, words;
  int32_t input, output;
  int32_t batch, input_height, input_width, input_channels;
  int32_t output_height, output_width, output_channels;  /* = input_channels * depth_multiplier */
  int32_t kernel_height, kernel_width;
  int32_t stride_height, stride_width;
  int32_t dilation_height, dilation_width;
  int32_t padding_top, padding_left;
  int32_t depth_multiplier;
  int32_t weights;          /* address: int8 [kernel_height][kernel_width][output_channels] (layout 0) */
  int32_t weights_layout;   /* 0: [kh][kw][oc], 1: [oc][kh][kw] */
  int32_t bias;             /* address: int32 [output_channels], or 0 */
  int32_t scales;           /* address: float [output_channels] */
  int32_t input_zero_point, output_zero_point;
  int32_t output_min, output_max;
};

/* Binary element-wise ops (ADD, MUL) with numpy broadcasting: the output is dims[0..3] (padded
 * with leading 1s, contiguous); element (i0,i1,i2,i3) of input x is x[sum(i_k * x_strides[k])],
 * with stride 0 along broadcast dimensions. input_b is an arena offset, or, when b_constant is 1,
 * the wasm address of constant int8 data (copied at qnn_plan_add). */
#define QNN_BINARY_SHAPE_FIELDS \
  int32_t input_a, input_b, output; \
  int32_t b_constant; \
  int32_t dims[4]; \
  int32_t a_strides[4], b_strides[4];

/* a_multiplier and b_multiplier are a_scale / out_scale and b_scale / out_scale. Arithmetic 0,
 * XNNPACK's fixed-point form: both scaled by 2^shift (the larger to 21 significant bits); out =
 * ((2^(shift-1) + (a - a_zp) * A + (b - b_zp) * B) >> shift) clamped to [min - zp, max - zp], + out_zp. */
struct qnn_add_record {
  int32_t op, words;
  QNN_BINARY_SHAPE_FIELDS
  int32_t a_zero_point, b_zero_point, output_zero_point;
  float a_multiplier, b_multiplier;
  int32_t output_min, output_max;
  /* arithmetic 0: XNNPACK's fixed point (LiteRT's default kernels); 1: onnxruntime's x86 QLinearAdd
   * (AVX2, float32 FMAs of the values in their own domain: input_offset 128 for uint8 models, 0 for
   * int8): with float_form 0, f = zc - fma(ra, za, rb * zb) and fma(a, ra, fma(b, rb, f)); with
   * float_form 1 the same with a and b exchanged (onnxruntime's broadcasting hands a over as a
   * per-span scalar, which its kernel takes as the second operand);
   * 2: TFLite's builtin integer ADD (kernels/add.cc, where LiteRT runs it: XNNPACK's delegate refuses
   * an input / output scale ratio outside [2^-10, 2^8)): x' = M((x - x_zp) * 2^20, x_fixed) for each
   * input, out = M(a' + b', output_fixed) + out_zp, clamped, where M(v, f) is gemmlowp's rounding
   * doubling high multiply by f's multiplier (in [2^30, 2^31), or 0) followed by a rounding (half
   * away from zero) right shift by f's shift (0 to 31); the multipliers are ignored then. An input's
   * fixed multiplier may be negative (magnitude in [2^30, 2^31)): that input's x' is computed with
   * the magnitude and subtracted (TFLite's SUB, kernels/sub.cc: scaled, then negated).
   * SUB in arithmetic 0 and 1: the subtracted input's float multiplier is negative. */
  int32_t arithmetic, input_offset, float_form;
  int32_t a_fixed_multiplier, a_fixed_shift, b_fixed_multiplier, b_fixed_shift;
  int32_t output_fixed_multiplier, output_fixed_shift;
};

/* out = table[a + 128][b + 128]: any function of two int8 values, broadcasting (ONNX's float Sub
 * between DequantizeLinear and QuantizeLinear, computed for every pair as onnxruntime does). The
 * output is int8 (output_bytes 1) or float32 (4: a float op's result that is the model's output). */
struct qnn_lut2d_record {
  int32_t op, words;
  QNN_BINARY_SHAPE_FIELDS
  int32_t table;            /* address: 65536 x output_bytes bytes (copied at qnn_plan_add) */
  int32_t output_bytes;     /* 1 or 4 */
};

/* out = a OP b in float32 (IEEE single precision, as onnxruntime's and TFLite's float kernels compute
 * it), then clamped to [output_min, output_max] (a fused activation, NaN passes; [-FLT_MAX, FLT_MAX]:
 * no clamp at all, infinities pass), broadcasting: a model's float ops on its float input before it
 * quantizes (a normalization such as (x - mean) / std). operation 0 add, 1 subtract, 2 multiply,
 * 3 divide; b_first 1: out = b OP a. Inputs, the constant b and the output are float32; strides count
 * elements. */
struct qnn_binary_f32_record {
  int32_t op, words;
  QNN_BINARY_SHAPE_FIELDS
  int32_t operation, b_first;
  float output_min, output_max;
};

/* TFLite's int8 MAXIMUM / MINIMUM (kernels/maximum_minimum.cc): out = max(a, b) (minimum 1: min) of
 * the stored values, with no requantization: the converters give both inputs the output's
 * quantization, and LiteRT compares the stored values even when they differ. */
struct qnn_maximum_record {
  int32_t op, words;
  QNN_BINARY_SHAPE_FIELDS
  int32_t minimum;
};

/* p = (a - a_zp) * (b - b_zp) (exact in int32); scale = a_scale * b_scale / out_scale. `arithmetic`
 * picks whose rounding:
 *   0 (TFLite / XNNPACK): out = rint(clamp((float) p * scale)) + out_zp, as conv's fp32 requantization;
 *   1 (onnxruntime's x86 QLinearMul, MLAS qlmul.cpp): the zero point is added in float32 before the
 *     rounding, in the model's own domain: out = rint((float) p * scale + (float) (out_zp + offset))
 *     - offset, clamped to [output_min, output_max] (offset 128 for a uint8 model, whose values the
 *     kernels hold as x - 128; 0 otherwise). The float addition rounds too, so a product a hair
 *     from a half (-5.4999999 + -110 -> -115.5) can round the other way than in form 0.
 * (arithmetic 0 needs offset 0.) */
struct qnn_mul_record {
  int32_t op, words;
  QNN_BINARY_SHAPE_FIELDS
  int32_t a_zero_point, b_zero_point, output_zero_point;
  float scale;
  int32_t output_min, output_max;
  int32_t arithmetic, offset;
};

/* Average over the valid (unpadded) taps of each window, then requantized. n is the number of
 * valid taps, or kernel_height * kernel_width with count_include_pad = 1 (ONNX AveragePool
 * count_include_pad=1: padded taps count as input_zero_point). `arithmetic` picks whose rounding:
 *   0 (TFLite / LiteRT): same quantization (scale 1, equal zero points): the integer average rounded
 *     half away from zero; otherwise out = rint((sum - n * in_zp) * (scale / n)) + out_zp, with
 *     scale = input_scale / output_scale;
 *   1 (onnxruntime QLinearAveragePool): float32 all through: each tap dequantized to
 *     input_scale * (x - in_zp), summed in window order (rows, then columns), divided by n, then
 *     rint(avg / output_scale + out_zp) (round half to even, the zero point added in float);
 *   2 (onnxruntime QLinearGlobalAveragePool, MLAS; also its AveragePool over the whole image
 *     without padding): the integer sum(x - in_zp) * (input_scale / (output_scale * n)), fp32
 *     requantization;
 *   3 (XNNPACK's sum, which LiteRT's delegate runs for an int8 SUM): as 4 with s = scale;
 *   4 (XNNPACK's mean, which LiteRT's delegate runs for an int8 MEAN): s = scale * (1 / n),
 *     bias = -n * in_zp * s + out_zp, rint(sum(x) * s + bias), each step in float32;
 *   5 (onnxruntime's float GlobalAveragePool of a float function of the int8 input, then its
 *     QuantizeLinear: a float op the quantizer left unquantized, e.g. HardSwish, read by a float pool;
 *     a global window only): each tap is table[c][(uint8) x] (256 float32 per table at `table`, the
 *     function's values as onnxruntime computes them; `table_channels` tables: 1, or one per channel c,
 *     a PRelu's slopes), summed as MLAS's global pooling kernel does (four float32 lanes over
 *     the image in row-major order, then (lane 0 + lane 2) + (lane 1 + lane 3), then the last n % 4 taps
 *     in order), divided by n, then rint(clamp(avg / output_scale, output_min - out_zp,
 *     output_max - out_zp)) + out_zp.
 * `scale` is used by arithmetic 0, 3 and 4, input_scale and output_scale by 1, 2 and 5. */
struct qnn_avgpool2d_record {
  int32_t op, words;
  int32_t input, output;
  int32_t batch, input_height, input_width, channels;
  int32_t output_height, output_width;
  int32_t kernel_height, kernel_width;
  int32_t stride_height, stride_width;
  int32_t padding_top, padding_left;
  float scale;
  int32_t input_zero_point, output_zero_point;
  int32_t output_min, output_max;
  int32_t count_include_pad;
  int32_t arithmetic;
  float input_scale, output_scale;
  int32_t table;            /* arithmetic 5: address of table_channels x 256 float32 (copied at qnn_plan_add) */
  int32_t table_channels;   /* arithmetic 5: 1 (one table) or channels (one per channel); 0 otherwise */
};

/* Max over the valid (unpadded) taps of each window, clamped to [output_min, output_max]; a window
 * with no valid tap gives output_min. Input and output share quantization. */
struct qnn_maxpool2d_record {
  int32_t op, words;
  int32_t input, output;
  int32_t batch, input_height, input_width, channels;
  int32_t output_height, output_width;
  int32_t kernel_height, kernel_width;
  int32_t stride_height, stride_width;
  int32_t dilation_height, dilation_width;
  int32_t padding_top, padding_left;
  int32_t output_min, output_max;
};

/* Constant PAD of an NHWC tensor's height, width and channels (channels: padding_front before each
 * pixel's values, padding_back after them). */
struct qnn_pad_record {
  int32_t op, words;
  int32_t input, output;
  int32_t batch, input_height, input_width, channels;
  int32_t padding_top, padding_bottom, padding_left, padding_right;
  int32_t pad_value;        /* int8 value written in the border (the zero point) */
  int32_t padding_front, padding_back;
};

/* Softmax of int8 rows (src/operators/softmax.c): e = table[max - x] (256 float32 at `table`, made by
 * the frontend as the reference runtime makes them), the row's sum sequential in float.
 * arithmetic 0 (LiteRT's builtin kernel): out = round(e * (1 / (sum * output_scale))) + zp, halves away
 * from zero. arithmetic 1 (onnxruntime's QLinearSoftmax): out = nearbyint(e * inverse_output_scale /
 * sum) + zp in double, inverse_output_scale being onnxruntime's floor(1 / output_scale). Clamped.
 * arithmetic 2 (onnxruntime's float Softmax, MLAS's MlasComputeSoftmax): float32 rows in and out, e =
 * exp(x - max) with MLAS's exp, out = e * (1 / sum); no table (0), the scales and zero point unused. */
struct qnn_softmax_record {
  int32_t op, words;
  int32_t input, output, rows, columns;
  float output_scale;
  float inverse_output_scale;
  int32_t output_zero_point;
  int32_t arithmetic;
  int32_t table;            /* address of 256 float32 */
};

/* Normalization of int8 [rows][columns] with onnxruntime's float arithmetic (src/operators/layer_norm.c):
 * dequantized, normalized over each row, times gamma plus beta, quantized as QuantizeLinear does. With
 * float_input 1 the input is float32 [rows][columns], its values read as they are (no table then).
 *   arithmetic 0: LayerNormalization, gamma / beta per column (channels == columns).
 *   arithmetic 1: InstanceNormalization, gamma / beta per row: row r takes element r % channels. */
struct qnn_layer_norm_record {
  int32_t op, words;
  int32_t input, output;
  int32_t rows, columns, channels;
  int32_t gamma, beta;      /* addresses: float32 [channels] each (copied at qnn_plan_add) */
  int32_t arithmetic;
  float epsilon;
  float input_scale;
  int32_t input_zero_point;
  float output_scale;
  int32_t output_zero_point;
  int32_t table;            /* address or 0: float32 [256] (or [256] per column, table_per_column), the input's
                             * values by the byte's bits in place of (q - zp) * scale: a float op of the int8
                             * input before the normalization (onnxruntime's QOperator form leaves it in float) */
  int32_t table_per_column;
  int32_t float_output;     /* 1: the output is float32, unquantized (a model's float output) */
  int32_t float_input;      /* 1: the input is float32 (another float op's result); table 0, input_scale and
                             * input_zero_point unused */
};

/* output[i] = f(input[i]), float32 -> float32, f one of onnxruntime's float element functions computed as
 * its x86-64 CPU kernels compute them (src/operators/unary_f32.c; qnnweb.numerics.onnxruntime's
 * element_function is the reference, bit for bit): `operation` picks f (enum qnn_unary_f32_operation),
 * alpha and beta are its constants. */
enum qnn_unary_f32_operation {
  QNN_UNARY_F32_COPY = 0,           /* x (Pow 1, Clip without bounds) */
  QNN_UNARY_F32_ERF = 1,            /* MLAS's erf */
  QNN_UNARY_F32_EXP = 2,            /* MLAS's exp */
  QNN_UNARY_F32_GELU = 3,           /* 0.5 x (erf(x / sqrt 2) + 1) */
  QNN_UNARY_F32_GELU_TANH = 4,      /* 0.5 x (tanh(x (0.0356774 x^2 + 0.797885)) + 1), MLAS's tanh */
  QNN_UNARY_F32_SQRT = 5,
  QNN_UNARY_F32_SQUARE = 6,         /* x * x (Pow 2) */
  QNN_UNARY_F32_CUBE = 7,           /* x * x * x (Pow 3) */
  QNN_UNARY_F32_NEGATE = 8,
  QNN_UNARY_F32_ABS = 9,
  QNN_UNARY_F32_RECIPROCAL = 10,
  QNN_UNARY_F32_LEAKY_RELU = 11,    /* x >= 0 ? x : alpha x */
  QNN_UNARY_F32_ELU = 12,           /* x >= 0 ? x : alpha (exp(x) - 1), Eigen's exp */
  QNN_UNARY_F32_LOGISTIC = 13,      /* MLAS's */
  QNN_UNARY_F32_TANH = 14,          /* MLAS's */
  QNN_UNARY_F32_HARD_SWISH = 15,    /* x min(max(x / 6 + 0.5, 0), 1) */
  QNN_UNARY_F32_HARD_SIGMOID = 16,  /* min(max(alpha x + beta, 0), 1) */
  QNN_UNARY_F32_CLAMP = 17,         /* min(max(x, alpha), beta) */
  QNN_UNARY_F32_MAX = 18,           /* max(x, alpha) */
  QNN_UNARY_F32_MIN = 19,           /* min(x, beta) */
  QNN_UNARY_F32_ADD = 20,           /* x + alpha */
  QNN_UNARY_F32_SUBTRACT = 21,      /* x - alpha */
  QNN_UNARY_F32_SUBTRACT_FROM = 22, /* alpha - x */
  QNN_UNARY_F32_MULTIPLY = 23,      /* x * alpha */
  QNN_UNARY_F32_DIVIDE = 24,        /* x / alpha */
  QNN_UNARY_F32_DIVIDE_INTO = 25,   /* alpha / x */
  QNN_UNARY_F32_NONZERO_TO = 26,    /* x != 0 ? alpha : x (Where(Cast(x, bool), alpha, x): an attention mask) */
  QNN_UNARY_F32_ZERO_TO = 27,       /* x != 0 ? x : alpha (Where(Cast(x, bool), x, alpha)) */
  QNN_UNARY_F32_SELECT = 28,        /* x != 0 ? alpha : beta (Cast to bool, as 0 / 1; Where(x, alpha, beta)) */
  QNN_UNARY_F32_NAN_TO = 29,        /* x != x ? alpha : x (Where(IsNaN(x), alpha, x)) */
  QNN_UNARY_F32_OPERATION_COUNT = 30,
};

/* alpha and beta are finite, or for NONZERO_TO and the operations after it (selections) infinite too. */
struct qnn_unary_f32_record {
  int32_t op, words;
  int32_t input, output, size;  /* float32 [size] each (input == output: in place) */
  int32_t operation;
  float alpha, beta;
};

/* The mean (operation 0) or sum (1; 2, max, is reserved) of float32 [rows][columns] as onnxruntime's float
 * ReduceMean / ReduceSum (src/operators/reduce_f32.c). arithmetic 0, over its last axes: of each row, to
 * float32 [rows]: Eigen's four-lane SSE sum, its packets from the row's first element that is 16-byte
 * aligned in onnxruntime's buffer (row r begins at element r * columns of a 64-byte-aligned tensor:
 * wherever the arena holds it, the order follows r * columns), then divided by the count. arithmetic 1,
 * over its leading axes: of each column, to float32 [columns]: the rows added in order, then divided.
 * arithmetic 2, of each row as MLAS's global pooling (a float GlobalAveragePool): four lanes over packets
 * from the row's first element, (l0 + l2) + (l1 + l3), then the rest in order, then divided. */
struct qnn_reduce_f32_record {
  int32_t op, words;
  int32_t input, output;
  int32_t rows, columns;
  int32_t operation;
  int32_t arithmetic;
};

/* Y[b] = A[b] x B[b] (BATCH_MATMUL, ONNX MatMul / QLinearMatMul of two activations): A[b] is
 * [rows][depth], B[b] is [depth][columns] or, with transpose_b 1, [columns][depth], Y[b] is
 * [rows][columns]; b runs over the output's batch dimensions batch[0..2] (outermost first, 1s to
 * pad), Y contiguous, and A[b] starts at element sum(b_k * a_strides[k]) of input_a (B alike;
 * stride 0 along a broadcast dimension). acc = sum (a - a_zp) (b - b_zp) in int32; arithmetic 0:
 * fp32 requantization (conv2d's, onnxruntime's QLinearMatMul: MLAS's), scale = a_scale * b_scale /
 * y_scale; 1 (TFLite's builtin BATCH_MATMUL): out = M(acc) + out_zp clamped, M gemmlowp's rounding
 * doubling high multiply by fixed_multiplier (0 or in [2^30, 2^31)) then a rounding (half away
 * from zero) right shift by fixed_shift (0 to 31). B is packed for the GEMM kernels at every run. */
struct qnn_batch_matmul_record {
  int32_t op, words;
  int32_t input_a, input_b, output;
  int32_t batch[3];
  int32_t a_strides[3], b_strides[3];
  int32_t rows, depth, columns;
  int32_t transpose_b;
  int32_t a_zero_point, b_zero_point, output_zero_point;
  float scale;
  int32_t output_min, output_max;
  int32_t arithmetic, fixed_multiplier, fixed_shift;
};

/* Y[b] = A[b] x B[b] in float32 (BATCH_MATMUL_F32, ONNX MatMul of two float32 activations: attention in a
 * dynamically quantized model; src/operators/batch_matmul_f32.c): A[b] [rows][depth], B[b] [depth][columns],
 * Y[b] [rows][columns] contiguous, batches and strides as BATCH_MATMUL's. Each output is its products
 * summed in depth order from the first; the relaxed variant fuses each multiply-add (as MLAS's SGEMM does
 * on a machine with FMA), the others round product and sum apart (as its SSE and WebAssembly kernels do). */
struct qnn_batch_matmul_f32_record {
  int32_t op, words;
  int32_t input_a, input_b, output;
  int32_t batch[3];
  int32_t a_strides[3], b_strides[3];
  int32_t rows, depth, columns;
};

/* GATHER (ONNX Gather on axis 0 of a constant table with run-time indices: token embeddings): output row i
 * is table row indices[i] (negative indices count from the end), row_bytes bytes each; indices are
 * int32 (index_bytes 4) or int64 (8). An index outside [-rows, rows) gives a row of zero bytes (onnxruntime
 * refuses the run; the hosts check model inputs before a run). */
struct qnn_gather_record {
  int32_t op, words;
  int32_t table;            /* address of rows * row_bytes constant bytes */
  int32_t indices, output;
  int32_t count, rows, row_bytes, index_bytes;
};

/* CONVERT_F32: float32 output[i] = (float) input[i], input int32 (input_bytes 4) or int64 (8), rounded to
 * nearest even as C's conversion (onnxruntime's Cast) does. */
struct qnn_convert_f32_record {
  int32_t op, words;
  int32_t input, output, size, input_bytes;
};

/* onnxruntime's DynamicQuantizeLinear (the activations of onnxruntime.quantization.quantize_dynamic's
 * models): over the whole float32 input, lo = min(0, min x), hi = max(0, max x),
 * scale = hi == lo ? 1 : (hi - lo) / 255 and zp = rint(clamp(0 - lo / scale, 0, 255)) (float32, round
 * half to even), then q = rint(clamp(x / scale, -zp, 255 - zp)) + zp. The uint8 q is stored as its int8
 * twin q - 128, as qnnweb holds uint8 models; output_parameters (arena offset, 4-byte aligned) receives
 * 8 bytes: float32 scale, int32 zp - 128, for the DYNAMIC_MATMULs that read this output. */
struct qnn_dynamic_quantize_record {
  int32_t op, words;
  int32_t input, output, size;
  int32_t output_parameters;
};

/* onnxruntime's MatMulInteger of a DYNAMIC_QUANTIZE output X [rows, depth] (scale and zero point read
 * from input_parameters at run time) and constant weights W [depth, columns] (int8; uint8 weights as
 * their int8 twin w - 128), then its float output: acc = sum_k (x - x_zp) (w - w_zp[n]) in int32,
 * y = (float) acc * (x_scale * scales[n]), then + bias[n] (two roundings, no fused multiply-add), as
 * its Cast / Mul / Add nodes and its fused MatMulIntegerToFloat / DynamicQuantizeMatMul compute it. The
 * sums are exact, as the operator is defined (onnxruntime's x86 AVX2 kernel without VNNI saturates pairs
 * of uint8 x int8 products to int16 instead: docs/kernels.md). */
struct qnn_dynamic_matmul_record {
  int32_t op, words;
  int32_t input, output;
  int32_t input_parameters;   /* arena offset: float32 x_scale, int32 x_zp (int8 twin), as DYNAMIC_QUANTIZE writes */
  int32_t rows, depth, columns;
  int32_t weights;            /* address: int8 [depth][columns] (copied at qnn_plan_add) */
  int32_t weights_zero_points; /* address: int32 [columns], each in int8 range */
  int32_t scales;             /* address: float32 [columns], the weights' scales */
  int32_t bias;               /* address: float32 [columns], or 0 for none */
};

/* onnxruntime's ConvInteger of a DYNAMIC_QUANTIZE output X [batch][input_height][input_width][groups *
 * input_channels] (NHWC; scale and zero point read from input_parameters at run time) and constant weights,
 * then its Cast / Mul / Add to float, as DYNAMIC_MATMUL's: output pixel p, channel n of group g = n /
 * (output_channels / groups) is acc = sum over the window's taps and the group's channels of
 * (x - x_zp) (w - w_zp[n]), taps in the padding reading x_zp (ConvInteger pads with the zero point), then
 * y = (float) acc * (x_scale * scales[n]) + bias[n]. Output float32 [batch][output_height][output_width]
 * [output_channels]. */
struct qnn_dynamic_conv2d_record {
  int32_t op, words;
  int32_t input, output;
  int32_t input_parameters;   /* arena offset: float32 x_scale, int32 x_zp (int8 twin), as DYNAMIC_QUANTIZE writes */
  int32_t batch, input_height, input_width, input_channels;   /* input_channels: of one group */
  int32_t output_height, output_width, output_channels;
  int32_t kernel_height, kernel_width;
  int32_t stride_height, stride_width;
  int32_t dilation_height, dilation_width;
  int32_t groups;
  int32_t padding_top, padding_left;
  int32_t weights;            /* address: int8 [kernel_height][kernel_width][input_channels][output_channels] */
  int32_t weights_zero_points; /* address: int32 [output_channels], each in int8 range */
  int32_t scales;             /* address: float32 [output_channels], the weights' scales */
  int32_t bias;               /* address: float32 [output_channels], or 0 for none */
};

struct qnn_copy_record {
  int32_t op, words;
  int32_t input, output, bytes;
};

/* CONCATENATION, one record per input: input int8 [outer][inner_input] is written to columns
 * [output_offset, output_offset + inner_input) of output int8 [outer][inner_output], requantized
 * (out = rint(clamp((x - in_zp) * scale)) + out_zp, scale = in_scale / out_scale) unless scale is
 * 1 and the zero points are equal (then a copy). */
struct qnn_copy_slice_record {
  int32_t op, words;
  int32_t input, output;
  int32_t outer, inner_input, inner_output, output_offset;
  float scale;
  int32_t input_zero_point, output_zero_point;
};

/* output[output_offset + sum_k i_k * output_strides[k]] = input[input_offset + sum_k i_k * input_strides[k]]
 * for every index (i0..i5) below dims: TRANSPOSE, SLICE / STRIDED_SLICE (negative strides too),
 * SPLIT, GATHER with constant indices, DEPTH_TO_SPACE; and from constant data instead of the input tensor
 * (a float32 class token written beside computed tokens). Offsets and strides count elements; every
 * element read and written must lie inside the arena (or the constant). */
struct qnn_copy_strided_record {
  int32_t op, words;
  int32_t input, output;
  int32_t element_bytes;    /* 1, 2 or 4 */
  int32_t input_offset, output_offset;
  int32_t dims[6];
  int32_t input_strides[6];
  int32_t output_strides[6];
  int32_t constant;         /* address: the data read instead of input (copied at qnn_plan_add), or 0 */
};

/* output[p][c] = tables[c][(uint8) input[p][c]] over [pixels][channels]: a per-channel function of one
 * int8 value (PRELU with one slope per channel); output elements of 1 byte (int8 / uint8) or 4
 * (float32: a float op's result that is a model output). */
struct qnn_lut_channels_record {
  int32_t op, words;
  int32_t input, output;
  int32_t pixels, channels;
  int32_t tables;           /* address: channels * 256 output elements (copied at qnn_plan_add) */
  int32_t output_bytes;     /* 1 or 4 */
};

/* output[i] = table[(uint8) input[i]]: any int8 / uint8 -> int8 / uint8 unary function. */
struct qnn_lut_record {
  int32_t op, words;
  int32_t input, output, size;
  int32_t table;            /* address: 256 bytes (copied at qnn_plan_add) */
};

/* output[i] = table[(uint8) input[i]], float32: a float function of a dequantized int8 / uint8 tensor
 * whose float result is a model output (onnxruntime's QOperator models end so). */
struct qnn_lut_f32_record {
  int32_t op, words;
  int32_t input, output, size;
  int32_t table;            /* address: 256 float32 (copied at qnn_plan_add) */
};

/* Resize of the height and width of an NHWC tensor (input and output share quantization). Per output
 * row y, rows[3 y .. 3 y + 2] = (top input row, bottom input row, alpha_y), per output column x,
 * columns[3 x ..] = (left, right, alpha_x), alphas in 1/2048ths (XNNPACK's q11 weights); each output
 * value is XNNPACK's s8 ibilinear of its four input values:
 *   t = (tl << 11) + (tr - tl) * alpha_x, b likewise, y = ((t << 11) + (b - t) * alpha_y + 2^21) >> 22.
 * Tables whose alphas are all 0 are a nearest-neighbour gather (a copy of each pixel's channels). */
/* Resize of NHWC int8 through separable tables: per output row and column (first input index, second,
 * weight of the second), the weight in the arithmetic's own unit. Every weight 0 is a gather (nearest).
 *   arithmetic 0: XNNPACK's s8 ibilinear (LiteRT): weight in 1/2048ths, one rounding at the end.
 *   arithmetic 1: onnxruntime's float Resize between DequantizeLinear and QuantizeLinear (QDQ models):
 *     weight = float32 bits of d (the other weight is 1 - d in float32); the four corner weights are
 *     products of the row and column ones, the values (q - zero_point) * scale, summed left to right,
 *     then rint(sum / output_scale) + output_zero_point.
 *   arithmetic 2: onnxruntime's uint8 / int8 Resize in NCHW (QOperator models): as 1 on the stored
 *     values themselves (scale 1, zero point 0), truncated toward zero.
 *   arithmetic 3: onnxruntime's uint8 / int8 Resize in NHWC (QOperator after its NHWC transform): weight
 *     in 1/1024ths (the other one 1024 - weight), integer sum of the four products divided by 2^20
 *     toward zero.
 *   arithmetic 4: as 1, the float32 sum itself the output (a float32 tensor: a float Resize whose result
 *     is the model's output); output_scale and output_zero_point unused. */
enum qnn_resize_arithmetic {
  QNN_RESIZE_XNNPACK_Q11 = 0,
  QNN_RESIZE_ONNX_FLOAT = 1,
  QNN_RESIZE_ONNX_FLOAT_TRUNCATE = 2,
  QNN_RESIZE_ONNX_Q10 = 3,
  QNN_RESIZE_ONNX_FLOAT_OUTPUT = 4,
};

struct qnn_resize_record {
  int32_t op, words;
  int32_t input, output;
  int32_t batch, input_height, input_width, channels, output_height, output_width;
  int32_t rows;             /* address: output_height x 3 int32 (copied at qnn_plan_add) */
  int32_t columns;          /* address: output_width x 3 int32 (copied at qnn_plan_add) */
  int32_t arithmetic;       /* enum qnn_resize_arithmetic */
  float scale;              /* arithmetic 1: the input's scale and zero point */
  int32_t zero_point;
  float output_scale;       /* arithmetic 1: the output's (the others move values, or output float32) */
  int32_t output_zero_point;
};

/* TFLite_Detection_PostProcess on float32 tensors: box encodings [anchor_count, box_stride] (y, x, h, w
 * first), class scores [anchor_count, classes_with_background] (a leading background class when it is
 * classes + 1), anchors [anchor_count, 4] (y, x, h, w; copied at qnn_plan_add). Outputs: boxes
 * [slots, 4] (ymin, xmin, ymax, xmax), classes [slots], scores [slots], count [1], all float32, slots =
 * max_detections * max_classes_per_detection; slots past the count are zero. Fast NMS (regular_nms 0)
 * or per-class NMS (1), with TFLite's arithmetic (src/operators/detection_postprocess.c). */
struct qnn_detection_postprocess_record {
  int32_t op, words;
  int32_t boxes, scores, anchors;
  int32_t output_boxes, output_classes, output_scores, output_count;
  int32_t anchor_count, box_stride, classes_with_background, classes;  /* all > 0 */
  int32_t max_detections, max_classes_per_detection, detections_per_class;  /* all > 0 */
  int32_t regular_nms;
  float score_threshold, iou_threshold;     /* iou_threshold in (0, 1] */
  float y_scale, x_scale, h_scale, w_scale;
};

/* Exports (identical in the scalar, simd128 and relaxed modules):
 *   void*   qnn_alloc(size)                     16-byte aligned, zero-filled; 0 when out of memory
 *   int32   qnn_plan_create(op_count, arena_bytes) -> plan address or 0
 *   int32   qnn_plan_add(plan, record_address)  -> enum qnn_status
 *   int32   qnn_plan_add_records(plan, address, count) adds `count` records laid end to end (each
 *                                               record[1] words long) -> how many were added; fewer
 *                                               than `count`: that record failed (see qnn_error_message)
 *   int32   qnn_plan_arena(plan)                -> arena address (write inputs, read outputs there)
 *   int32   qnn_plan_packed_bytes(plan)         -> bytes of packed weights and indirection
 *   int32   qnn_run(plan)                       -> enum qnn_status
 *   int32   qnn_run_ops(plan, first, count)     runs ops [first, first + count) only (profiling)
 *   int32   qnn_record_words(op_type)           -> words in that op's record (0 if unknown)
 *   int32   qnn_variant()                       -> 0 scalar, 1 simd128, 2 relaxed
 *   int32   qnn_abi_version()                   -> QNN_ABI_VERSION
 *   int32   qnn_error_message()                 -> address of a NUL-terminated message for the last error
 *   int32   qnn_set_threads(n)                  how many threads the host runs (sizes the operators'
 *                                               tasks); 0, or 1 with the message set: n outside [1, 16],
 *                                               or n > 1 in a single-threaded module
 *   int32   qnn_max_threads()                   -> 16 in the -threads modules, 1 in the others
 *   int32   qnn_threaded()                      -> 1 in the -threads modules
 *   void    qnn_split_finely(on)                tests: no minimum work per task (small ops split too;
 *                                               by default an op splits only into tasks worth ~1-3 us)
 *   void    qnn_worker(thread)                  a worker's life (thread in [1, n)): runs tasks until
 *                                               qnn_stop_workers; sleeps in memory.atomic.wait32 between
 *                                               inferences, so never on a browser's main thread
 *   void    qnn_stop_workers()                  ends every qnn_worker; thread 0 then runs alone
 * The -threads modules import their memory (env.memory, shared) instead of exporting it, and export
 * __stack_pointer: each worker's instance is given its own stack (see src/threadpool.c).
 */

#endif
