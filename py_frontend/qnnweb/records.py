"""Op records: the Python mirror of the structs in wasm_kernels/include/qnnweb.h.

Each record is ``op, words`` followed by these fields, 4 bytes each, little endian; names ending
in ``:f`` are float32, the rest int32. tests/kernels/test_abi.py checks every record's size
against the kernels' ``qnn_record_words`` export.
"""

import math
import struct

from .errors import ModelError

# wasm_kernels/include/qnnweb.h's QNN_ABI_VERSION: the records' layouts and meanings below.
ABI_VERSION = 15

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
FLOAT32_MAX = struct.unpack("<f", b"\xff\xff\x7f\x7f")[0]

# ADD and MUL: a 4-D output shape and per-input element strides (0 where broadcast). When
# b_constant is 1, input_b is the wasm address of constant data (a constant field), not a tensor.
_BINARY = ("input_a input_b output b_constant dim0 dim1 dim2 dim3 a_stride0 a_stride1 a_stride2 a_stride3 "
           "b_stride0 b_stride1 b_stride2 b_stride3")

RECORDS = {
    "quantize": (1, "input output size scale:f zero_point reciprocal"),
    "dequantize": (2, "input output size scale:f zero_point"),
    "requantize": (3, "input output size scale:f input_zero_point output_zero_point"),
    "conv2d": (4, "input output batch input_height input_width input_channels output_height output_width "
                  "output_channels kernel_height kernel_width stride_height stride_width dilation_height "
                  "dilation_width padding_top padding_left weights weights_layout bias scales input_zero_point "
                  "output_zero_point output_min output_max weights_zero_point groups weights_zero_points"),
    "dwconv2d": (5, "input output batch input_height input_width input_channels output_height output_width "
                    "output_channels kernel_height kernel_width stride_height stride_width dilation_height "
                    "dilation_width padding_top padding_left depth_multiplier weights weights_layout bias scales "
                    "input_zero_point output_zero_point output_min output_max"),
    "add": (6, _BINARY + " a_zero_point b_zero_point output_zero_point a_multiplier:f b_multiplier:f "
               "output_min output_max arithmetic input_offset float_form a_fixed_multiplier a_fixed_shift "
               "b_fixed_multiplier b_fixed_shift output_fixed_multiplier output_fixed_shift"),
    "avgpool2d": (7, "input output batch input_height input_width channels output_height output_width "
                     "kernel_height kernel_width stride_height stride_width padding_top padding_left scale:f "
                     "input_zero_point output_zero_point output_min output_max count_include_pad arithmetic "
                     "input_scale:f output_scale:f table table_channels"),
    "pad": (8, "input output batch input_height input_width channels padding_top padding_bottom padding_left "
               "padding_right pad_value padding_front padding_back"),
    "softmax": (9, "input output rows columns output_scale:f inverse_output_scale:f output_zero_point arithmetic table"),
    "copy": (10, "input output bytes"),
    "mul": (11, _BINARY + " a_zero_point b_zero_point output_zero_point scale:f output_min output_max arithmetic offset"),
    "maxpool2d": (12, "input output batch input_height input_width channels output_height output_width "
                      "kernel_height kernel_width stride_height stride_width dilation_height dilation_width "
                      "padding_top padding_left output_min output_max"),
    "copy_slice": (13, "input output outer inner_input inner_output output_offset scale:f input_zero_point "
                       "output_zero_point"),
    # dims / strides: 6 each, outermost first; offsets and strides count elements; constant: data read instead
    # of input (0: none)
    "copy_strided": (14, "input output element_bytes input_offset output_offset " + " ".join(
        f"{name}{k}" for name in ("dim", "input_stride", "output_stride") for k in range(6)) + " constant"),
    "lut": (15, "input output size table"),
    # per-channel (ONNX per-axis) quantization of a tensor viewed as [outer, channels, inner]
    "quantize_channels": (16, "input output outer channels inner scales zero_points"),
    "dequantize_channels": (17, "input output outer channels inner scales zero_points"),
    "lut_f32": (18, "input output size table"),
    "maximum": (19, _BINARY + " minimum"),
    # rows / columns: per output row / column (first input index, second, weight of the second: its unit
    # is the arithmetic's, qnnweb.h), int32
    "resize": (20, "input output batch input_height input_width channels output_height output_width rows columns "
                   "arithmetic scale:f zero_point output_scale:f output_zero_point"),
    "lut_channels": (21, "input output pixels channels tables output_bytes"),
    "lut2d": (22, _BINARY + " table output_bytes"),   # output_bytes 1: int8 table; 4: float32
    # TFLite_Detection_PostProcess, float32 tensors; anchors: [anchor_count, 4] float32 (y, x, h, w)
    "detection_postprocess": (23, "boxes scores anchors output_boxes output_classes output_scores output_count "
                                  "anchor_count box_stride classes_with_background classes max_detections "
                                  "max_classes_per_detection detections_per_class regular_nms score_threshold:f "
                                  "iou_threshold:f y_scale:f x_scale:f h_scale:f w_scale:f"),
    # float32 operands and output; operation 0 add, 1 subtract, 2 multiply, 3 divide; b_first: b OP a
    "binary_f32": (24, _BINARY + " operation b_first output_min:f output_max:f"),
    # gamma / beta: float32 [channels] each; arithmetic 0 LayerNormalization, 1 InstanceNormalization; table:
    # float32 [256] (per column: [columns][256]) input values by byte, 0: dequantized; float_output: float32 y;
    # float_input: x is float32, read as it is
    "layer_norm": (25, "input output rows columns channels gamma beta arithmetic epsilon:f input_scale:f "
                       "input_zero_point output_scale:f output_zero_point table table_per_column float_output "
                       "float_input"),
    # Y[b] = A[b] B[b]: batch dims and per-input element strides (0 where broadcast), outermost first;
    # transpose_b: B[b] is [columns, depth]; arithmetic 0 fp32 (scale), 1 TFLite's fixed point
    "batch_matmul": (26, "input_a input_b output batch0 batch1 batch2 a_stride0 a_stride1 a_stride2 b_stride0 "
                         "b_stride1 b_stride2 rows depth columns transpose_b a_zero_point b_zero_point "
                         "output_zero_point scale:f output_min output_max arithmetic fixed_multiplier fixed_shift"),
    # float32 -> float32, one of onnxruntime's element functions (qnnweb.h's qnn_unary_f32_operation;
    # ops/unary_f32.py), alpha / beta its constants
    "unary_f32": (27, "input output size operation alpha:f beta:f"),
    # onnxruntime's DynamicQuantizeLinear: uint8 output held as int8 (q - 128); output_parameters: 8 bytes of the
    # arena, float32 scale and int32 zero point - 128, read by the dynamic_matmuls of this output
    "dynamic_quantize": (28, "input output size output_parameters"),
    # float32 [rows, columns] = (dynamically quantized input [rows, depth]) x weights int8 [depth, columns]:
    # exact int32 sums, times x_scale * scales[n] (float32), + bias[n] (float32, or 0: none)
    "dynamic_matmul": (29, "input output input_parameters rows depth columns weights weights_zero_points scales "
                           "bias"),
    # float32 [rows, columns] -> float32 [rows]; operation 0 mean, 1 sum; arithmetic 0 onnxruntime's (Eigen's order)
    "reduce_f32": (30, "input output rows columns operation arithmetic"),
    # float32 Y[b] = A[b] B[b] (batches and strides as batch_matmul's): a dynamic model's float attention
    "batch_matmul_f32": (31, "input_a input_b output batch0 batch1 batch2 a_stride0 a_stride1 a_stride2 b_stride0 "
                             "b_stride1 b_stride2 rows depth columns"),
    # output row i = table row indices[i] (table: rows x row_bytes constant bytes; indices int32 or int64)
    "gather": (32, "table indices output count rows row_bytes index_bytes"),
    # float32 output = int32 (input_bytes 4) or int64 (8) input, converted
    "convert_f32": (33, "input output size input_bytes"),
    # float32 NHWC = convolution of (dynamically quantized NHWC input) by weights int8 [kh][kw][input_channels]
    # [output_channels] (input_channels of one group): dynamic_matmul's arithmetic over each pixel's window
    "dynamic_conv2d": (34, "input output input_parameters batch input_height input_width input_channels "
                           "output_height output_width output_channels kernel_height kernel_width stride_height "
                           "stride_width dilation_height dilation_width groups padding_top padding_left weights "
                           "weights_zero_points scales bias"),
}

