"""Whole architectures of the workload families beyond classification, written in torch (torchvision does not
import beside the CPU torch wheel here), narrow and small-input so that their int8 fixtures stay small:

- deeplabv3_mnv2: DeepLabV3 on a MobileNetV2 backbone at output stride 16 (the last stages dilated instead
  of strided), ASPP (1x1, atrous 3x3 at rates 6 / 12 / 18, image pooling upsampled back) and bilinear x16
  upsampling of the class scores to the input size;
- ssdlite_fpn: an SSDLite-style detector on a small FPN (lateral 1x1 convolutions, nearest upsampling and
  adds top-down, a max-pool level), depthwise-separable heads per level, boxes and scores reshaped and
  concatenated over the levels;
- cartoongan: a CartoonGAN-style generator (strided convolutions, residual blocks, two 4x4 stride-2
  transposed convolutions, tanh);
- espcn: ESPCN x3 (convolutions, tanh, PixelShuffle);
- tiny_yolo: a tiny YOLO (SiLU, C2f-style channel splits and concats, SPPF max pools, nearest upsampling, two
  detection levels);
- yolov8_detect: tiny_yolo under YOLOv8's whole Detect head as exported (DFL's softmax over a middle axis, the
  box decoder's float arithmetic against the anchors, sigmoid scores, one [1, 4 + classes, anchors] output);
- mobilenet_v3_small: MobileNetV3-Small 1.0 at 224 (hard-swish, squeeze-excite with hard-sigmoid); its TFLite
  fixture is one of make_tflite_fixtures.py's LARGE ones (torchvision's initialisation), not arch/.

Used by make_tflite_fixtures.py (litert-torch + ai-edge-quantizer) and by tests/onnx/test_onnx_architectures.py
(torch.onnx + onnxruntime's quantize_static). Seeded random weights; BatchNorm statistics re-estimated on the
calibration photos and BatchNorm shifts drawn positive, so that activations do not sit on ReLUs' corners (a
random int8 network is otherwise chaotic: one rounding step grows to tens of quanta). Stdlib + torch only.
"""

from __future__ import annotations


def _nn():
    import torch
    from torch import nn

    return torch, nn, nn.functional


