"""Reshape / Flatten / Squeeze, Identity, Constant, Concat, Softmax, Transpose, DepthToSpace and
SpaceToDepth. A Reshape or Transpose that moves a feature map's channels alone keeps it NHWC
(ShuffleNet's channel shuffle)."""


from .base import NCHW_TO_NHWC, Constant, Skip, Value, _attributes, _product, arity_problem
from .proto import tensor_bytes


def _moves_channels_only(perm):
    """Whether a Transpose by `perm` (of a feature map: N, the channel axes, H, W) keeps N, H and W."""
    rank = len(perm)
    return rank >= 4 and sorted(perm) == list(range(rank)) and perm[0] == 0 and \
        list(perm[-2:]) == [rank - 2, rank - 1]


class ShapeMixin:
    """Handlers mixed into OnnxImporter (state and helpers: base.ImporterBase)."""

    def _reshape_to(self, x_name, shape, out_names, channels_last=False):
        """int8 reshape of `x_name` to ONNX `shape`: shares memory with its input. `channels_last`
        (_channels_stay_last): the input is held channels-last and only its channels regroup, so the
        IR tensor is reshaped as it is held, and the output is held channels-last too."""
        index = self.values[x_name].index if channels_last else self._plain(x_name)
        t = self.tensors[index]
        if _product(shape) != t.size:
            raise Skip(f"cannot reshape {list(t.shape)} to {list(shape)}")
        held = (shape[0], *shape[-2:], *shape[1:-2]) if channels_last else shape
        out = self._tensor(out_names[0], held, t.dtype, t.scale, t.zero_point)
        self._op("RESHAPE", [index], [out])
        for name in out_names:
            self.values[name] = Value(out, channels_last)

    def _channels_stay_last(self, node, source, shape):
        """Whether `node` reshaping `source`, a feature map held channels-last, to ONNX `shape` only
        regroups its channels, N, H and W staying ([N, C, H, W] <-> [N, g, C/g, H, W]): then the IR
        tensor keeps its layout. A 5-D result only where the one node reading it is a Transpose of the
        channels alone (ShuffleNet's channel shuffle: that Transpose and the Reshape back are one strided
        copy in all, where ONNX's layout takes three), as other handlers take NHWC tensors as 4-D."""
        old = self._onnx_shape(source)
        if not self.values[source].nhwc or len(shape) not in (4, 5) or (shape[0], *shape[-2:]) != (old[0], *old[-2:]):
            return False
        if len(shape) == 4:
            return True
        reader = self._reader(node.output[0])
        try:
            return reader is not None and reader.op_type == "Transpose" and \
                _moves_channels_only(list(_attributes(reader).get("perm") or ()))
        except Skip:   # a malformed Transpose: its own handler reports it
            return False

    def _reader(self, name):
        """The one node that reads `name` (past a QuantizeLinear -> DequantizeLinear pair: QDQ form), or None."""
        node = self._only_reader(name)
        if node is not None and node.op_type == "QuantizeLinear":
            dequantize = self._only_reader(node.output[0])
            node = self._only_reader(dequantize.output[0]) if dequantize and dequantize.op_type == "DequantizeLinear" \
                else None
        return node

    def _only_reader(self, name):
        readers = self.consumers.get(name, [])
        if name in self.outputs or len(readers) != 1 or arity_problem(readers[0]) or readers[0].input[0] != name:
            return None
        return readers[0]

    def _requantize_to(self, x_name, out_names, params, activation="NONE"):
        """int8 `x_name` quantized again with `params`: onnxruntime's DequantizeLinear -> QuantizeLinear
        in float32 (a table, ops/unary.py), as where a value-preserving op runs in float between them,
        with the float Relu / Clip after it (`activation`) in the same table."""
        value = self.values[x_name]
        t = self.tensors[value.index]
        out = self._new_output(out_names, t.shape, params, value.nhwc)
        self._op("QUANTIZE", [value.index], [out], dequantize_quantize=True, activation=activation)

    def _shape_passthrough(self, node, shape_of):
        """Flatten/Reshape/Squeeze/Unsqueeze: on a dequantized int8 tensor, with the quantized output
        (QDQ) or the float output feeding only QuantizeLinear of the same parameters."""
        x = node.input[0]
        source = self._activation_input(x) if x in self.views else x
        if source not in self.values:
            raise Skip(f"input '{x}' is not available")
        shape = shape_of(self._onnx_shape(source))
        out = node.output[0]
        channels_last = self._channels_stay_last(node, source, shape)
        if x not in self.views:
            self._reshape_to(source, shape, [out], channels_last)
        elif all(c.op_type == "QuantizeLinear" for c in self.consumers[out]) and self.consumers[out] and out not in self.outputs:
            out_names, params, activation = self._quantized_output(node)
            t = self.tensors[self.values[source].index]
            if params[:2] != (t.scale, t.zero_point) or activation != "NONE":
                # reshaped in float (a Relu / Clip after it in float too), quantized again
                self._reshape_to(source, shape, [out + "/reshaped"], channels_last)
                self._requantize_to(out + "/reshaped", out_names, params, activation)
            else:
                self._reshape_to(source, shape, out_names, channels_last)
        else:  # the float result is used dequantized: reshape the int8 tensor and view that
            self._reshape_to(source, shape, [out + "/int8"], channels_last)
            self.views[out] = out + "/int8"

    def _op_Flatten(self, node, attrs):
        axis = attrs.get("axis", 1)

        def shape_of(shape):
            a = axis % len(shape) if shape else 0
            return (_product(shape[:a]), _product(shape[a:]))

        self._shape_passthrough(node, shape_of)

    def _op_Reshape(self, node, attrs):
        target = self._scalar_constant(node.input[1], "Reshape shape").values()

        def shape_of(shape):
            copies = [i for i, d in enumerate(target) if d == 0 and not attrs.get("allowzero", 0)]
            if copies and copies[-1] >= len(shape):  # a 0 copies the input's dimension at its position
                raise Skip(f"Reshape shape {list(target)}: the 0 at position {copies[-1]} copies a dimension "
                           f"the input {list(shape)} does not have")
            out = [shape[i] if i in copies else d for i, d in enumerate(target)]
            if out.count(-1) == 1:
                known = _product([d for d in out if d != -1])
                out[out.index(-1)] = _product(shape) // known if known else 0
            return tuple(out)

        self._shape_passthrough(node, shape_of)

    def _op_Squeeze(self, node, attrs):
        axes = attrs.get("axes") or (self._scalar_constant(node.input[1], "axes").values() if len(node.input) > 1 else None)
        self._shape_passthrough(node, lambda s: tuple(d for i, d in enumerate(s)
                                                      if not (d == 1 and (axes is None or i in [a % len(s) for a in axes]))))

    def _op_Identity(self, node, attrs):
        x = node.input[0]
        if x in self.views:
            self.views[node.output[0]] = self.views[x]
        elif x in self.values:
            self.values[node.output[0]] = self.values[x]
        elif x in self.constants:
            self.constants[node.output[0]] = self.constants[x]
        elif x in self.quantized_constants:
            self.quantized_constants[node.output[0]] = self.quantized_constants[x]
        else:
            raise Skip(f"input '{x}' is not available")

    _op_Dropout = _op_Identity

    def _op_Constant(self, node, attrs):
        value = attrs.get("value")
        if value is None or not hasattr(value, "t"):
            raise Skip("only Constant with a tensor 'value' is supported")
        dtype, shape, data = tensor_bytes(value.t)
        self.constants[node.output[0]] = Constant(node.output[0], dtype, shape, data)

    def _concat(self, node, axis, inputs, out_names, params):
        shapes = [self._onnx_shape(n) for n in inputs]
        rank = len(shapes[0])
        axis %= rank
        nhwc = rank == 4 and any(self.values[n].nhwc for n in inputs)
        indexes = [self._nhwc(n) if nhwc else self._plain(n) for n in inputs]
        out_shape = list(shapes[0])
        out_shape[axis] = sum(s[axis] for s in shapes)
        if nhwc:
            axis = NCHW_TO_NHWC.index(axis)
            out_shape = [out_shape[i] for i in NCHW_TO_NHWC]
        out = self._new_output(out_names, out_shape, params, nhwc)
        self._op("CONCATENATION", indexes, [out], axis=axis, activation="NONE")

    def _op_Concat(self, node, attrs):
        inputs = [self._activation_input(n) for n in node.input]
        out_names, params, activation = self._quantized_output(node)
        if activation != "NONE":
            raise Skip("Concat with a fused activation is not supported")
        self._concat(node, attrs.get("axis", 1), inputs, out_names, params)

    def _op_QLinearConcat(self, node, attrs):
        y_s, y_z = node.input[0], node.input[1]
        rest = list(node.input[2:])
        inputs = [self._qlinear_input_any(rest[i], rest[i + 1], rest[i + 2]) for i in range(0, len(rest), 3)]
        params = self._qparams(y_s, y_z, "QLinearConcat output")
        self._concat(node, attrs.get("axis", 1), inputs, [node.output[0]], params)

    def _qlinear_input_any(self, name, scale_name, zero_point_name):
        """Like _qlinear_input, but a differently quantized input stays as it is (Concat requantizes)."""
        t = self.tensors[self.values[name].index] if name in self.values else None
        if t is not None and t.dtype == "int8" and t.scale:
            return name
        return self._qlinear_input(name, scale_name, zero_point_name)

    def _softmax(self, x, axis, out_names, params):
        """SOFTMAX runs over the IR tensor's last dimension: an ONNX tensor's last axis, or the channels
        (axis 1) of a feature map, which are last in NHWC; any other axis is moved last and back."""
        shape = self._onnx_shape(x)
        if not shape or not -len(shape) <= axis < len(shape):
            raise Skip(f"axis {axis} for a tensor of shape {list(shape)}")
        axis %= len(shape)
        if self.values[x].nhwc and axis != 1:  # over another axis of a feature map: in ONNX's layout
            self.values[x + "/nchw"] = Value(self._plain(x))
            x = x + "/nchw"
        if axis != (1 if self.values[x].nhwc else len(shape) - 1):
            # over another axis: onnxruntime moves that axis last, takes the softmax of each row and moves it
            # back; so does qnnweb
            perm = [a for a in range(len(shape)) if a != axis] + [axis]
            rows = self._transpose(self.values[x].index, perm)
            soft = self._tensor(f"{out_names[0]}/axis_last", self.tensors[rows].shape, "int8", params[0], params[1])
            self._op("SOFTMAX", [rows], [soft], beta=1.0)
            out = self._new_output(out_names, list(shape), params, False)
            self._op("TRANSPOSE", [soft], [out], perm=[perm.index(a) for a in range(len(shape))])
            return
        self._unary("SOFTMAX", x, out_names, params, beta=1.0)

    def _op_Softmax(self, node, attrs):
        x = self._activation_input(node.input[0])
        shape = self._onnx_shape(x)
        if self.opsets.get("ai.onnx", 13) < 13 and len(shape) - attrs.get("axis", 1) % len(shape) != 1:
            raise Skip("Softmax before opset 13 flattens from its axis: only the last axis is supported")
        out_names, params, _ = self._quantized_output(node)
        self._softmax(x, attrs.get("axis", -1 if self.opsets.get("ai.onnx", 13) >= 13 else 1), out_names, params)

    def _op_QLinearSoftmax(self, node, attrs):
        """com.microsoft QLinearSoftmax(X, X_scale, X_zero_point, Y_scale, Y_zero_point), axis (-1)."""
        x = self._qlinear_input(node.input[0], node.input[1], node.input[2])
        params = self._qparams(node.input[3], node.input[4] if len(node.input) > 4 else "", "QLinearSoftmax output")
        self._softmax(x, attrs.get("axis", -1), [node.output[0]], params)

    def _op_Transpose(self, node, attrs):
        value = self.values.get(node.input[0])
        if value is not None and self.tensors[value.index].dtype == "float32" and \
                value.index not in self.graph_input_indices:
            # a float result on its way to the model's output (a float op's tail): moved in float32
            index = self._plain(node.input[0])
            shape = self.tensors[index].shape
            perm = attrs.get("perm") or list(reversed(range(len(shape))))
            out = self._tensor(node.output[0], [shape[p] for p in perm], "float32")
            self.values[node.output[0]] = Value(out)
            self._op("TRANSPOSE", [index], [out], perm=list(perm))
            return
        x = self._activation_input(node.input[0])
        perm = list(attrs.get("perm") or reversed(range(len(self._onnx_shape(x)))))
        channels_last = self._channels_alone(node, x, perm)
        if channels_last:   # the IR tensor [N, H, W, C...] as held: ONNX axis k (a channel axis) is its k + 2
            index, perm = self.values[x].index, [0, 1, 2, *(p + 2 for p in perm[1:-2])]
        else:
            index = self._plain(x)
        out_names, params, activation = self._outputs_like_input(node, x)
        t = self.tensors[index]
        same = params[:2] == (t.scale, t.zero_point) and activation == "NONE"
        moved = out_names if same else [f"{node.output[0]}/moved"]
        out = self._new_output(moved, [t.shape[p] for p in perm], self._params_of(x), channels_last)
        self._op("TRANSPOSE", [index], [out], perm=perm)
        if not same:   # moved in float, then quantized with other parameters, or a Relu / Clip between
            self._requantize_to(moved[0], out_names, params, activation)

    def _channels_alone(self, node, x, perm):
        """Whether Transpose `node` of `x`, held channels-last, permutes its channel axes alone (then it
        runs on the tensor as held). A 5-D result (_channels_stay_last) only where a Reshape reads it."""
        if not self.values[x].nhwc or len(perm) != len(self._onnx_shape(x)) or not _moves_channels_only(perm):
            return False
        if len(perm) == 4:
            return True
        reader = self._reader(node.output[0])
        return reader is not None and reader.op_type == "Reshape"

    def _op_DepthToSpace(self, node, attrs):
        self._block_move(node, "DEPTH_TO_SPACE", attrs.get("blocksize"), attrs.get("mode", "DCR"))

    def _op_SpaceToDepth(self, node, attrs):
        self._block_move(node, "SPACE_TO_DEPTH", attrs.get("blocksize"), "DCR")

    def _block_move(self, node, op_type, block, mode):
        """DepthToSpace / SpaceToDepth on the NHWC tensor: ONNX's DCR order (block row, block column,
        channel) is TFLite's, so one IR DEPTH_TO_SPACE / SPACE_TO_DEPTH; CRD (channel, block row, block
        column) first moves the channels into DCR order. QDQ with another output quantization: the
        values move in int8 and are quantized again (what onnxruntime does in float)."""
        if type(block) is not int or block < 1:
            raise Skip(f"blocksize {block!r}; expected a positive integer")
        if isinstance(mode, bytes):
            mode = mode.decode("utf-8", "replace")
        if mode not in ("DCR", "CRD"):
            raise Skip(f"mode {mode!r}; expected DCR or CRD")
        x = self._activation_input(node.input[0])
        index = self._nhwc(x)
        n, h, w, c = self.tensors[index].shape
        if op_type == "DEPTH_TO_SPACE":
            if c % (block * block):
                raise Skip(f"{c} channels are not a multiple of blocksize^2 = {block * block}")
            shape = [n, h * block, w * block, c // (block * block)]
            if mode == "CRD" and block > 1:  # channel c * b^2 + k -> k * C' + c
                rows = self._reshaped(index, [n * h * w, c // (block * block), block * block, 1], "/crd")
                index = self._reshaped(self._transpose(rows, [0, 2, 1, 3]), [n, h, w, c], "/dcr")
        else:
            if h % block or w % block:
                raise Skip(f"height {h} and width {w} must be multiples of blocksize {block}")
            shape = [n, h // block, w // block, c * block * block]
        self._moved_output(node, node.output[0], x, shape, True,
                           lambda out: self._op(op_type, [index], [out], block_size=block))
