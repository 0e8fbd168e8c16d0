"""From a torch model to a quantized TFLite file and what the fixtures record of it: litert-torch's conversion,
ai-edge-quantizer's quantization, ai-edge-litert's outputs and op list, a deterministic .npz."""

from __future__ import annotations

import collections
from pathlib import Path

from models.converters.quantizer_recipes import OTHER_MODES, make_recipe, with_float_edges

def convert(model, nchw_shape) -> bytes:
    import litert_torch
    import torch

    n, c, h, w = nchw_shape
    sample = torch.zeros(n, h, w, c)
    with torch.no_grad():
        edge = litert_torch.convert(litert_torch.to_channel_last_io(model.eval(), args=[0]), (sample,))
    return bytes(edge.model_content())


def quantize(float_model: bytes, recipe_name: str, calibration: list, whole_range: bool = False,
             float_edges: bool = False) -> bytes:
    """calibration: NHWC float32 arrays [1, H, W, C]. recipe_name: one of RECIPES, or of OTHER_MODES (a recipe
    of ai-edge-quantizer's recipe.py by its name). ai-edge-quantizer keeps a moving average of each tensor's
    range over the samples; whole_range: each tensor's smallest minimum and largest maximum over them instead
    (one sample calibrated at a time, the ranges merged by its qsv_utils.min_max_update): a one-value output,
    a face score, then spans faces and non-faces, where its average range lies on one side of 0. float_edges: the
    model's inputs and outputs left float32 (quantizer_recipes.with_float_edges)."""
    from ai_edge_litert.interpreter import Interpreter
    from ai_edge_quantizer import quantizer, recipe
    from ai_edge_quantizer.utils import qsv_utils

    signatures = Interpreter(model_content=float_model).get_signature_list()
    (signature, io), = signatures.items()
    (input_name,) = io["inputs"]
    chosen = getattr(recipe, recipe_name)() if recipe_name in OTHER_MODES else make_recipe(recipe_name)
    if float_edges:
        chosen = with_float_edges(chosen)
    q = quantizer.Quantizer(bytearray(float_model), chosen)
    if not whole_range:
        result = q.calibrate({signature: [{input_name: x} for x in calibration]}, num_threads=1)
    else:
        result = {}
        for x in calibration:
            one = q.calibrate({signature: [{input_name: x}]}, num_threads=1)
            result = {name: qsv_utils.min_max_update(result.get(name, {}), qsv) for name, qsv in one.items()}
    return bytes(q.quantize(result, enable_progress_report=False).quantized_model)


def quantize_input(x, detail):
    import numpy as np

    if detail["dtype"] == np.float32:
        return x.astype(np.float32)
    scale, zero_point = detail["quantization"]
    info = np.iinfo(detail["dtype"])
    return np.clip(np.round(x / scale) + zero_point, info.min, info.max).astype(detail["dtype"])


def reference(path: Path, float_inputs: list) -> dict:
    """Arrays for the .npz: the model's inputs and ai-edge-litert's (default kernels) outputs."""
    import numpy as np
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=str(path), num_threads=1)
    interpreter.allocate_tensors()
    (inp,) = interpreter.get_input_details()
    outs = interpreter.get_output_details()
    xs, ys = [], [[] for _ in outs]
    for x in float_inputs:
        q = quantize_input(x, inp)
        interpreter.set_tensor(inp["index"], q)
        interpreter.invoke()
        xs.append(q)
        for i, o in enumerate(outs):
            ys[i].append(interpreter.get_tensor(o["index"]).copy())
    arrays = {"input_0": np.stack(xs)}
    if inp["dtype"] != np.float32 and float_inputs[0].size <= 4096:
        arrays["input_0_float"] = np.stack(float_inputs).astype(np.float32)
    for i, y in enumerate(ys):
        arrays[f"output_{i}"] = np.stack(y)
    return arrays


def describe(path: Path) -> dict:
    """Ops (by the builtin resolver, no delegate), float ops, input/output tensors."""
    import numpy as np
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    interpreter = Interpreter(model_path=str(path), num_threads=1,
                              experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    interpreter.allocate_tensors()
    tensors = {t["index"]: t for t in interpreter.get_tensor_details()}
    ops, float_ops = collections.Counter(), []
    for op in interpreter._get_ops_details():
        ops[op["op_name"]] += 1
        if op["op_name"] not in ("QUANTIZE", "DEQUANTIZE") and any(
                tensors[t]["dtype"] == np.float32 for t in op["outputs"] if t >= 0):
            float_ops.append(f"{op['index']} {op['op_name']}")

    def io(details):
        return [{"name": d["name"], "shape": [int(s) for s in d["shape"]], "dtype": np.dtype(d["dtype"]).name,
                 "scale": float(d["quantization"][0]), "zero_point": int(d["quantization"][1])} for d in details]

    return {"ops": dict(sorted(ops.items())), "float_ops": float_ops,
            "inputs": io(interpreter.get_input_details()), "outputs": io(interpreter.get_output_details())}


def npz_bytes(arrays: dict) -> bytes:
    """A deterministic .npz (np.savez_compressed stamps the zip entries with the current time)."""
    import io
    import zipfile

    import numpy as np

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for key in sorted(arrays):
            entry = io.BytesIO()
            np.lib.format.write_array(entry, np.ascontiguousarray(arrays[key]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, entry.getvalue())
    return buf.getvalue()
