"""Conv / QLinearConv (CONV_2D, DEPTHWISE_CONV_2D), ConvTranspose (TRANSPOSE_CONV) and Gemm / MatMul / QLinearMatMul / QGemm (FULLY_CONNECTED)."""


import struct

from .base import Skip, permuted_bytes


class ConvMixin:
    """Handlers mixed into OnnxImporter (state and helpers: base.ImporterBase)."""

    def _conv(self, node, attrs, x_name, w_index, bias_name, out_names, params, activation):
        x = self._nhwc(x_name)
        n, h, w_, c = self.tensors[x].shape
        weights = self.tensors[w_index]
        if len(weights.shape) != 4:
            raise Skip("only 2-D convolutions are supported")
        m, c_per_group, kh, kw = weights.shape
        group = attrs.get("group", 1)
        if not isinstance(group, int) or group < 1 or c_per_group * group != c or m % group != 0:
            raise Skip(f"group {group} does not fit {c} input channels and weights {list(weights.shape)}")
        # depthwise with a weight zero point runs as a grouped CONV_2D (the kernels that subtract
        # zw * sum(x - x_zp) are the IGEMM ones)
        symmetric = set(weights.zero_point) <= {0}
        op_type = "DEPTHWISE_CONV_2D" if group == c > 1 and c_per_group == 1 and symmetric else "CONV_2D"
        strides = attrs.get("strides", [1, 1])
        dilations = attrs.get("dilations", [1, 1])
        pads = self._pads(attrs, (h, w_), (kh, kw), strides, dilations)
        out_h = (h + pads[0] + pads[1] - ((kh - 1) * dilations[0] + 1)) // strides[0] + 1
        out_w = (w_ + pads[2] + pads[3] - ((kw - 1) * dilations[1] + 1)) // strides[1] + 1
        x_scale = self.tensors[x].scale[0]
        bias = self._bias(bias_name, x_scale, list(weights.scale), m, float_bias=node.op_type == "Conv")
        out = self._new_output(out_names, (n, out_h, out_w, m), params, True)
        inputs = [x, w_index] + ([bias] if bias >= 0 else [])
        self._op(op_type, inputs, [out], stride=tuple(strides), dilation=tuple(dilations), padding=pads,
                 activation=activation, weights_layout="OIHW")

    def _pads(self, attrs, size, kernel, strides, dilations):
        """[top, bottom, left, right] from ONNX pads / auto_pad."""
        auto_pad = attrs.get("auto_pad", "NOTSET")
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            out = []
            for i in range(2):
                effective = (kernel[i] - 1) * dilations[i] + 1
                total = max((-(-size[i] // strides[i]) - 1) * strides[i] + effective - size[i], 0)
                small, large = total // 2, total - total // 2
                out += [small, large] if auto_pad == "SAME_UPPER" else [large, small]
            return out
        if auto_pad == "VALID":
            return [0, 0, 0, 0]
        pads = attrs.get("pads", [0, 0, 0, 0])
        if len(pads) != 4 or min(pads) < 0:
            raise Skip(f"pads {pads} not supported")
        return [pads[0], pads[2], pads[1], pads[3]]

    def _op_Conv(self, node, attrs):
        x = self._activation_input(node.input[0])
        w = self._weights(node.input[1])
        out_names, params, activation = self._quantized_output(node)
        self._conv(node, attrs, x, w, node.input[2] if len(node.input) > 2 else "", out_names, params, activation)

    def _op_ConvTranspose(self, node, attrs):
        """QDQ ConvTranspose (any group and dilations, explicit pads and output_padding) as IR TRANSPOSE_CONV:
        weights [I, O / group, KH, KW] rearranged to TFLite's [O, KH, KW, I / group] (each group's output
        channels reading their group's input channels), the output size from ONNX's rule."""
        x_name = self._activation_input(node.input[0])
        w_index = self._weights(node.input[1])
        out_names, params, activation = self._quantized_output(node)
        x = self._nhwc(x_name)
        n, h, w_, c = self.tensors[x].shape
        weights = self.tensors[w_index]
        group = attrs.get("group", 1)
        if len(weights.shape) != 4 or weights.shape[0] != c or not isinstance(group, int) or group < 1 or c % group:
            raise Skip(f"weights {list(weights.shape)} and group {group} do not fit {c} input channels")
        dilations = list(attrs.get("dilations", [1, 1]))
        if len(dilations) != 2 or min(dilations) < 1:
            raise Skip(f"dilations {dilations}")
        if "output_shape" in attrs or attrs.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
            raise Skip("ConvTranspose with output_shape or auto_pad SAME is not supported (give pads)")
        _, group_oc, kh, kw = weights.shape
        oc = group_oc * group
        strides = list(attrs.get("strides", [1, 1]))
        top, bottom, left, right = self._pads(attrs, (h, w_), (kh, kw), strides, dilations)
        extra = list(attrs.get("output_padding", [0, 0]))
        if len(extra) != 2 or not all(0 <= e < max(s, d) for e, s, d in zip(extra, strides, dilations)):
            raise Skip(f"output_padding {extra} must be below the strides {strides} or dilations {dilations}")
        out_h = strides[0] * (h - 1) + extra[0] + (kh - 1) * dilations[0] + 1 - top - bottom
        out_w = strides[1] * (w_ - 1) + extra[1] + (kw - 1) * dilations[1] + 1 - left - right
        scales = list(weights.scale)
        if group == 1:
            ohwi = self._transpose(w_index, (1, 2, 3, 0))
        else:   # [group, I / group, O / group, KH, KW] -> [group, O / group, KH, KW, I / group]
            if len(scales) not in (1, group_oc) or (len(scales) > 1 and weights.quantized_dimension != 1):
                raise Skip(f"grouped weights quantized along axis {weights.quantized_dimension} with {len(scales)} "
                           f"scales (expected one, or one per output channel of a group along axis 1)")
            if len(scales) > 1:   # the same scale for a group-local channel in every group
                scales *= group
            zero_points = list(weights.zero_point) * (group if len(weights.zero_point) > 1 else 1)
            grouped = (group, c // group, group_oc, kh, kw)
            data = permuted_bytes(weights.data, grouped, (0, 2, 3, 4, 1), 1)
            ohwi = self._tensor(weights.name + "/grouped", (oc, kh, kw, c // group), weights.dtype, scales,
                                zero_points, data)
        # a float bias (QuantizeBias=False) rounded as a Conv's: onnxruntime adds it to its float32 ConvTranspose
        # (the whole op float there: within one quantum)
        bias = self._bias(node.input[2] if len(node.input) > 2 else "", self.tensors[x].scale[0], scales, oc,
                          float_bias=True)
        out = self._new_output(out_names, (n, out_h, out_w, oc), params, True)
        shape = self._tensor(f"{node.output[0]}/output_shape", [4], "int32",
                             data=struct.pack("<4i", n, out_h, out_w, oc))
        # padding: where the output starts inside the full transposed convolution (top, left); the
        # output shape fixes the rest (bottom / right as ONNX gives them, output_padding aside)
        options = dict(stride=tuple(strides), padding=[top, bottom, left, right], activation=activation)
        if group > 1 or dilations != [1, 1]:    # (TFLite's TRANSPOSE_CONV has neither)
            options.update(groups=group, dilation=tuple(dilations))
        self._op("TRANSPOSE_CONV", [shape, ohwi, x] + ([bias] if bias >= 0 else []), [out], **options)

    def _op_QLinearConv(self, node, attrs):
        i = list(node.input) + [""] * (9 - len(node.input))
        x = self._qlinear_input(i[0], i[1], i[2])
        w = self._weights(i[3], i[4], i[5])
        params = self._qparams(i[6], i[7], "QLinearConv output")
        self._conv(node, attrs, x, w, i[8], [node.output[0]], params, "NONE")

    def _fully_connected(self, x_name, w_index, bias_name, out_names, params, activation, layout, float_bias=False):
        x = self.values[x_name]
        x_shape = self._onnx_shape(x_name)
        x_index = self._plain(x_name) if len(x_shape) > 2 else x.index
        weights = self.tensors[w_index]
        if len(weights.shape) != 2:
            raise Skip(f"weights of shape {list(weights.shape)}: only 2-D weights are supported")
        k, n_out = (weights.shape[1], weights.shape[0]) if layout == "OI" else weights.shape
        if x_shape[-1] != k:
            raise Skip(f"input {list(x_shape)} does not fit weights {list(weights.shape)}")
        if layout == "IO" and len(weights.scale) > 1:
            weights.quantized_dimension = 1
        bias = self._bias(bias_name, self.tensors[x_index].scale[0], list(weights.scale), n_out, float_bias)
        out = self._new_output(out_names, tuple(x_shape[:-1]) + (n_out,), params, False)
        self._op("FULLY_CONNECTED", [x_index, w_index] + ([bias] if bias >= 0 else []), [out], activation=activation,
                 weights_layout=layout)

    def _op_Gemm(self, node, attrs):
        if attrs.get("transA", 0) or attrs.get("alpha", 1.0) != 1.0 or attrs.get("beta", 1.0) != 1.0:
            raise Skip("only Gemm with transA=0, alpha=1, beta=1 is supported")
        x = self._activation_input(node.input[0])
        w = self._weights(node.input[1])
        out_names, params, activation = self._quantized_output(node)
        self._fully_connected(x, w, node.input[2] if len(node.input) > 2 else "", out_names, params, activation,
                              "OI" if attrs.get("transB", 0) else "IO", float_bias=True)

    def _op_MatMul(self, node, attrs):
        x = self._activation_input(node.input[0])
        w = self._weights(node.input[1], axis=1) if node.input[1] in self.quantized_constants else None
        if w is None:
            raise Skip("the second MatMul input must be dequantized int8 constant weights")
        out_names, params, activation = self._quantized_output(node)
        self._fully_connected(x, w, "", out_names, params, activation, "IO")

    def _op_QLinearMatMul(self, node, attrs):
        a_s, a_z, b, b_s, b_z, y_s, y_z = node.input[1:8]
        x = self._qlinear_input(node.input[0], a_s, a_z)
        if b not in self.constants:
            raise Skip("the second input must be constant weights")
        if len(self.constants[b].shape) != 2:
            raise Skip(f"weights of shape {list(self.constants[b].shape)}: batched (3-D) weights are not supported")
        w = self._weights(b, b_s, b_z, axis=1)
        params = self._qparams(y_s, y_z, "QLinearMatMul output")
        self._fully_connected(x, w, "", [node.output[0]], params, "NONE", "IO")

    def _op_QGemm(self, node, attrs):
        i = list(node.input) + [""] * (9 - len(node.input))
        if attrs.get("transA", 0) or attrs.get("alpha", 1.0) != 1.0:
            raise Skip("only QGemm with transA=0 and alpha=1 is supported")
        if not i[7]:
            raise Skip("QGemm with a float output is not supported")
        x = self._qlinear_input(i[0], i[1], i[2])
        w = self._weights(i[3], i[4], i[5], axis=0 if attrs.get("transB", 0) else 1)
        params = self._qparams(i[7], i[8], "QGemm output")
        self._fully_connected(x, w, i[6], [node.output[0]], params, "NONE", "OI" if attrs.get("transB", 0) else "IO")
