"""The state of one ONNX import, which every handler takes as ``ctx``: the IR graph being built
(tensors, ops), the ONNX names it knows (values, constants, quantization, views), the model's nodes
and who reads what, and the problems found so far."""

from collections import defaultdict

from ...graph import Op, Tensor
from .skip import Skip


class Value:
    """An ONNX tensor as the IR sees it: an IR tensor index, and whether that IR tensor holds the
    ONNX NCHW tensor transposed to NHWC. A 5-D one, [N, A, B, H, W] held [N, H, W, A, B] (the channels
    split in two), only between the Reshape that splits them and the Transpose and Reshape after it,
    which move the channels alone (shape.py, ShuffleNet's channel shuffle): other handlers take
    NHWC tensors as 4-D."""

    def __init__(self, index, nhwc=False):
        self.index, self.nhwc = index, nhwc


class ImportContext:
    """One import of one model (importer.import_graph)."""

    def __init__(self, model, input_shapes=None):
        self.model = model
        self.input_shapes = dict(input_shapes or {})   # input name -> shape given by the caller
        self.graph = model.graph
        self.opsets = {(o.domain or "ai.onnx"): o.version for o in model.opset_import}
        self.tensors, self.ops, self.problems = [], [], []
        self.values = {}            # ONNX name -> Value (int8 or float activations in the IR)
        self.constants = {}         # ONNX name -> Constant
        self.quantized_constants = {}   # ONNX name (DQ output) -> QuantizedConstant
        self.views = {}             # ONNX name (float DQ output) -> ONNX name of the int8 tensor it dequantizes
        self.tabulated_inputs = {}  # ONNX name (a LayerNormalization's float input) -> (ONNX name of an int8
                                    # tensor, float32 tables of its values: tabulated.normalization_input)
        self.quantization = {}      # ONNX name of an int8 tensor -> (scale, zero_point in int8 terms, source dtype)
        self.per_axis = {}          # ONNX name -> IR index of its int8 tensor quantized per axis (model edges)
        self.dynamic = {}           # ONNX name of a DynamicQuantizeLinear's uint8 output -> (the names of its
                                    # scale and zero point outputs, IR index of the tensor they are written to)
        self.dynamic_scales = {}    # ONNX name of a Mul's product x_scale * weight scale -> (x_scale's name,
                                    # the weight scale constant's name) (dynamic.py)
        self.truths = {}            # ONNX name of a bool -> (its float32 source's name, "nonzero" or "nan")
        self.bools = set()          # ONNX names of bools held as float32 0 / 1 (booleans.py)
        self.consumers = defaultdict(list)
        self.done = set()           # positions of nodes already handled (fused into an earlier op)
        self.transposed = {}        # (IR index, perm) -> IR index
        self.node_index = {}
        self.failed = set()         # ONNX names that cannot be computed because an earlier op cannot run
        self.node = None            # the node whose handler runs
        self.nodes = []             # the graph's nodes, one object each (importer.import_graph)
        self.outputs = []           # ONNX names of the model's outputs
        self.graph_input_indices = set()   # IR indices of the model's inputs
        self.placeholders = []      # the symbolic input dimensions (past the batch) taken as 1, described
        self.producer_of = None     # ONNX name -> the node that computes it (producers, made once)

    def add_tensor(self, name, shape, dtype, scale=(), zero_point=(), data=None, axis=0):
        if data is None and not all(isinstance(d, int) and d > 0 for d in shape):
            # an activation of a node whose window arithmetic gives no output (corrupt sizes or strides)
            raise Skip(f"its output '{name}' would have shape {list(shape)}; activations must not be empty")
        index = len(self.tensors)
        self.tensors.append(Tensor(index, name, tuple(shape), dtype, tuple(scale), tuple(zero_point), axis, data))
        return index

    def add_op(self, op_type, inputs, outputs, **options):
        self.ops.append(Op(len(self.ops), op_type, list(inputs), list(outputs), options))

    def mark_done(self, node):
        """`node` (an object of self.nodes, a later node) is handled by the current one: skip it."""
        self.done.add(self.node_index[id(node)])


def producers(ctx):
    """{ONNX name: the node that computes it}, made once per import."""
    if ctx.producer_of is None:
        ctx.producer_of = {o: n for n in ctx.nodes for o in n.output}
    return ctx.producer_of
