"""ADD, MUL, MAXIMUM and MINIMUM with numpy broadcasting (up to rank 4, one input possibly constant):
every variant bit-exact against reference.int8.add / mul and numpy's maximum / minimum; float32 ADD /
SUB / MUL / DIV (binary_f32: a model's float ops before it quantizes) bit-exact against numpy's float32.
Same-shape and channel-broadcast rows run the SIMD128 loops in the simd128 / relaxed modules (16
elements at a time, then a scalar tail)."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import harness as H
import qnnweb
from qnnweb_dev.reference import int8 as ref


@st.composite
def broadcast_shapes(draw):
    """Two shapes that broadcast (numpy rules, rank <= 4): same shape, per-channel, scalar, mixed."""
    kind = draw(st.sampled_from(["same", "same", "channel", "scalar", "mixed"]))
    rank = draw(st.integers(1, 4))
    dims = [draw(st.integers(1, 6)) for _ in range(rank - 1)] + [draw(st.one_of(H.channels, st.integers(1, 300)))]
    if kind == "same":
        a, b = dims, list(dims)
    elif kind == "channel":
        a, b = dims, [1] * (rank - 1) + [dims[-1]]
        b = b[draw(st.integers(0, rank - 1)):]             # [1,1,1,C] or [C] ...
    elif kind == "scalar":
        a, b = dims, draw(st.sampled_from([[], [1], [1] * rank]))
    else:
        a = [d if draw(st.booleans()) else 1 for d in dims]
        b = [d if draw(st.booleans()) else 1 for d in dims]
        b = b[draw(st.integers(0, rank)):]
    if draw(st.booleans()):
        a, b = b, a
    return tuple(a), tuple(b)


def quantized_inputs(draw, a_shape, b_shape):
    rng = np.random.default_rng(draw(H.seeds))
    a = H.int8_array(rng, a_shape, draw(H.data_kinds))
    b = H.int8_array(rng, b_shape, draw(H.data_kinds))
    constant = draw(st.sampled_from([None, None, "a", "b"]))
    return a, b, constant


@st.composite
def add_cases(draw):
    a_shape, b_shape = draw(broadcast_shapes())
    a, b, constant = quantized_inputs(draw, a_shape, b_shape)
    y_scale = draw(H.log_uniform(-10, 2))
    ra = draw(st.floats(-10, 7.99))
    rb = draw(st.one_of(st.floats(-10, 7.99), st.floats(-16, -10), st.just(ra)))
    a_scale, b_scale = H.f32(y_scale * 2.0 ** ra), H.f32(y_scale * 2.0 ** rb)
    assume(ref.add_kernel(a_scale, b_scale, y_scale) is not None)
    return dict(a=a, a_scale=a_scale, a_zp=draw(H.zero_points), b=b, b_scale=b_scale, b_zp=draw(H.zero_points),
                y_scale=y_scale, y_zp=draw(H.zero_points), activation=draw(st.sampled_from(H.ACTIVATIONS)),
                constant=constant)


@st.composite
def mul_cases(draw):
    a_shape, b_shape = draw(broadcast_shapes())
    a, b, constant = quantized_inputs(draw, a_shape, b_shape)
    a_scale, b_scale = draw(H.log_uniform(-10, 2)), draw(H.log_uniform(-10, 2))
    # (a - zp) * (b - zp) is typically ~ +-75 * 75: put that around +-40 quanta, times a factor.
    y_scale = H.f32(a_scale * b_scale * 75.0 * 75.0 / 40.0 * 2.0 ** draw(st.floats(-6, 4)))
    activation = draw(st.sampled_from(H.ACTIVATIONS))
    a_scale, y_scale = H.fit_activation(draw, activation, a_scale, y_scale)
    return dict(a=a, a_scale=a_scale, a_zp=draw(H.zero_points), b=b, b_scale=b_scale, b_zp=draw(H.zero_points),
                y_scale=y_scale, y_zp=draw(H.zero_points), activation=activation, constant=constant)


def check(variant, op_type, case):
    args = {k: v for k, v in case.items() if k != "constant"}
    expected = (ref.add if op_type == "ADD" else ref.mul)(**args)
    got = H.binary(variant, op_type, constant=case["constant"], **args)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(200))
@given(case=add_cases())
def test_add_broadcast_matches_reference(variant, case):
    check(variant, "ADD", case)


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(200))
@given(case=mul_cases())
def test_mul_matches_reference(variant, case):
    check(variant, "MUL", case)
    if case["activation"] == "NONE":  # the fp32 form is within one quantum of the real product
        args = {k: v for k, v in case.items() if k != "constant"}
        assert np.abs(ref.mul(**args).astype(np.int32) - ref.mul_float(**args)).max(initial=0) <= 1


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_add_simd_and_64_bit_paths(variant):
    """Every int8 pair, same shape (the SIMD loop in the SIMD modules): scale ratios whose sums fit in
    int32 (SIMD path) and ratios near 2**-10 where they do not (the 64-bit scalar path)."""
    a, b = np.meshgrid(np.arange(-128, 128, dtype=np.int8), np.arange(-128, 128, dtype=np.int8))
    a, b = a.reshape(1, 16, 64, 64), b.reshape(1, 16, 64, 64)
    small = H.f32(1.5 * 2.0 ** -10)
    for a_scale, a_zp, b_scale, b_zp, y_scale, y_zp in [
            (H.f32(0.2), -5, H.f32(0.31), 12, H.f32(0.37), -3), (small, -128, small, -128, 1.0, 0),
            (H.f32(3.0), 127, H.f32(200.0), -128, 1.0, 5)]:
        case = dict(a=a, a_scale=a_scale, a_zp=a_zp, b=b, b_scale=b_scale, b_zp=b_zp, y_scale=y_scale, y_zp=y_zp,
                    activation="NONE", constant=None)
        check(variant, "ADD", case)


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_mul_every_pair_and_channel_scale(variant):
    """Every int8 pair (SIMD loop, extreme products), then the [1,H,W,C] x [1,1,1,C] pattern of
    squeeze-excite blocks with a constant per-channel input, then x * scalar constant."""
    a, b = np.meshgrid(np.arange(-128, 128, dtype=np.int8), np.arange(-128, 128, dtype=np.int8))
    for zps in ((0, 0, 0), (-128, 127, 3), (127, -128, -128)):
        check(variant, "MUL", dict(a=a, a_scale=H.f32(0.02), a_zp=zps[0], b=b, b_scale=H.f32(0.5), b_zp=zps[1],
                                   y_scale=H.f32(6.0), y_zp=zps[2], activation="NONE", constant=None))
    rng = np.random.default_rng(5)
    x = rng.integers(-128, 128, (1, 7, 5, 67), dtype=np.int8)
    s = rng.integers(-128, 128, (1, 1, 1, 67), dtype=np.int8)
    check(variant, "MUL", dict(a=x, a_scale=H.f32(0.1), a_zp=-7, b=s, b_scale=H.f32(0.004), b_zp=-128,
                               y_scale=H.f32(0.05), y_zp=4, activation="RELU", constant="b"))
    check(variant, "MUL", dict(a=np.array([3], np.int8), a_scale=H.f32(0.5), a_zp=0, b=x, b_scale=H.f32(0.1),
                               b_zp=-7, y_scale=H.f32(0.1), y_zp=0, activation="NONE", constant="a"))


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(100))
@given(case=mul_cases(), uint8=st.booleans())
def test_onnx_mul_matches_onnxruntime_reference(variant, case, uint8):
    """ONNX models' MUL as onnxruntime's QLinearMul computes it (reference.int8.mul_onnxruntime; tests/
    models/test_onnx_architectures.py's MobileNetV3-Small checks it against onnxruntime itself)."""
    args = {k: v for k, v in case.items() if k != "constant"}
    got = H.binary(variant, "MUL", constant=case["constant"], fmt="onnx", uint8=uint8, **args)
    np.testing.assert_array_equal(got, ref.mul_onnxruntime(**args, uint8=uint8))


@pytest.mark.parametrize("variant", H.VARIANTS)
@pytest.mark.parametrize("uint8", [False, True])
def test_onnx_mul_adds_the_zero_point_before_rounding(variant, uint8):
    """Every int8 pair with a squeeze-excite Mul's quantization from MobileNetV3-Small (quantize_static,
    int8): there the float32 sum product * ratio + zc rounds some values a hair below a half up to it
    (-5.4999999 - 110 -> -115.5 -> -116), which rint(product * ratio) + zc (TFLite's form) rounds
    the other way; an SIMD row, a tail, and a per-channel [1,1,1,C] operand."""
    a, b = np.meshgrid(np.arange(-128, 128, dtype=np.int8), np.arange(-128, 128, dtype=np.int8))
    case = dict(a=a, a_scale=H.f32(0.028327292), a_zp=-115, b=b, b_scale=H.f32(0.0035945869), b_zp=-128,
                y_scale=H.f32(0.01902142), y_zp=-110)
    expected = ref.mul_onnxruntime(**case, uint8=uint8)
    assert (expected != ref.mul(**case)).any() or uint8   # the two forms differ here (int8 domain)
    np.testing.assert_array_equal(H.binary(variant, "MUL", fmt="onnx", uint8=uint8, **case), expected)
    x, s = a[:, :67].reshape(1, 16, 16, 67), b[0, :67].reshape(1, 1, 1, 67)
    np.testing.assert_array_equal(H.binary(variant, "MUL", **{**case, "a": x, "b": s}, fmt="onnx", uint8=uint8),
                                  ref.mul_onnxruntime(**{**case, "a": x, "b": s}, uint8=uint8))


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_shapes_that_do_not_broadcast_are_unsupported(variant):
    g = H.GraphBuilder()
    a, b = g.input((1, 4, 4, 3), "int8", 0.1, 0), g.input((1, 4, 4, 2), "int8", 0.1, 0)
    y = g.output((1, 4, 4, 3), "int8", 0.1, 0)
    g.op("MUL", [a, b], [y], activation="NONE")
    with pytest.raises(qnnweb.UnsupportedModelError, match="do not broadcast"):
        H.run(g, variant, np.zeros((1, 4, 4, 3), np.int8), np.zeros((1, 4, 4, 2), np.int8))


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_large_broadcasts_split_across_threads(variant):
    """Outputs large enough to be split into tasks on several threads (H.run compares with 2 or 3
    threads), with rows that are not a multiple of the task size: a task starts and ends mid-row, and
    broadcasts along the row (stride 0) or across rows."""
    rng = np.random.default_rng(11)
    for a_shape, b_shape in [((1, 9, 31, 67), (1, 1, 1, 67)), ((1, 9, 31, 67), (1, 9, 31, 1)),
                             ((2, 5, 13, 129), (2, 5, 13, 129)), ((1, 1, 1, 1), (1, 19, 23, 41))]:
        a, b = rng.integers(-128, 128, a_shape, dtype=np.int8), rng.integers(-128, 128, b_shape, dtype=np.int8)
        check(variant, "ADD", dict(a=a, a_scale=H.f32(0.05), a_zp=3, b=b, b_scale=H.f32(0.07), b_zp=-9,
                                   y_scale=H.f32(0.09), y_zp=1, activation="NONE", constant=None))
        check(variant, "MUL", dict(a=a, a_scale=H.f32(0.05), a_zp=3, b=b, b_scale=H.f32(0.07), b_zp=-9,
                                   y_scale=H.f32(0.2), y_zp=1, activation="RELU", constant=None))


@st.composite
def maximum_cases(draw):
    a_shape, b_shape = draw(broadcast_shapes())
    a, b, constant = quantized_inputs(draw, a_shape, b_shape)
    # the stored values are compared whatever the scales (LiteRT's kernel): unequal ones included
    scales = [draw(H.log_uniform(-8, 2)) for _ in range(3)]
    zero_points = [draw(H.zero_points) for _ in range(3)]
    return dict(a=a, a_scale=scales[0], a_zp=zero_points[0], b=b, b_scale=scales[1], b_zp=zero_points[1],
                y_scale=scales[2], y_zp=zero_points[2], constant=constant)


@pytest.mark.parametrize("op_type", ["MAXIMUM", "MINIMUM"])
@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(100))
@given(case=maximum_cases())
def test_maximum_and_minimum_match_numpy(variant, op_type, case):
    expected = (np.maximum if op_type == "MAXIMUM" else np.minimum)(case["a"], case["b"])
    got = H.binary(variant, op_type, **case)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(80))