# Fields that hold activation tensors (arena offsets) and constant data (wasm addresses). A Step
# gives input_b either as a tensor (in its fields) or as constant bytes (in its constants).
INPUT_FIELDS = ("input", "input_a", "input_b", "boxes", "scores", "input_parameters", "indices")
OUTPUT_FIELDS = ("output", "output_boxes", "output_classes", "output_scores", "output_count", "output_parameters")   # the main one first
TENSOR_FIELDS = INPUT_FIELDS + OUTPUT_FIELDS
CONSTANT_FIELDS = ("weights", "bias", "scales", "zero_points", "weights_zero_points", "input_b", "table", "rows",
                   "columns", "tables", "anchors", "gamma", "beta", "constant")   # lut2d's "table" too


def _layout(kind):
    op_type, spec = RECORDS[kind]
    names, codes = [], ["i", "i"]
    for field in spec.split():
        name, _, typ = field.partition(":")
        names.append(name)
        codes.append("f" if typ == "f" else "i")
    return op_type, names, struct.Struct("<" + "".join(codes))


LAYOUTS = {kind: _layout(kind) for kind in RECORDS}
FIELD_WORDS = {kind: {name: 2 + i for i, name in enumerate(names)} for kind, (_, names, _) in LAYOUTS.items()}
FIELD_CODES = {kind: dict(zip(names, layout.format[3:])) for kind, (_, names, layout) in LAYOUTS.items()}
NAME_SETS = {kind: frozenset(names) for kind, (_, names, _) in LAYOUTS.items()}
FLOAT_FIELDS = {kind: tuple(n for n, code in FIELD_CODES[kind].items() if code == "f") for kind in LAYOUTS}


