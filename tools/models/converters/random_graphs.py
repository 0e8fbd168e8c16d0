"""Small seeded torch graphs the TFLite fixtures quantize in every recipe (make_tflite_fixtures.py: random/ and
modes/): one or a few op kinds each, so that a failing fixture points at its ops."""

from __future__ import annotations

# Small random graphs. Each case: (description, NCHW input shape, module factory). Weights come from
# torch.manual_seed(seed of the case) and the default initialisers, biases and constants from seeded
# normals (so that zero points are not all trivially 0).

def random_cases():
    import torch
    from torch import nn
    F = nn.functional

    def const(*shape, scale=0.5, offset=0.0):
        return nn.Parameter(torch.randn(*shape) * scale + offset, requires_grad=False)

    class ConvStrides(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 5, 3, stride=2, padding=1)
            self.b = nn.Conv2d(5, 7, (3, 1), stride=(1, 2), padding=(1, 0))
            self.c = nn.Conv2d(7, 6, 1)
            self.d = nn.Conv2d(6, 9, 2, stride=2, padding=0)

        def forward(self, x):
            return self.d(self.c(F.relu(self.b(F.relu(self.a(x))))))

    class ConvDilation(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(4, 6, 3, dilation=2, padding=0)
            self.b = nn.Conv2d(6, 9, 5, padding=2, bias=False)
            self.c = nn.Conv2d(9, 5, 3, dilation=(1, 2), padding=(1, 2))
            self.d = nn.Conv2d(5, 3, 3, padding="same")

        def forward(self, x):
            return self.d(F.hardtanh(self.c(F.relu6(self.b(F.relu6(self.a(x)))))))

    class ConvGroups(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(6, 12, 3, padding=1, groups=3)
            self.b = nn.Conv2d(12, 10, 3, padding=1, stride=2, groups=2)
            self.c = nn.Conv2d(10, 4, 1)

        def forward(self, x):
            return self.c(F.relu(self.b(F.relu(self.a(x)))))

    class Depthwise(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(5, 10, 3, padding=1, groups=5)            # multiplier 2
            self.b = nn.Conv2d(10, 10, 3, stride=2, padding=1, groups=10)
            self.c = nn.Conv2d(10, 30, 5, padding=2, groups=10)          # multiplier 3
            self.d = nn.Conv2d(30, 3, 1)

        def forward(self, x):
            y = F.relu(self.b(F.hardswish(self.a(x))))
            return self.d(F.relu6(self.c(y)))

    class Linear(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(3 * 8 * 6, 20)
            self.b = nn.Linear(20, 13, bias=False)
            self.c = nn.Linear(13, 11)

        def forward(self, x):
            y = F.relu(self.a(torch.flatten(x, 1)))
            return torch.softmax(self.c(F.relu(self.b(y))), dim=-1)

    class Broadcast(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(4, 6, 3, padding=1)
            self.b = nn.Conv2d(6, 5, 1)
            self.c_chw = const(6, 1, 1, offset=0.3)
            self.s_1 = const(1, scale=0.2, offset=1.3)
            self.m_chw = const(6, 1, 1, offset=1.0)
            self.c_nchw = const(1, 5, 1, 1)
            self.c_w = const(1, 1, 10)
            self.m_full = const(5, 10, 10, offset=0.5)

        def forward(self, x):
            y = self.a(x) + self.c_chw
            y = F.relu(y * self.s_1) * self.m_chw
            y = self.b(y) + self.c_nchw
            y = y + self.c_w
            return y * self.m_full

    class Residual(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 8, 3, padding=1)
            self.b = nn.Conv2d(8, 8, 3, padding=1)
            self.c = nn.Conv2d(8, 8, 1)
            self.d = nn.Conv2d(8, 8, 3, padding=1, groups=8)
            self.e = nn.Conv2d(8, 6, 1)

        def forward(self, x):
            y = F.relu(self.a(x))
            y = F.relu(y + self.c(F.relu(self.b(y))))
            z = self.d(y)
            y = y * torch.sigmoid(z) + z
            return self.e(y)

    class ConcatPools(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(5, 6, 3, padding=1)
            self.b = nn.Conv2d(6 + 6 + 6 + 3, 7, 1)
            self.c = nn.Conv2d(5, 3, 1)

        def forward(self, x):
            y = F.relu(self.a(x))
            y = torch.cat([F.max_pool2d(y, 3, 1, 1), F.avg_pool2d(y, 3, 1, 1, count_include_pad=False), y,
                           self.c(x)], dim=1)
            y = F.max_pool2d(self.b(y), 2)                                  # 8x8
            y = F.max_pool2d(y, (2, 3), stride=(1, 2), padding=(0, 1))      # 7x4
            return F.avg_pool2d(y, 2)                                       # 3x2

    class MeanHead(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 9, 3, stride=2, padding=1)
            self.b = nn.Linear(9, 10)

        def forward(self, x):
            y = F.adaptive_avg_pool2d(F.relu(self.a(x)), 1)
            return torch.tanh(self.b(torch.flatten(y, 1)))

    class Unary(nn.Module):
        def __init__(self):
            super().__init__()
            self.convs = nn.ModuleList([nn.Conv2d(c_in, c_out, 3, padding=1)
                                        for c_in, c_out in [(3, 5), (5, 6), (6, 7), (7, 5), (5, 6), (6, 4)]])

        def forward(self, x):
            acts = [torch.sigmoid, torch.tanh, F.hardsigmoid, F.hardswish, lambda t: F.hardtanh(t, -1.0, 1.0),
                    F.relu6]
            for conv, act in zip(self.convs, acts):
                x = act(conv(x))
            return x

    class UnaryStandalone(nn.Module):
        """Unary ops on a tensor no convolution produces (a concat / an add), so nothing can fuse them."""

        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 4, 3, padding=1)
            self.b = nn.Conv2d(3, 4, 1)
            self.c = nn.Conv2d(20, 5, 1)

        def forward(self, x):
            y = self.a(x) + self.b(x)
            outs = [F.relu(y), torch.sigmoid(y), torch.tanh(y), F.hardswish(y), F.hardsigmoid(y)]
            return self.c(torch.cat(outs, dim=1))

    class ClampStandalone(nn.Module):
        """relu6 and hardtanh on an Add: ai-edge-quantizer leaves RELU6 / RELU_N1_TO_1 in float."""

        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 4, 3, padding=1)
            self.b = nn.Conv2d(3, 4, 1)
            self.c = nn.Conv2d(8, 5, 1)

        def forward(self, x):
            y = self.a(x) + self.b(x)
            return self.c(torch.cat([F.relu6(y), F.hardtanh(y)], dim=1))

    class LeakyRelu(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 6, 3, padding=1)
            self.b = nn.Conv2d(6, 5, 3, padding=1)

        def forward(self, x):
            return self.b(F.leaky_relu(self.a(x), 0.1))

    class ShapeOps(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(4, 6, 3, padding=1)
            self.b = nn.Linear(6, 5)

        def forward(self, x):
            y = self.a(x)                              # [1, 6, 6, 6]
            y = y.reshape(1, 6, 36).transpose(1, 2)     # [1, 36, 6]
            y = torch.softmax(y, dim=-1)
            y = self.b(y)                              # [1, 36, 5]
            return y.permute(0, 2, 1).reshape(1, 5 * 36)

    class SqueezeExcite(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 12, 3, padding=1)
            self.fc1 = nn.Conv2d(12, 5, 1)
            self.fc2 = nn.Conv2d(5, 12, 1)
            self.b = nn.Conv2d(12, 6, 1)

        def forward(self, x):
            y = F.hardswish(self.a(x))
            s = F.hardsigmoid(self.fc2(F.relu(self.fc1(F.adaptive_avg_pool2d(y, 1)))))
            return self.b(y * s)

    class Upsampler(nn.Module):
        """CartoonGAN-style decoder: stride-2 conv, two ConvTranspose2d (k4 s2 p1; k2 s2), tanh."""

        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 8, 3, stride=2, padding=1)
            self.up1 = nn.ConvTranspose2d(8, 6, 4, stride=2, padding=1)
            self.up2 = nn.ConvTranspose2d(6, 4, 2, stride=2)
            self.b = nn.Conv2d(4, 3, 3, padding=1)

        def forward(self, x):
            return torch.tanh(self.b(F.relu(self.up2(F.relu(self.up1(F.relu(self.a(x))))))))

    class PixelShuffle(nn.Module):
        """ESPCN: convs, PixelShuffle(2) (litert-torch lowers it to RESHAPE / TRANSPOSE / RESHAPE)."""

        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 8, 5, padding=2)
            self.b = nn.Conv2d(8, 12, 3, padding=1)
            self.shuffle = nn.PixelShuffle(2)

        def forward(self, x):
            return self.shuffle(self.b(torch.tanh(self.a(x))))

    class YoloBlock(nn.Module):
        """Tiny-YOLO pieces: SiLU, channel chunks (slices), nearest upsampling, concat, max pool."""

        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 8, 3, stride=2, padding=1)
            self.b = nn.Conv2d(4, 4, 3, padding=1)
            self.c = nn.Conv2d(12, 8, 1)
            self.d = nn.Conv2d(8, 6, 3, stride=2, padding=1)
            self.e = nn.Conv2d(14, 5, 1)

        def forward(self, x):
            y = F.silu(self.a(x))
            left, right = y.chunk(2, dim=1)
            z = F.silu(self.c(torch.cat([left, right, F.silu(self.b(right))], dim=1)))
            small = F.max_pool2d(F.silu(self.d(z)), 3, stride=1, padding=1)
            up = F.interpolate(small, scale_factor=2, mode="nearest")
            return self.e(torch.cat([z, up], dim=1))

    class SegmentationHead(nn.Module):
        """DeepLab-style: dilated convs, PReLU, reflection padding, bilinear upsampling to the input size."""

        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 8, 3, stride=2, padding=1)
            self.prelu = nn.PReLU(8, init=0.2)
            self.b = nn.Conv2d(8, 8, 3, dilation=2, padding=2)
            self.pad = nn.ReflectionPad2d(1)
            self.c = nn.Conv2d(8, 5, 3)

        def forward(self, x):
            y = self.c(self.pad(F.relu(self.b(self.prelu(self.a(x))))))
            return F.interpolate(y, size=x.shape[2:], mode="bilinear", align_corners=False)

    class LayerNormTokens(nn.Module):
        """A ViT's patch tokens through LayerNorm (litert-torch writes it out: MEAN, SQUARED_DIFFERENCE,
        ADD eps, RSQRT, MUL, SUB, MUL / ADD of the affine), then a residual MUL / ADD."""

        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 16, 2, stride=2)
            self.norm = nn.LayerNorm(16)
            with torch.no_grad():
                self.norm.weight.add_(torch.randn(16) * 0.3)
                self.norm.bias.add_(torch.randn(16) * 0.3)

        def forward(self, x):
            tokens = self.a(x).flatten(2).transpose(1, 2)
            return self.norm(tokens) * 0.5 + tokens

    class ClassToken(nn.Module):
        """A ViT's class token: a constant [1, 1, C] concatenated before the patch tokens, plus position
        embeddings."""

        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 12, 2, stride=2)
            self.cls = const(1, 1, 12, offset=0.1)
            self.pos = const(1, 1 + 4 * 5, 12, scale=0.2)

        def forward(self, x):
            tokens = self.a(x).flatten(2).transpose(1, 2)
            return torch.cat([self.cls, tokens], dim=1) + self.pos

    class SoftmaxWrittenOut(nn.Module):
        """A softmax over another axis than the last (over the channels of [1, C, N]), which litert-torch
        writes out: REDUCE_MAX, MAXIMUM, SUB, EXP, SUM, DIV (TFLite's SOFTMAX takes the last axis only)."""

        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 10, 2, stride=2)

        def forward(self, x):
            return torch.softmax(self.a(x).flatten(2), dim=1)

    return {
        "upsampler": ("Conv2d stride 2, ConvTranspose2d k4 s2 p1 and k2 s2, relu, tanh", (1, 3, 16, 12), Upsampler),
        "pixel_shuffle": ("ESPCN: Conv2d 5x5 and 3x3, tanh, PixelShuffle(2)", (1, 3, 10, 12), PixelShuffle),
        "yolo_block": ("SiLU, chunk(2) on channels, concat, 3x3 s1 max pool, nearest upsampling x2",
                       (1, 3, 16, 16), YoloBlock),
        "segmentation_head": ("dilated Conv2d, PReLU per channel, ReflectionPad2d, bilinear upsampling",
                              (1, 3, 16, 16), SegmentationHead),
        "conv_strides": ("Conv2d strides 2 / (1,2) / 2x2 valid, 3x1 kernel, 1x1, relu", (1, 3, 17, 13), ConvStrides),
        "conv_dilation": ("Conv2d dilation 2 valid, 5x5 no bias, dilation (1,2), padding='same', relu6, hardtanh",
                          (1, 4, 20, 18), ConvDilation),
        "conv_groups": ("grouped Conv2d (groups 3, groups 2 stride 2), relu", (1, 6, 12, 12), ConvGroups),
        "depthwise": ("depthwise Conv2d with multipliers 2 and 3, stride 2, 5x5, hardswish, relu, relu6",
                      (1, 5, 15, 15), Depthwise),
        "linear": ("flatten, Linear with and without bias, relu, softmax", (1, 3, 8, 6), Linear),
        "broadcast": ("Add/Mul with constants [C,1,1], [1], [1,C,1,1], [1,1,W], [C,H,W]", (1, 4, 10, 10),
                      Broadcast),
        "residual": ("residual adds, x * sigmoid(z) + z, depthwise", (1, 3, 12, 12), Residual),
        "concat_pools": ("concat of max/avg pools (3x3 s1 pad 1, count_include_pad=False), 2x2 pools, (2,3) s(1,2) padded max pool",
                         (1, 5, 16, 16), ConcatPools),
        "mean_head": ("adaptive avg pool (mean), flatten, Linear, tanh", (1, 3, 14, 18), MeanHead),
        "unary": ("Conv2d each followed by sigmoid, tanh, hardsigmoid, hardswish, hardtanh(-1,1), relu6",
                  (1, 3, 10, 10), Unary),
        "unary_standalone": ("relu, sigmoid, tanh, hardswish, hardsigmoid on an Add, concat", (1, 3, 9, 11),
                             UnaryStandalone),
        "clamp_standalone": ("relu6, hardtanh(-1, 1) on an Add, concat", (1, 3, 9, 11), ClampStandalone),
        "leaky_relu": ("Conv2d, leaky_relu(0.1), Conv2d", (1, 3, 10, 10), LeakyRelu),
        "shape_ops": ("reshape, transpose, softmax over the last axis, Linear on rank 3, permute, flatten",
                      (1, 4, 6, 6), ShapeOps),
        "squeeze_excite": ("hardswish, squeeze-excite (mean, 1x1 convs, relu, hardsigmoid, mul)", (1, 3, 12, 12),
                           SqueezeExcite),
        "layer_norm": ("patch tokens (Conv2d, flatten, transpose), LayerNorm, residual", (1, 3, 8, 10),
                       LayerNormTokens),
        "class_token": ("patch tokens, a constant class token concatenated first, position embeddings",
                        (1, 3, 8, 10), ClassToken),
        "softmax_written_out": ("softmax over the channels of [1, C, N], written out (max, sub, exp, sum, div)",
                                (1, 3, 8, 10), SoftmaxWrittenOut),
    }


def other_mode_model():
    """A small convolutional net (a convolution, a depthwise one, pooling, a dense layer) for OTHER_MODES."""
    import torch

    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
                               torch.nn.Conv2d(8, 8, 3, padding=1, groups=8), torch.nn.ReLU(),
                               torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 5))