@given(case=mul_cases())
def test_onnx_sub_table_matches_float32_reference(variant, case):
    """ONNX SUB (the lut2d record): onnxruntime's float32 Sub of the dequantized operands, quantized with
    float32 division and rounding half to even, broadcasting either way, a constant on either side."""
    f32 = np.float32
    a, b = case["a"].astype(np.float32), case["b"].astype(np.float32)
    fa = f32(case["a_scale"]) * (a - f32(case["a_zp"]))
    fb = f32(case["b_scale"]) * (b - f32(case["b_zp"]))
    q = np.clip((fa - fb) / f32(case["y_scale"]), -128 - case["y_zp"], 127 - case["y_zp"])
    expected = (np.rint(q) + case["y_zp"]).astype(np.int8)
    args = {k: v for k, v in case.items() if k not in ("constant", "activation")}
    got = H.binary(variant, "SUB", constant=case["constant"], fmt="onnx", **args)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(60))
@given(case=mul_cases())
def test_onnx_div_table_matches_float32_reference(variant, case):
    """ONNX DIV of two activations (the lut2d record): numpy's float32 division of the dequantized operands
    (IEEE: x / 0 an infinity, 0 / 0 NaN), quantized as MLAS's QuantizeLinear (divide, max with the low
    bound, which NaN gives, min with the high one, round half to even)."""
    f32 = np.float32
    a, b = case["a"].astype(np.float32), case["b"].astype(np.float32)
    fa = f32(case["a_scale"]) * (a - f32(case["a_zp"]))
    fb = f32(case["b_scale"]) * (b - f32(case["b_zp"]))
    with np.errstate(divide="ignore", invalid="ignore"):
        q = (fa / fb) / f32(case["y_scale"])
    lo, hi = f32(-128 - case["y_zp"]), f32(127 - case["y_zp"])
    q = np.minimum(np.where(q >= lo, q, lo), hi)
    expected = (np.rint(q) + case["y_zp"]).astype(np.int8)
    args = {k: v for k, v in case.items() if k not in ("constant", "activation")}
    got = H.binary(variant, "DIV", constant=case["constant"], fmt="onnx", **args)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("op_type", ["SUB", "DIV", "MAXIMUM", "MINIMUM"])