def record_words(kind):
    return 2 + len(LAYOUTS[kind][1])


# float32 fields that may hold an infinity (never NaN): unary_f32's constants, where a Where puts -inf
# (an attention mask's masked scores) in place of a tensor's nonzero or NaN elements
INFINITE_FIELDS = {"unary_f32": ("alpha", "beta")}


def _float32_field(kind, name, value):
    """Whether ``value`` fits float32 field ``name`` of a ``kind`` record: finite, or an infinity where allowed."""
    if not isinstance(value, (int, float)):
        return False
    return -FLOAT32_MAX <= value <= FLOAT32_MAX or (math.isinf(value) and name in INFINITE_FIELDS.get(kind, ()))


def check_record(kind, fields):
    """Why these field values do not fit the record (an int32 field outside int32, a float32 field
    that is not a finite float32 (an infinity where INFINITE_FIELDS allows it)), or None. Fields absent
    from ``fields`` are not checked."""
    codes, lowest, highest = FIELD_CODES[kind], INT32_MIN, INT32_MAX
    for name, value in fields.items():
        if type(value) is int and lowest <= value <= highest:
            continue  # in range for every field (int32, and float32 too)
        code = codes.get(name)
        if code == "i":
            if not (type(value) is int or type(value) is bool) or not INT32_MIN <= value <= INT32_MAX:
                return f"{kind} record: {name} = {value!r} does not fit in an int32"
        elif code == "f" and not _float32_field(kind, name, value):
            return f"{kind} record: {name} = {value!r} is not a finite float32"
    return None


def pack_record(kind, fields):
    """Pack ``fields`` (every field of the record, by name) into the record's bytes. Values outside
    the fields' ranges raise ModelError. Lowering has checked them (``check_record``): packing checks
    again only when ``struct`` refuses a value, or a float32 field holds what ``struct`` lets through."""
    op_type, names, layout = LAYOUTS[kind]
    if fields.keys() != NAME_SETS[kind]:
        missing, extra = NAME_SETS[kind] - fields.keys(), fields.keys() - NAME_SETS[kind]
        raise KeyError(f"{kind} record: missing {sorted(missing)}, unknown {sorted(extra)}")
    try:
        record = layout.pack(op_type, len(names) + 2, *map(fields.__getitem__, names))
    except (struct.error, OverflowError):
        record = None
    floats = FLOAT_FIELDS[kind]
    if record is None or not all(_float32_field(kind, name, fields[name]) for name in floats):
        raise ModelError(check_record(kind, fields) or f"{kind} record: a field does not fit")
    return record
