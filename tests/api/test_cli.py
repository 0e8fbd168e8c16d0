"""The ``qnnweb`` command (qnnweb.cli), called as ``python -m qnnweb`` on this checkout: every
subcommand on real models and photos, and its exit codes: 0 done, 1 usage, 2 a bad model or file."""

import importlib
import json
import os
import shutil
import subprocess
import sys
import tomllib

import numpy as np
import pytest
from built_files import REPO
from qnnweb_dev.tflite_builder import set_opcode
from tflite.BuiltinOperator import BuiltinOperator

import qnnweb
import qnnweb.cli
from qnnweb.compiled import CompiledModel

COMMANDS = ["compile", "info", "run", "profile", "bench", "check"]


def qnnweb_command(*args, prelude=None):
    """``python -m qnnweb ARGS`` with this checkout's package (``prelude``: Python run first)."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "py_frontend")}
    command = [sys.executable, "-m", "qnnweb", *map(str, args)]
    if prelude:
        command = [sys.executable, "-c", f"{prelude}\nimport sys\nfrom qnnweb.cli import main\nsys.exit(main())",
                   *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)


def assert_one_line_error(result, code, *words):
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for word in words:
        assert word in lines[0], lines[0]


def test_console_script_is_declared_and_resolves_to_main():
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, function = scripts["qnnweb"].partition(":")
    assert getattr(importlib.import_module(module), function) is qnnweb.cli.main


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command):
    result = qnnweb_command(command, "--help")
    assert result.returncode == 0 and f"usage: qnnweb {command}" in result.stdout and "MODEL" in result.stdout


def test_version_is_pyprojects():
    result = qnnweb_command("--version")
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert result.returncode == 0 and result.stdout.strip() == f"qnnweb {version}" == f"qnnweb {qnnweb.__version__}"


def test_compile_writes_model_qnn_with_the_sidecar_inside(models, tmp_path):
    for name in ("visual_wake_words.tflite", "visual_wake_words.json"):
        shutil.copy(models(name), tmp_path / name)
    result = qnnweb_command("compile", tmp_path / "visual_wake_words.tflite")
    assert result.returncode == 0, result.stderr
    compiled = (tmp_path / "visual_wake_words.tflite.qnn").read_bytes()
    sidecar = json.loads(models("visual_wake_words.json").read_text())
    assert CompiledModel.from_bytes(compiled).metadata["labels"] == sidecar["labels"] == ["person", "non_person"]
    x = np.random.default_rng(0).uniform(0, 255, (1, 96, 96, 3)).astype(np.float32)
    (from_qnn,), (from_tflite,) = qnnweb.load(compiled).run(x), qnnweb.load(models("visual_wake_words.tflite")).run(x)
    np.testing.assert_array_equal(from_qnn, from_tflite)


def test_compile_to_a_named_file_with_given_metadata(models, tmp_path):
    (tmp_path / "meta.json").write_text(json.dumps({"labels": ["a", "b"], "task": "classification"}))
    out = tmp_path / "out.qnn"
    result = qnnweb_command("compile", models("visual_wake_words.tflite"), "-o", out, "--metadata", tmp_path / "meta.json")
    assert result.returncode == 0 and str(out) in result.stdout
    assert CompiledModel.from_bytes(out.read_bytes()).metadata == {"labels": ["a", "b"], "task": "classification"}


def test_info_lists_inputs_outputs_ops_by_kind_and_the_kernels_picked(models):
    result = qnnweb_command("info", models("visual_wake_words.tflite"), "--variant", "scalar")
    assert result.returncode == 0, result.stderr
    assert "input_1: float32 [1, 96, 96, 3]" in result.stdout and "Identity: float32 [1, 2]" in result.stdout
    assert "ops: 33" in result.stdout and "CONV_2D: 14" in result.stdout and "DEPTHWISE_CONV_2D: 13" in result.stdout
    assert "supported: yes\nvariant: scalar (wasmtime), 1 thread(s)\n" in result.stdout
    assert "gemm kernel: qs8-igemm-2x4c1-scalar" in result.stdout and "arena: 138240 bytes" in result.stdout


def test_info_of_an_unsupported_model_prints_it_and_its_problems(models, tmp_path):
    data = bytearray(models("visual_wake_words.tflite").read_bytes())
    set_opcode(data, BuiltinOperator.AVERAGE_POOL_2D, BuiltinOperator.L2_POOL_2D)
    set_opcode(data, BuiltinOperator.SOFTMAX, BuiltinOperator.LOG)
    path = tmp_path / "unsupported.tflite"
    path.write_bytes(bytes(data))
    result = qnnweb_command("info", path)
    assert "input_1: float32 [1, 96, 96, 3]" in result.stdout and "L2_POOL_2D: 1" in result.stdout
    assert "supported: no" in result.stdout and "op 28 L2_POOL_2D: operator not supported" in result.stdout
    assert_one_line_error(result, 2, "2 unsupported", "op 28 L2_POOL_2D", "op 31 LOG")
    assert_one_line_error(qnnweb_command("run", path), 2, "op 28 L2_POOL_2D", "op 31 LOG")


@pytest.mark.parametrize("command", ["info", "compile", "run"])
def test_a_corrupt_model_exits_2_with_one_line(command, tmp_path):
    path = tmp_path / "garbage.tflite"
    path.write_bytes(b"\x00\x01garbage")
    assert_one_line_error(qnnweb_command(command, path), 2, str(path), "not a model qnnweb can read")


def test_a_missing_file_exits_2(tmp_path):
    assert_one_line_error(qnnweb_command("info", tmp_path / "nope.onnx"), 2, "nope.onnx", "No such file")


@pytest.mark.parametrize("args", [["info", "MODEL", "--bogus"], ["frobnicate", "MODEL"], [],
                                  ["run", "MODEL", "--threads", "0"], ["compile", "MODEL", "--input-shape", "input"]])
def test_usage_errors_exit_1(args, models):
    args = [models("visual_wake_words.tflite") if a == "MODEL" else a for a in args]
    result = qnnweb_command(*args)
    assert result.returncode == 1 and "error:" in result.stderr and "Traceback" not in result.stderr, result.stderr


def test_run_a_photo_shows_labelled_top_classes(models, samples):
    result = qnnweb_command("run", models("efficientnet_lite0_u8s8.onnx"), "--input", samples("coffee.png"), "--top", "3")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "inputs from" in lines[0] and lines[1] == "logits: float32 [1, 1000]"
    assert lines[2].split()[1:] == ["967", "espresso"] and len(lines) == 5   # softmax of the logits: a probability
    assert 0.5 < float(lines[2].split()[0]) <= 1.0


def test_run_tflite_photo_with_the_sidecar_given(models, samples, tmp_path):
    model = shutil.copy(models("visual_wake_words.tflite"), tmp_path / "vww.tflite")   # no sidecar beside it
    result = qnnweb_command("run", model, "--input", samples("grace_hopper.jpg"))
    assert result.returncode == 0 and "person" not in result.stdout   # no labels: values
    result = qnnweb_command("run", model, "--input", samples("grace_hopper.jpg"), "--metadata", models("visual_wake_words.json"))
    assert result.returncode == 0 and result.stdout.splitlines()[2].split()[1:] == ["0", "person"]


def test_run_npy_input_prints_the_outputs(models, tmp_path):
    x = np.random.default_rng(1).uniform(0, 255, (1, 96, 96, 3)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    model = shutil.copy(models("visual_wake_words.tflite"), tmp_path / "vww.tflite")
    result = qnnweb_command("run", model, "--input", tmp_path / "x.npy")
    (expected,) = qnnweb.load(model).run(x)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[2] == "  [" + ", ".join(f"{v:.6g}" for v in expected.flat) + "] (2 values)"
    np.save(tmp_path / "bad.npy", x.astype(np.int8))
    assert_one_line_error(qnnweb_command("run", model, "--input", tmp_path / "bad.npy"), 2, "int8", "float32")


def test_run_without_input_says_random_or_zeros(models):
    result = qnnweb_command("run", models("visual_wake_words.tflite"), "--variant", "scalar", "--threads", "2")
    assert result.returncode == 0 and "random inputs (seed 0" in result.stdout and "scalar, 2 thread(s)" in result.stdout
    result = qnnweb_command("run", models("visual_wake_words.tflite"), "--zeros", "--input-shape", "input_1=2,96,96,3")
    assert result.returncode == 0 and "zero inputs" in result.stdout and "Identity: float32 [2, 2]" in result.stdout


def test_profile_times_every_op(models):
    result = qnnweb_command("profile", models("visual_wake_words.tflite"), "--repeats", "1")
    assert result.returncode == 0, result.stderr
    rows = [line.split() for line in result.stdout.splitlines()[2:-1]]
    assert [int(r[0]) for r in rows] == list(range(len(rows))) and len(rows) >= 30
    first_conv = next(r for r in rows if "(first)" in r)
    assert first_conv[1:5] == ["conv2d", "3x3", "s2", "(first)"] and float(first_conv[-1]) > 0   # GMAC/s
    assert result.stdout.splitlines()[-1].startswith("total: ")
    result = qnnweb_command("profile", models("visual_wake_words.tflite"), "--repeats", "1", "--by-family")
    assert result.returncode == 0 and "dwconv2d 3x3 s1" in result.stdout


def test_bench_reports_median_and_p90(models):
    result = qnnweb_command("bench", models("visual_wake_words.tflite"), "--runs", "5", "--warmup", "1")
    assert result.returncode == 0, result.stderr
    last = result.stdout.splitlines()[-1].split()
    assert last[0] == "median" and last[3] == "p90" and 0 < float(last[1]) <= float(last[4])
    assert "over 5 runs after 1 warmup" in result.stdout and "wasmtime" in result.stdout


@pytest.mark.parametrize("model, photo", [("visual_wake_words.tflite", None), ("efficientnet_lite0_u8s8.onnx", "coffee.png")])
def test_check_is_bit_exact_with_the_reference(model, photo, models, samples):
    """ai-edge-litert for TFLite; onnxruntime for ONNX (this uint8 model as its int8 twin)."""
    args = ["--input", samples(photo)] if photo else []
    result = qnnweb_command("check", models(model), *args)
    assert result.returncode == 0, result.stderr
    assert "ai-edge-litert" in result.stdout if model.endswith(".tflite") else "onnxruntime" in result.stdout
    assert "max difference 0," in result.stdout and "100.00% bit-exact" in result.stdout


def test_check_without_the_reference_runtime_exits_1(models):
    block = "import sys; sys.modules['onnxruntime'] = None; sys.modules['ai_edge_litert'] = None"
    result = qnnweb_command("check", models("efficientnet_lite0_u8s8.onnx"), prelude=block)
    assert_one_line_error(result, 1, "needs onnxruntime", "pip install")
    result = qnnweb_command("check", models("visual_wake_words.tflite"), prelude=block)
    assert_one_line_error(result, 1, "needs ai-edge-litert")