@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(30))
@given(case=mul_cases())
def test_onnx_float_binary_with_float_output_matches_float32(variant, op_type, case):
    """ONNX's float binary ops whose float32 result is the model's output (the lut2d record's float32
    table): the op on the dequantized operands in float32, bit for bit (infinities and NaN included)."""
    f32 = np.float32
    fa = f32(case["a_scale"]) * (case["a"].astype(np.float32) - f32(case["a_zp"]))
    fb = f32(case["b_scale"]) * (case["b"].astype(np.float32) - f32(case["b_zp"]))
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = {"SUB": np.subtract, "DIV": np.divide, "MAXIMUM": np.maximum, "MINIMUM": np.minimum}[op_type](fa, fb)
    args = {k: v for k, v in case.items() if k not in ("constant", "activation")}
    got = H.binary(variant, op_type, constant=case["constant"], fmt="onnx", float_output=True, **args)
    np.testing.assert_array_equal(got, expected)


F32_FUNCTIONS = {"ADD": np.add, "SUB": np.subtract, "MUL": np.multiply, "DIV": np.divide}


def float32_binary(variant, op_type, a, b, constant, activation, fmt):
    g = H.GraphBuilder()
    inputs, feeds = [], []
    for name, x in (("a", a), ("b", b)):
        if constant == name:
            inputs.append(g.constant(x, "float32"))
        else:
            inputs.append(g.input(x.shape, "float32"))
            feeds.append(x)
    yi = g.output(np.broadcast_shapes(a.shape, b.shape), "float32")
    g.op(op_type, inputs, [yi], activation=activation)
    return H.run(g, variant, *feeds, fmt=fmt)[0]


