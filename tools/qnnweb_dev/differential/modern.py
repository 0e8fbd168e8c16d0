"""The blocks of today's vision architectures, for the differential generator (generator.py).

Each block takes (builder, random.Random, tensor name, NCHW shape) and returns (name, NCHW shape), in the forms
torch.onnx writes them:

- ``layer_norm``: LayerNormalization on the channels of an NCHW map through Transpose (ConvNeXt's
  LayerNorm2d), or on the last axis of the [1, tokens, channels] sequence (ViT / MobileViT);
- ``gelu``: torch's opset-17 GELU (Div by sqrt 2, Erf, Add 1, Mul by x, Mul by 0.5) or opset 20's Gelu
  (exact or tanh), on a map or on tokens;
- ``attention``: the map as tokens, then x + Wo(softmax(Q Kᵀ · scale) V) with Q, K, V = x Wq, x Wk, x Wv
  (MatMul, biases as Add), split into heads by Reshape / Transpose (Kᵀ as torch exports k.transpose(-2, -1)),
  the softmax on the last axis, the heads merged back; sometimes a pre-norm LayerNorm and a GELU MLP;
- ``batch_norm``: an unfused BatchNormalization after an Add (a residual or a constant), on the map (rank 4)
  or on the map as [1, C, H * W] (rank 3).

The blocks keep their activations in a few units: weights are scaled by 1 / sqrt(fan-in), norm scales near
1, BatchNorm statistics near what the block sees, so no quantized tensor collapses to a few levels.
When a map has fewer than 4 channels, or more tokens than MAX_TOKENS, a convolution first lifts it to
more channels or a coarser grid (a patch embedding), as the real architectures do.
"""

import numpy as np

MIN_CHANNELS = 4
MAX_TOKENS = 144
GELU_OPSET = 20          # the opset that has Gelu (the generator's models are opset 17 otherwise)


