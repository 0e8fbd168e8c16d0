"""TFLite files in the forms other converters write, each run by qnnweb and by ai-edge-litert:
op codes in only one field (ai-edge-quantizer and litert-torch set only ``builtin_code``; MediaPipe only
the deprecated one), options left out (an absent field or table means the schema default: CONCATENATION
axis 0), and Keras-style shape arithmetic (SHAPE -> STRIDED_SLICE -> PACK -> RESHAPE) folded at import."""

from importlib import import_module

import numpy as np
import pytest
import qnnweb
from ai_edge_litert.interpreter import Interpreter
from tflite.BuiltinOptions import BuiltinOptions
from tflite.TensorType import TensorType
from qnnweb_dev.tflite_builder import ModelBuilder

ConcatenationOptions, PackOptions, ShapeOptions, StridedSliceOptions = (
    import_module(f"tflite.{name}")
    for name in ("ConcatenationOptions", "PackOptions", "ShapeOptions", "StridedSliceOptions"))
SCALE, ZERO_POINT = 0.05, 3


def _concat_options(b):
    ConcatenationOptions.Start(b)
    ConcatenationOptions.AddAxis(b, 0)   # the default: the Builder leaves it out of the file
    return ConcatenationOptions.End(b)


def _strided_slice_options(b):
    StridedSliceOptions.Start(b)
    StridedSliceOptions.AddShrinkAxisMask(b, 1)
    return StridedSliceOptions.End(b)


def _shape_options(b):
    ShapeOptions.Start(b)
    ShapeOptions.AddOutType(b, TensorType.INT32)
    return ShapeOptions.End(b)


def _pack_options(b):
    PackOptions.Start(b)
    PackOptions.AddValuesCount(b, 2)
    return PackOptions.End(b)


def flatten_model(opcode_fields="both", concat_table=True):
    """float [1,4,4,3] -> QUANTIZE -> CONCATENATION(x, x) along axis 0 -> [2,4,4,3] -> RESHAPE to
    PACK(STRIDED_SLICE(SHAPE(y), 0:1, shrink), -1) = [2, 48] -> LOGISTIC -> DEQUANTIZE."""
    m = ModelBuilder()
    x = m.tensor("input", [1, 4, 4, 3], "float32")
    q = m.tensor("quantized", [1, 4, 4, 3], "int8", [SCALE], [ZERO_POINT])
    c = m.tensor("concatenated", [2, 4, 4, 3], "int8", [SCALE], [ZERO_POINT])
    shape = m.tensor("shape", [4], "int32")
    begin, end, stride = (m.constant_int32(n, [v]) for n, v in (("begin", 0), ("end", 1), ("stride", 1)))
    batch = m.tensor("batch", [], "int32")
    minus_one = m.tensor("minus_one", [], "int32", data=np.int32(-1).tobytes())
    new_shape = m.tensor("new_shape", [2], "int32")
    r = m.tensor("flat", [2, 48], "int8", [SCALE], [ZERO_POINT])
    s = m.tensor("sigmoid", [2, 48], "int8", [1 / 256], [-128])
    y = m.tensor("output", [2, 48], "float32")
    m.op("QUANTIZE", [x], [q])
    m.op("CONCATENATION", [q, q], [c], (BuiltinOptions.ConcatenationOptions, _concat_options) if concat_table else None)
    m.op("SHAPE", [c], [shape], (BuiltinOptions.ShapeOptions, _shape_options))
    m.op("STRIDED_SLICE", [shape, begin, end, stride], [batch],
         (BuiltinOptions.StridedSliceOptions, _strided_slice_options))
    m.op("PACK", [batch, minus_one], [new_shape], (BuiltinOptions.PackOptions, _pack_options))
    m.op("RESHAPE", [c, new_shape], [r])
    m.op("LOGISTIC", [r], [s])
    m.op("DEQUANTIZE", [s], [y])
    return m.build([x], [y], opcode_fields)


def litert(data, x):
    interpreter = Interpreter(model_content=data, num_threads=1)
    interpreter.allocate_tensors()
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], x)
    interpreter.invoke()
    return interpreter.get_tensor(interpreter.get_output_details()[0]["index"])


@pytest.mark.parametrize("opcode_fields", ["both", "builtin", "deprecated"])
@pytest.mark.parametrize("concat_table", [True, False], ids=["axis-field-absent", "options-table-absent"])
def test_converter_forms_match_litert(opcode_fields, concat_table):
    data = flatten_model(opcode_fields, concat_table)
    x = np.random.default_rng(1).uniform(-6, 6, (1, 4, 4, 3)).astype(np.float32)
    expected = litert(data, x)
    info = qnnweb.describe(data)
    assert [op["type"] for op in info["ops"]] == ["QUANTIZE", "CONCATENATION", "RESHAPE", "LOGISTIC", "DEQUANTIZE"]
    for variant in qnnweb.VARIANTS:
        (ours,) = qnnweb.load(data, variant=variant).run(x)
        assert ours.shape == expected.shape == (2, 48)
        assert np.abs(ours - expected).max() <= 1 / 256 + 1e-7, variant


def test_builtin_code_only_is_not_read_as_add():
    """The regression itself: with only builtin_code stored, the tflite package's BuiltinCode() says 0."""
    from tflite.Model import Model

    data = flatten_model("builtin")
    code = Model.GetRootAs(data, 0).OperatorCodes(0)
    assert code.DeprecatedBuiltinCode() == 0 and code.BuiltinCode() == 0   # the package's reading
    assert qnnweb.describe(data)["ops"][0]["type"] == "QUANTIZE"


def test_unknown_options_type_reads_defaults():
    """An options table of another type than the op's is ignored (TFLite: builtin_options_as_X() is null)."""
    m = ModelBuilder()
    x = m.tensor("input", [1, 2, 2, 3], "float32")
    q = m.tensor("quantized", [1, 2, 2, 3], "int8", [SCALE], [ZERO_POINT])
    c = m.tensor("concatenated", [2, 2, 2, 3], "int8", [SCALE], [ZERO_POINT])
    y = m.tensor("output", [2, 2, 2, 3], "float32")
    m.op("QUANTIZE", [x], [q])
    m.op("CONCATENATION", [q, q], [c], (BuiltinOptions.PackOptions, _pack_options))
    m.op("DEQUANTIZE", [c], [y])
    data = m.build([x], [y])
    x_value = np.linspace(-3, 3, 12, dtype=np.float32).reshape(1, 2, 2, 3)
    (ours,) = qnnweb.load(data).run(x_value)
    np.testing.assert_array_equal(ours[0], ours[1])
    np.testing.assert_allclose(ours[0], x_value[0], atol=SCALE / 2 + 1e-6)