@pytest.mark.parametrize("op_type", list(F32_FUNCTIONS))
@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(40))
@given(shapes=broadcast_shapes(), seed=H.seeds, constant=st.sampled_from([None, "a", "b"]),
       activation=st.sampled_from(["NONE", "NONE", "RELU", "RELU6", "RELU_N1_TO_1"]),
       specials=st.booleans(), fmt=st.sampled_from(["onnx", "tflite"]))
def test_float32_binary_matches_numpy(variant, op_type, shapes, seed, constant, activation, specials, fmt):
    """Each element one IEEE float32 operation, the first input first (a constant on either side: x - c,
    c - x, c / x), the fused activation as XNNPACK's clamp; signed zeros, infinities, NaN and subnormals
    as numpy's float32 arithmetic gives them."""
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(shapes[0]) * 3).astype(np.float32)
    b = (rng.standard_normal(shapes[1]) * 3).astype(np.float32)
    if specials:
        pool = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -3e38, 3e38], np.float32)
        for x in (a, b):
            flat = x.reshape(-1)
            chosen = rng.random(flat.size) < 0.3
            flat[chosen] = rng.choice(pool, size=int(chosen.sum()))
    if fmt == "onnx":
        activation = "NONE"
    with np.errstate(all="ignore"):
        expected = F32_FUNCTIONS[op_type](a, b)
    lo, hi = {"NONE": (None, None), "RELU": (0.0, None), "RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0)}[activation]
    if lo is not None:
        expected = np.where(expected < np.float32(lo), np.float32(lo), expected)
        hi = np.finfo(np.float32).max if hi is None else hi
        expected = np.where(np.float32(hi) < expected, np.float32(hi), expected)
    got = float32_binary(variant, op_type, a, b, constant, activation, fmt)
    assert got.dtype == np.float32 and got.shape == expected.shape
    # bit for bit (-0.0 too), but any NaN for a NaN: WebAssembly leaves a NaN's sign and payload open
    nan = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan].view(np.int32), expected[~nan].astype(np.float32).view(np.int32))