def conv_bn(cin, cout, k=3, stride=1, groups=1, dilation=1, act="relu6"):
    torch, nn, F = _nn()
    layers = [nn.Conv2d(cin, cout, k, stride, dilation * (k - 1) // 2, dilation=dilation, groups=groups, bias=False),
              nn.BatchNorm2d(cout)]
    if act is not None:
        layers.append({"relu6": nn.ReLU6, "relu": nn.ReLU, "silu": nn.SiLU}[act]())
    return nn.Sequential(*layers)


def _inverted_residual(cin, cout, stride, expand, dilation=1):
    torch, nn, F = _nn()

    class InvertedResidual(nn.Module):
        def __init__(self):
            super().__init__()
            hidden = cin * expand
            layers = [conv_bn(cin, hidden, 1)] if expand != 1 else []
            layers += [conv_bn(hidden, hidden, 3, stride, groups=hidden, dilation=dilation), conv_bn(hidden, cout, 1, act=None)]
            self.block = nn.Sequential(*layers)
            self.residual = stride == 1 and cin == cout

        def forward(self, x):
            return x + self.block(x) if self.residual else self.block(x)

    return InvertedResidual()


def mobilenet_v2_features(settings, stem=8, dilate_after=None):
    """MobileNetV2 stages from (expand, channels, repeats, stride) rows; rows past index ``dilate_after`` keep
    stride 1 and dilate by the stride they drop (DeepLab's output stride 16). Returns (module list, channels)."""
    torch, nn, F = _nn()
    layers, cin, dilation = [conv_bn(3, stem, 3, 2)], stem, 1
    for i, (t, c, n, s) in enumerate(settings):
        for r in range(n):
            stride = s if r == 0 else 1
            if dilate_after is not None and i > dilate_after and stride > 1:
                dilation, stride = dilation * stride, 1
            layers.append(_inverted_residual(cin, c, stride, t, dilation))
            cin = c
    return nn.ModuleList(layers), cin


def deeplabv3_mnv2(classes=8):
    torch, nn, F = _nn()
    settings = [(1, 8, 1, 1), (6, 12, 2, 2), (6, 16, 2, 2), (6, 32, 2, 2), (6, 48, 1, 1), (6, 80, 2, 2), (6, 96, 1, 1)]

    class ASPP(nn.Module):
        def __init__(self, cin, cout=48):
            super().__init__()
            self.branches = nn.ModuleList([conv_bn(cin, cout, 1, act="relu")] + [
                conv_bn(cin, cout, 3, dilation=r, act="relu") for r in (6, 12, 18)])
            self.pool = conv_bn(cin, cout, 1, act="relu")
            self.project = conv_bn(5 * cout, cout, 1, act="relu")

        def forward(self, x):
            pooled = F.interpolate(self.pool(F.adaptive_avg_pool2d(x, 1)), size=x.shape[2:], mode="bilinear",
                                   align_corners=False)
            return self.project(torch.cat([b(x) for b in self.branches] + [pooled], dim=1))

    class DeepLabV3(nn.Module):
        def __init__(self):
            super().__init__()
            self.features, channels = mobilenet_v2_features(settings, dilate_after=4)   # output stride 16
            self.aspp = ASPP(channels)
            self.head = conv_bn(48, 48, 3, act="relu")
            self.classifier = nn.Conv2d(48, classes, 1)

        def forward(self, x):
            y = x
            for layer in self.features:
                y = layer(y)
            y = self.classifier(self.head(self.aspp(y)))
            return F.interpolate(y, size=x.shape[2:], mode="bilinear", align_corners=False)

    return DeepLabV3()


def ssdlite_fpn(classes=5, anchors=3):
    torch, nn, F = _nn()
    settings = [(1, 8, 1, 1), (6, 12, 2, 2), (6, 16, 2, 2), (6, 32, 2, 2), (6, 48, 1, 2)]

    def separable(cin, cout):
        return nn.Sequential(conv_bn(cin, cin, 3, groups=cin), nn.Conv2d(cin, cout, 1))

    class SSDLiteFPN(nn.Module):
        def __init__(self):
            super().__init__()
            self.features, _ = mobilenet_v2_features(settings)
            # feature taps after the stride-8, -16 and -32 stages (channels 16, 32, 48)
            self.taps = {5: 16, 7: 32, 8: 48}
            self.lateral = nn.ModuleList([nn.Conv2d(c, 24, 1) for c in self.taps.values()])
            self.smooth = nn.ModuleList([conv_bn(24, 24, 3, groups=24) for _ in self.taps])
            self.box_heads = nn.ModuleList([separable(24, anchors * 4) for _ in range(4)])
            self.score_heads = nn.ModuleList([separable(24, anchors * classes) for _ in range(4)])

        def forward(self, x):
            taps, y = [], x
            for i, layer in enumerate(self.features):
                y = layer(y)
                if i in self.taps:
                    taps.append(y)
            laterals = [lat(t) for lat, t in zip(self.lateral, taps)]
            levels = [laterals[-1]]
            for lateral in reversed(laterals[:-1]):            # top-down: nearest upsampling and adds
                levels.insert(0, lateral + F.interpolate(levels[0], scale_factor=2, mode="nearest"))
            levels = [s(level) for s, level in zip(self.smooth, levels)]
            levels.append(F.max_pool2d(levels[-1], 2, stride=2))   # an extra, coarser level
            boxes, scores = [], []
            for level, bh, sh in zip(levels, self.box_heads, self.score_heads):
                boxes.append(bh(level).permute(0, 2, 3, 1).reshape(1, -1, 4))
                scores.append(sh(level).permute(0, 2, 3, 1).reshape(1, -1, classes))
            return torch.cat(boxes, dim=1), torch.sigmoid(torch.cat(scores, dim=1))

    return SSDLiteFPN()


def cartoongan():
    torch, nn, F = _nn()

    class Residual(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.a, self.b = conv_bn(c, c, 3, act="relu"), conv_bn(c, c, 3, act=None)

        def forward(self, x):
            return x + self.b(self.a(x))

    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.down = nn.Sequential(conv_bn(3, 16, 7, act="relu"), conv_bn(16, 32, 3, 2, act="relu"),
                                      conv_bn(32, 48, 3, 2, act="relu"))
            self.blocks = nn.Sequential(Residual(48), Residual(48), Residual(48))
            # 4x4 stride-2 transposed convolutions (litert-torch fails on k3 p1 output_padding 1), no BatchNorm
            # after them (a folded one leaves a [1,1,1,C] bias ai-edge-quantizer mis-quantizes)
            self.up1 = nn.ConvTranspose2d(48, 32, 4, 2, 1)
            self.up2 = nn.ConvTranspose2d(32, 16, 4, 2, 1)
            self.out = nn.Conv2d(16, 3, 7, padding=3)

        def forward(self, x):
            y = self.blocks(self.down(x))
            y = F.relu(self.up2(F.relu(self.up1(y))))
            return torch.tanh(self.out(y))

    return Generator()


def espcn(scale=3):
    torch, nn, F = _nn()

    class ESPCN(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 32, 5, padding=2)
            self.b = nn.Conv2d(32, 16, 3, padding=1)
            self.c = nn.Conv2d(16, 3 * scale * scale, 3, padding=1)
            self.shuffle = nn.PixelShuffle(scale)

        def forward(self, x):
            return self.shuffle(self.c(torch.tanh(self.b(torch.tanh(self.a(x))))))

    return ESPCN()


def tiny_yolo(classes=4):
    torch, nn, F = _nn()

    class C2f(nn.Module):
        """YOLOv8's C2f: split the channels in two, a bottleneck on one half, concat all three."""

        def __init__(self, c):
            super().__init__()
            self.cv1 = conv_bn(c, c, 1, act="silu")
            self.m = nn.Sequential(conv_bn(c // 2, c // 2, 3, act="silu"), conv_bn(c // 2, c // 2, 3, act="silu"))
            self.cv2 = conv_bn(3 * c // 2, c, 1, act="silu")

        def forward(self, x):
            a, b = self.cv1(x).chunk(2, dim=1)
            return self.cv2(torch.cat([a, b, b + self.m(b)], dim=1))

    class SPPF(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.cv1, self.cv2 = conv_bn(c, c // 2, 1, act="silu"), conv_bn(2 * c, c, 1, act="silu")

        def forward(self, x):
            y = [self.cv1(x)]
            for _ in range(3):
                y.append(F.max_pool2d(y[-1], 5, stride=1, padding=2))
            return self.cv2(torch.cat(y, dim=1))

    class TinyYOLO(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(conv_bn(3, 8, 3, 2, act="silu"), conv_bn(8, 16, 3, 2, act="silu"), C2f(16))
            self.p4 = nn.Sequential(conv_bn(16, 32, 3, 2, act="silu"), C2f(32))
            self.p5 = nn.Sequential(conv_bn(32, 48, 3, 2, act="silu"), C2f(48), SPPF(48))
            self.merge = C2f(80)
            self.head4 = nn.Conv2d(80, 4 + 1 + classes, 1)
            self.head5 = nn.Conv2d(48, 4 + 1 + classes, 1)

        def features(self, x):
            """The two detection levels: stride 8 (80 channels) and stride 16 (48)."""
            p4 = self.p4(self.stem(x))
            p5 = self.p5(p4)
            return self.merge(torch.cat([p4, F.interpolate(p5, scale_factor=2, mode="nearest")], dim=1)), p5

        def forward(self, x):
            m, p5 = self.features(x)
            return self.head4(m), self.head5(p5)

    return TinyYOLO()


def yolov8_detect(classes=4, reg_max=16, size=96):
    """tiny_yolo's two levels under YOLOv8's Detect head as ultralytics exports it: per level a box branch
    (4 x reg_max distance bins) and a class branch, the levels flattened and concatenated, DFL (the bins
    reshaped, transposed, softmax over them, a fixed 1x1 convolution with weights 0 .. reg_max - 1), boxes
    decoded against the anchor points (anchor - left-top, anchor + right-bottom, centre and size, times the
    stride) and sigmoid class scores: one [1, 4 + classes, anchors] output."""
    torch, nn, F = _nn()
    backbone = tiny_yolo(classes)
    strides = (8, 16)

    class Detect(nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone = backbone
            self.box = nn.ModuleList([nn.Conv2d(c, 4 * reg_max, 1) for c in (80, 48)])
            self.cls = nn.ModuleList([nn.Conv2d(c, classes, 1) for c in (80, 48)])
            # DFL's convolution is fixed, not a layer build() initialises
            self.register_buffer("bins", torch.arange(reg_max, dtype=torch.float32).view(1, reg_max, 1, 1))
            anchors, stride = [], []
            for s in strides:
                n = size // s
                y, x = torch.meshgrid(torch.arange(n) + 0.5, torch.arange(n) + 0.5, indexing="ij")
                anchors.append(torch.stack((x, y), -1).view(-1, 2))
                stride.append(torch.full((n * n, 1), float(s)))
            self.register_buffer("anchors", torch.cat(anchors).transpose(0, 1).unsqueeze(0))
            self.register_buffer("strides", torch.cat(stride).transpose(0, 1).unsqueeze(0))

        def forward(self, x):
            levels = [torch.cat((self.box[i](f), self.cls[i](f)), 1) for i, f in enumerate(self.backbone.features(x))]
            b = x.shape[0]
            flat = torch.cat([level.view(b, 4 * reg_max + classes, -1) for level in levels], 2)
            box, cls = flat.split((4 * reg_max, classes), 1)
            bins = box.view(b, 4, reg_max, -1).transpose(2, 1).softmax(1)
            lt, rb = F.conv2d(bins, self.bins).view(b, 4, -1).chunk(2, 1)
            x1y1, x2y2 = self.anchors - lt, self.anchors + rb
            boxes = torch.cat(((x1y1 + x2y2) / 2, x2y2 - x1y1), 1) * self.strides
            return torch.cat((boxes, cls.sigmoid()), 1)

    return Detect()


def mobilenet_v3_small(num_classes=1000):
    """MobileNetV3-Small 1.0 (Howard et al. 2019, torchvision's layout): hard-swish, squeeze-excite with ReLU
    and hard-sigmoid, a hard-swish classifier."""
    torch, nn, F = _nn()

    def divisible(v, d=8):
        new = max(d, int(v + d / 2) // d * d)
        return new + d if new < 0.9 * v else new

    def conv_bn(inp, oup, k, stride=1, groups=1, act=None):
        layers = [nn.Conv2d(inp, oup, k, stride, (k - 1) // 2, groups=groups, bias=False), nn.BatchNorm2d(oup)]
        if act is not None:
            layers.append(act())
        return nn.Sequential(*layers)

    class SqueezeExcite(nn.Module):
        def __init__(self, channels):
            super().__init__()
            squeeze = divisible(channels // 4)
            self.fc1 = nn.Conv2d(channels, squeeze, 1)
            self.fc2 = nn.Conv2d(squeeze, channels, 1)

        def forward(self, x):
            s = F.adaptive_avg_pool2d(x, 1)
            return x * F.hardsigmoid(self.fc2(F.relu(self.fc1(s))))

    class InvertedResidual(nn.Module):
        def __init__(self, inp, k, exp, oup, se, act, stride):
            super().__init__()
            self.use_res = stride == 1 and inp == oup
            layers = [conv_bn(inp, exp, 1, act=act)] if exp != inp else []
            layers.append(conv_bn(exp, exp, k, stride, groups=exp, act=act))
            if se:
                layers.append(SqueezeExcite(exp))
            layers.append(conv_bn(exp, oup, 1))
            self.block = nn.Sequential(*layers)

        def forward(self, x):
            return x + self.block(x) if self.use_res else self.block(x)

    RE, HS = nn.ReLU, nn.Hardswish
    settings = [  # in, kernel, expanded, out, SE, activation, stride
        (16, 3, 16, 16, True, RE, 2), (16, 3, 72, 24, False, RE, 2), (24, 3, 88, 24, False, RE, 1),
        (24, 5, 96, 40, True, HS, 2), (40, 5, 240, 40, True, HS, 1), (40, 5, 240, 40, True, HS, 1),
        (40, 5, 120, 48, True, HS, 1), (48, 5, 144, 48, True, HS, 1), (48, 5, 288, 96, True, HS, 2),
        (96, 5, 576, 96, True, HS, 1), (96, 5, 576, 96, True, HS, 1),
    ]

    class MobileNetV3Small(nn.Module):
        def __init__(self):
            super().__init__()
            layers = [conv_bn(3, 16, 3, 2, act=HS)]
            layers += [InvertedResidual(*s) for s in settings]
            layers.append(conv_bn(96, 576, 1, act=HS))
            self.features = nn.Sequential(*layers)
            self.classifier = nn.Sequential(nn.Linear(576, 1024), nn.Hardswish(), nn.Dropout(0.2),
                                            nn.Linear(1024, num_classes))

        def forward(self, x):
            x = F.adaptive_avg_pool2d(self.features(x), 1)
            return self.classifier(torch.flatten(x, 1))

    return MobileNetV3Small()


# name -> (description, NCHW input shape, factory)
ARCHITECTURES = {
    "deeplabv3_mnv2": ("DeepLabV3, MobileNetV2 backbone at output stride 16 (dilated), ASPP with rates 6/12/18 and "
                       "image pooling, bilinear upsampling to the input", (1, 3, 96, 96), deeplabv3_mnv2),
    "ssdlite_fpn": ("SSDLite-style detector: MobileNetV2 backbone, FPN (1x1 laterals, nearest upsampling + add), a "
                    "max-pool level, separable heads, boxes and sigmoid scores reshaped and concatenated",
                    (1, 3, 128, 128), ssdlite_fpn),
    "cartoongan": ("CartoonGAN-style generator: 7x7 and strided convolutions, 3 residual blocks, two ConvTranspose2d "
                   "k4 s2 p1, tanh", (1, 3, 64, 64), cartoongan),
    "espcn": ("ESPCN x3: convolutions, tanh, PixelShuffle(3)", (1, 3, 32, 32), espcn),
    "tiny_yolo": ("tiny YOLO: SiLU, C2f channel splits and concats, SPPF max pools, nearest upsampling, two "
                  "detection levels", (1, 3, 96, 96), tiny_yolo),
    "yolov8_detect": ("tiny YOLO's two levels under YOLOv8's Detect head: DFL (softmax over the distance bins, "
                      "a fixed 1x1 convolution) and the box decoder against the anchor points", (1, 3, 96, 96),
                      yolov8_detect),
    "mobilenet_v3_small": ("MobileNetV3-Small 1.0 224: hard-swish, squeeze-excite (global average pool, ReLU, "
                           "hard-sigmoid, a broadcast Mul), 1000 classes", (1, 3, 224, 224), mobilenet_v3_small),
}


def build(name, photo_batches):
    """The architecture with seeded weights, positive BatchNorm shifts and BatchNorm statistics from
    ``photo_batches`` (NCHW float arrays in [-1, 1], any size: resized to the input), in eval mode."""
    import zlib

    torch, nn, F = _nn()
    _, shape, factory = ARCHITECTURES[name]
    torch.manual_seed(zlib.crc32(name.encode()))
    model = factory()
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out")
            if m.bias is not None:
                nn.init.uniform_(m.bias, -0.1, 0.1)
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.uniform_(m.weight, 0.5, 1.0)
            nn.init.uniform_(m.bias, 0.2, 0.8)   # activations off the ReLUs' corner
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None
    model.train()
    with torch.no_grad():
        for batch in photo_batches:
            model(F.interpolate(torch.as_tensor(batch), size=shape[2:], mode="bilinear", antialias=True,
                                align_corners=False))
    return model.eval()