def _pointwise(b, x, shape, out_c, stride=1):
    """A 1x1 convolution (3x3 with stride for a patch embedding) with a bias."""
    n, c, h, w = shape
    k = 1 if stride == 1 else 3
    pads = [] if k == 1 else [1, 1, 1, 1]
    weights = b.normal((out_c, c, k, k), 1.0 / np.sqrt(c * k * k))
    attrs = dict(kernel_shape=[k, k], strides=[stride, stride])
    if pads:
        attrs["pads"] = pads
    y = b.node("Conv", [x, b.const(weights, "w"), b.const(b.normal((out_c,), 0.2), "bias")], **attrs)
    return y, (n, out_c, (h + 2 * (k // 2) - k) // stride + 1, (w + 2 * (k // 2) - k) // stride + 1)


def _embed(b, r, x, shape):
    """The map lifted to MIN_CHANNELS or more and at most MAX_TOKENS positions, when it needs to be."""
    n, c, h, w = shape
    if c >= MIN_CHANNELS and h * w <= MAX_TOKENS:
        return x, shape
    stride = 1
    while -(-h // stride) * -(-w // stride) > MAX_TOKENS:
        stride += 1
    return _pointwise(b, x, shape, max(c, r.choice([8, 12, 16])), stride)


def _to_tokens(b, x, shape):
    n, c, h, w = shape
    y = b.node("Reshape", [x, b.const(np.array([n, c, h * w], np.int64), "shape")])
    return b.node("Transpose", [y], perm=[0, 2, 1]), (n, h * w, c)


def _to_map(b, x, shape):
    n, c, h, w = shape
    y = b.node("Transpose", [x], perm=[0, 2, 1])
    return b.node("Reshape", [y, b.const(np.array([n, c, h, w], np.int64), "shape")])


def _layer_norm_last_axis(b, r, x, width):
    scale = (1.0 + b.normal((width,), 0.2)).astype(np.float32)
    bias = b.normal((width,), 0.2)
    epsilon = r.choice([1e-5, 1e-6])
    return b.node("LayerNormalization", [x, b.const(scale, "ln_scale"), b.const(bias, "ln_bias")], axis=-1,
                  epsilon=epsilon)


def block_layer_norm(b, r, x, shape):
    x, shape = _embed(b, r, x, shape)
    if r.random() < 0.5:   # ConvNeXt's LayerNorm2d: the channels last, normalized, back
        y = b.node("Transpose", [x], perm=[0, 2, 3, 1])
        y = _layer_norm_last_axis(b, r, y, shape[1])
        return b.node("Transpose", [y], perm=[0, 3, 1, 2]), shape
    tokens, _ = _to_tokens(b, x, shape)
    return _to_map(b, _layer_norm_last_axis(b, r, tokens, shape[1]), shape), shape


def _gelu(b, r, x):
    if r.random() < 0.3:
        b.min_opset = max(b.min_opset, GELU_OPSET)
        return b.node("Gelu", [x], approximate=r.choice(["none", "none", "tanh"]))
    # torch.onnx at opset 17: x * 0.5 * (1 + erf(x / sqrt(2))) as it writes it
    y = b.node("Div", [x, b.const(np.float32(1.4142135381698608), "sqrt2")])
    y = b.node("Erf", [y])
    y = b.node("Add", [y, b.const(np.float32(1.0), "one")])
    y = b.node("Mul", [x, y])
    return b.node("Mul", [y, b.const(np.float32(0.5), "half")])


def block_gelu(b, r, x, shape):
    return _gelu(b, r, x), shape


def _linear(b, r, x, d_in, d_out, bias=None):
    """x W, plus a bias (``bias`` None: drawn)."""
    y = b.node("MatMul", [x, b.const(b.normal((d_in, d_out), 1.0 / np.sqrt(d_in)), "w")])
    if r.random() < 0.7 if bias is None else bias:
        y = b.node("Add", [y, b.const(b.normal((d_out,), 0.2), "bias")])
    return y


def _attention(b, r, x, tokens, d):
    """x + Wo · softmax(Q Kᵀ · scale) V on [1, tokens, d], in 1 or more heads."""
    n = 1
    heads = r.choice([h for h in (1, 2, 4) if d % h == 0 and d // h >= 2])
    hd = d // heads
    q, k, v = (_linear(b, r, x, d, d) for _ in range(3))
    split_heads = heads > 1 or r.random() < 0.5   # one head is sometimes written without a head axis
    if split_heads:
        split = b.const(np.array([n, tokens, heads, hd], np.int64), "shape")
        q = b.node("Transpose", [b.node("Reshape", [q, split])], perm=[0, 2, 1, 3])
        kt = b.node("Transpose", [b.node("Reshape", [k, split])], perm=[0, 2, 3, 1])
        v = b.node("Transpose", [b.node("Reshape", [v, split])], perm=[0, 2, 1, 3])
    else:
        kt = b.node("Transpose", [k], perm=[0, 2, 1])
    scores = b.node("MatMul", [q, kt])
    if r.random() < 0.7:
        scores = b.node("Mul", [scores, b.const(np.float32(hd ** -0.5), "scale")])
    else:
        scores = b.node("Div", [scores, b.const(np.float32(np.sqrt(hd)), "scale")])
    y = b.node("MatMul", [b.node("Softmax", [scores], axis=-1), v])
    if split_heads:
        y = b.node("Transpose", [y], perm=[0, 2, 1, 3])
        y = b.node("Reshape", [y, b.const(np.array([n, tokens, d], np.int64), "shape")])
    y = _linear(b, r, y, d, d)
    return b.node("Add", [x, y])


def _mlp(b, r, x, d):
    hidden = _gelu(b, r, _linear(b, r, x, d, 2 * d, bias=True))
    return b.node("Add", [x, _linear(b, r, hidden, 2 * d, d, bias=True)])


def block_attention(b, r, x, shape):
    x, shape = _embed(b, r, x, shape)
    tokens, (n, t, d) = _to_tokens(b, x, shape)
    pre_norm = r.random() < 0.6
    y = _attention(b, r, _layer_norm_last_axis(b, r, tokens, d) if pre_norm else tokens, t, d)
    if r.random() < 0.5:
        y = _mlp(b, r, _layer_norm_last_axis(b, r, y, d) if pre_norm else y, d)
    return _to_map(b, y, shape), shape


def block_batch_norm(b, r, x, shape):
    n, c, h, w = shape
    rank3 = r.random() < 0.4
    if rank3:
        x = b.node("Reshape", [x, b.const(np.array([n, c, h * w], np.int64), "shape")])
    if r.random() < 0.5:   # a residual branch: x + relu(x * per-channel scale)
        scale = b.normal((c, 1) if rank3 else (c, 1, 1), 0.5) + np.float32(1)
        y = b.node("Relu", [b.node("Mul", [x, b.const(scale.astype(np.float32), "k")])])
        added = b.node("Add", [x, y])
    else:
        added = b.node("Add", [x, b.const(b.normal((c, 1) if rank3 else (c, 1, 1), 0.5), "k")])
    mean = b.normal((c,), 0.3)
    var = (np.abs(b.normal((c,), 0.5)) + np.float32(0.5)).astype(np.float32)
    gamma = (1.0 + b.normal((c,), 0.2)).astype(np.float32)
    beta = b.normal((c,), 0.2)
    y = b.node("BatchNormalization", [added, b.const(gamma, "bn_scale"), b.const(beta, "bn_bias"),
                                      b.const(mean, "bn_mean"), b.const(var, "bn_var")], epsilon=1e-5)
    if rank3:
        y = b.node("Reshape", [y, b.const(np.array([n, c, h, w], np.int64), "shape")])
    return y, shape


BLOCKS = [(block_layer_norm, 25), (block_gelu, 20), (block_attention, 35), (block_batch_norm, 20)]
# what the campaign's per-op summary calls them (every block's ops are in Case.ops too)
BLOCK_NAMES = {block_layer_norm: "LayerNorm", block_gelu: "GELU", block_attention: "attention",
               block_batch_norm: "BatchNorm"}
