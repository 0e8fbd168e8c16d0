"""TFLite_Detection_PostProcess (the custom op TF Object Detection API SSD models end in; the IR's
DETECTION_POSTPROCESS): one detection_postprocess record over float32 box encodings and class scores
(the importer puts a DEQUANTIZE before quantized ones, as TFLite's kernel dequantizes them itself) and
float32 anchors. The kernel follows TFLite's arithmetic (wasm_kernels/src/operators/detection_postprocess.c).
"""

from .registry import Step, Unsupported, lowering

# TFLite's defaults for options a model may leave out (detection_postprocess.cc: Init)
DEFAULT_DETECTIONS_PER_CLASS = 100
MAX_SLOTS = 1 << 16


def _float_tensor(graph, index, role, rank):
    t = graph.tensors[index]
    if t.dtype == "uint8" and role == "box encodings":
        raise Unsupported(f"{role} '{t.name}' are uint8 but the anchors are not: TFLite's kernel reads the anchors "
                          "as uint8 then (give the anchors uint8 quantization too, or float32 box encodings)")
    if t.dtype != "float32":
        raise Unsupported(f"{role} '{t.name}' is {t.dtype}: expected float32 (quantized ones are dequantized on "
                          "import)")
    if len(t.shape) != rank:
        raise Unsupported(f"{role} '{t.name}' has shape {list(t.shape)}: expected rank {rank}")
    return t


@lowering("DETECTION_POSTPROCESS")
def lower_detection_postprocess(graph, op):
    o = op.options
    boxes = _float_tensor(graph, op.inputs[0], "box encodings", 3)
    scores = _float_tensor(graph, op.inputs[1], "class predictions", 3)
    anchors = _float_tensor(graph, op.inputs[2], "anchors", 2)
    if not anchors.is_constant:
        raise Unsupported(f"anchors '{anchors.name}' must be a constant")
    n = boxes.shape[1]
    if boxes.shape[0] != 1 or scores.shape[0] != 1:
        raise Unsupported("only a batch of 1 (as TFLite's kernel)")
    if boxes.shape[2] < 4 or scores.shape[1] != n or list(anchors.shape) != [n, 4]:
        raise Unsupported(f"box encodings {list(boxes.shape)}, class predictions {list(scores.shape)} and anchors "
                          f"{list(anchors.shape)} do not describe the same anchors (boxes [1, N, >= 4], "
                          "predictions [1, N, classes (+ 1)], anchors [N, 4])")
    try:
        classes = int(o["num_classes"])
        max_detections = int(o["max_detections"])
        per_detection = int(o["max_classes_per_detection"])
        per_class = int(o.get("detections_per_class", DEFAULT_DETECTIONS_PER_CLASS))
        regular = bool(o.get("use_regular_nms", False))
        fields = {name: float(o[key]) for name, key in (
            ("score_threshold", "nms_score_threshold"), ("iou_threshold", "nms_iou_threshold"),
            ("y_scale", "y_scale"), ("x_scale", "x_scale"), ("h_scale", "h_scale"), ("w_scale", "w_scale"))}
    except (KeyError, TypeError, ValueError) as e:
        raise Unsupported(f"options {sorted(o)}: missing or not a number ({e})") from None
    with_background = scores.shape[2]
    if not (0 < classes <= with_background <= classes + 1):
        raise Unsupported(f"num_classes {classes} with class predictions of {with_background} columns (classes, "
                          "or classes + a background column)")
    if min(max_detections, per_detection, per_class) < 1 or max_detections * per_detection > MAX_SLOTS:
        raise Unsupported(f"max_detections {max_detections}, max_classes_per_detection {per_detection}, "
                          f"detections_per_class {per_class}: each must be >= 1, and at most {MAX_SLOTS} slots")
    if not 0.0 < fields["iou_threshold"] <= 1.0:
        raise Unsupported(f"nms_iou_threshold {fields['iou_threshold']} outside (0, 1] (TFLite refuses it too)")
    slots = max_detections * per_detection
    expected = [[1, slots, 4], [1, slots], [1, slots], [1]]
    for k, (index, shape) in enumerate(zip(op.outputs, expected)):
        t = graph.tensors[index]
        if t.dtype != "float32" or list(t.shape) != shape:
            raise Unsupported(f"output {k} '{t.name}' is {t.dtype} {list(t.shape)}: expected float32 {shape}")
    fields.update(
        boxes=op.inputs[0], scores=op.inputs[1], output_boxes=op.outputs[0], output_classes=op.outputs[1],
        output_scores=op.outputs[2], output_count=op.outputs[3], anchor_count=n, box_stride=boxes.shape[2],
        classes_with_background=with_background, classes=classes, max_detections=max_detections,
        max_classes_per_detection=per_detection, detections_per_class=per_class, regular_nms=int(regular))
    return [Step("detection_postprocess", fields, {"anchors": bytes(anchors.data)})]
