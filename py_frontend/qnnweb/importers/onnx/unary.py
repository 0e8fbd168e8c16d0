"""The unary ops (Relu, Sigmoid, HardSwish, HardSigmoid, Tanh, LeakyRelu, Elu, Clip, PRelu and their QLinear
forms) as 256-entry tables, and the float runs onnxruntime's QOperator form leaves between
DequantizeLinear and QuantizeLinear: one table of the composed functions, through the moves between
them (reshapes, transposes, slices ...) and after them (ops/unary.py, ops/prelu.py)."""


from ...errors import Unsupported
from ...numerics.float32 import float32, float32_bytes
from ...numerics.onnxruntime import float_table, onnxruntime_function, prelu_function
from .base import UNARY_LUT_OPS, Skip, Value, _attributes, arity_problem
from .quantization import EXACT_ON_DEQUANTIZED


class UnaryMixin:
    """Handlers mixed into OnnxImporter (state and helpers: base.ImporterBase; _float_tail and
    LAYOUT_OPS: elementwise.ElementwiseMixin)."""

    def _unary(self, op_type, x_name, out_names, params, **options):
        value = self.values[x_name]
        shape = self.tensors[value.index].shape
        out = self._new_output(out_names, shape, params, value.nhwc)
        self._op(op_type, [value.index], [out], **options)

    def _unary_options(self, node, attrs):
        op_type = UNARY_LUT_OPS[node.op_type]
        if op_type == "LEAKY_RELU":
            return op_type, {"alpha": attrs.get("alpha", 0.01)}
        if op_type == "ELU":
            return op_type, {"alpha": attrs.get("alpha", 1.0)}
        if op_type == "HARD_SIGMOID":
            return op_type, {"alpha": attrs.get("alpha", 0.2), "beta": attrs.get("beta", 0.5)}
        if op_type == "CLIP":
            low, high = self._clip_bounds(node)
            return op_type, {"min": low, "max": high}
        return op_type, {}

    def _float_chain(self, name):
        """(ONNX name of its last output, [(op type, options)], [moving nodes]) of the float unary ops
        that follow the float tensor `name` one after another before it is quantized or used (QOperator
        leaves such runs unquantized), moves between them (VALUE_MOVES) included: the unary ops become one
        table of the composed functions (ops/unary.py), computed before the moves (_replay_moves)."""
        chain, moves = [], []
        while True:
            follower, passed = self._next_float_op(name)
            if follower is None or follower.op_type not in UNARY_LUT_OPS:
                break
            moves += passed
            for node in passed:
                self._mark_done(node)
            chain.append(self._unary_options(follower, _attributes(follower)))
            self._mark_done(follower)
            name = follower.output[0]
        return name, chain, moves

    def _next_float_op(self, name):
        """(the one node that uses float `name` next, past moves (VALUE_MOVES); the moves) or (None, []). A
        node met twice (a malformed graph with a cycle) or already handled ends the search."""
        passed = []
        while name not in self.outputs and len(self.consumers[name]) == 1 and self._quantization_ahead(name) is None:
            follower = self.consumers[name][0]
            if (arity_problem(follower) or follower.input[0] != name or follower in passed
                    or self.node_index[id(follower)] in self.done):
                break
            if follower.op_type not in self.VALUE_MOVES:
                return follower, passed
            passed.append(follower)
            name = follower.output[0]
        return None, []

    # ops that only move or select values (one input tensor, one output): they commute with
    # element-wise functions, and run on int8 tensors
    VALUE_MOVES = ("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Slice", "Gather", "DepthToSpace",
                   "SpaceToDepth")

    def _moves_to_output(self, name, max_pool_commutes=lambda: False):
        """The nodes from float `name` to a model output when each is the only consumer and only moves
        values (VALUE_MOVES; MaxPool too where `max_pool_commutes()`), and that output's name; else
        ([], None)."""
        moves = []
        while name not in self.outputs:
            consumers = self.consumers.get(name, [])
            if len(consumers) != 1 or len(moves) > 32 or consumers[0] in moves:
                return [], None
            node = consumers[0]
            movable = node.op_type in self.VALUE_MOVES or (node.op_type == "MaxPool" and max_pool_commutes())
            if not movable or arity_problem(node) or node.input[0] != name or len(node.output) != 1:
                return [], None
            moves.append(node)
            name = node.output[0]
        return moves, name

    def _non_decreasing(self, x, steps):
        """Whether the float32 function of the unary ops `steps` never decreases over the 256 values of
        int8 `x` dequantized (checked on each, as onnxruntime computes them)."""
        function = onnxruntime_function(steps)
        t = self.tensors[self.values[x].index]
        if function is None or len(t.scale) != 1:
            return False
        scale, zero_point = float32(t.scale[0]), t.zero_point[0]
        values = [function(float32(scale * (v - zero_point))) for v in range(-128, 128)]
        return all(a <= b for a, b in zip(values, values[1:]))

    def _replay_moves(self, first, moves, out_names):
        """Copies of the nodes `moves` (the moves a float run passed, or the moves after it to the model's
        output) applied in order to tensor `first` (the run's table output, or its int8 input), the last
        one writing `out_names`."""
        name = first
        for i, move in enumerate(moves):
            node = type(move)()
            node.CopyFrom(move)
            node.input[0] = name
            node.output[0] = out_names[0] if i == len(moves) - 1 else f"{move.output[0]}/composed"
            self._node(node)
            name = node.output[0]
        for alias in out_names[1:]:
            self.values[alias] = self.values[out_names[0]]

    def _tabulated(self, node, name, moves, op_type, inputs, nhwc, input_params=None, **options):
        """The one op whose tables compute float run `name` (started by `node`): float32 where the
        QOperator form leaves the model's last activation in float, else quantized as the
        QuantizeLinear after the run says, a Relu / Clip after it (two activations in a row) clamping
        in the same table. The moves the run passed (`moves`) follow the table's output."""
        composed = f"{node.output[0]}/composed"
        shape = self.tensors[inputs[0]].shape
        if self._float_tail(name):
            table_name = composed if moves else name
            out = self._tensor(table_name, shape, "float32")
            self.values[table_name] = Value(out, nhwc)
            self._op(op_type, inputs, [out], **options)
            if moves:
                self._replay_moves(composed, moves, [name])
            return
        out_names, params, activation = self._quantized_output(node, name, input_params)
        out = self._new_output([composed] if moves else out_names, shape, params, nhwc)
        self._op(op_type, inputs, [out], activation=activation, **options)
        if moves:
            self._replay_moves(composed, moves, out_names)

    def _qdq_unary(self, node, attrs):
        x = self._activation_input(node.input[0])
        op_type, options = self._unary_options(node, attrs)
        name, chain, moves = self._float_chain(node.output[0])
        steps = [(op_type, dict(options))] + chain   # the run's functions, in order
        follower, passed = self._next_float_op(name)
        if follower is not None and follower.op_type == "PRelu" and not moves and not passed:
            # a PRelu next in the float run: its tables compose these ops before it
            self._mark_done(follower)
            self._prelu(follower, x, before=steps)
            return
        if chain:
            options["then"] = chain
        tail, output = self._moves_to_output(name, lambda: self._non_decreasing(x, steps)) if not moves else ([], None)
        if tail and any(m.op_type not in self.LAYOUT_OPS for m in tail):
            # the float result only moves on to the model's output, through ops that take int8 tensors
            # only (Slice, Gather ..., MaxPool where the function never decreases: max commutes with
            # it): they move the int8 input first, the float32 table comes last
            for m in tail:
                self._mark_done(m)
            self._replay_moves(x, tail, [f"{output}/int8"])
            value = self.values[f"{output}/int8"]
            out = self._tensor(output, self.tensors[value.index].shape, "float32")
            self.values[output] = Value(out, value.nhwc)
            self._op(op_type, [value.index], [out], **options)
            return
        if moves and self._float_tail(name) and not self._reshapes_only(moves):
            # a float32 result: the moves (Slice, Transpose ...) run on the int8 input first, which they
            # commute with, and the table writes the model's float output last
            self._replay_moves(x, moves, [f"{name}/int8"])
            x, moves = f"{name}/int8", []
        first_type, first_options = steps[0]
        value = self.values[x]

        def branch_table(reader, branch, after):
            self._tabulated(reader, branch, [], first_type, [value.index], value.nhwc,
                            **dict(first_options, then=[*steps[1:], *after]))
        if not moves and not (self._float_branches(name, branch_table)
                              and self._float_pools(name, x, onnxruntime_function(steps))):
            return   # only pools and further float ops read the run: each made its own int8 result
        # a Relu alone (no run, no moves): its result may be read in float too (EXACT_ON_DEQUANTIZED)
        alone = (node.op_type in EXACT_ON_DEQUANTIZED and node.input[0] in self.views and name == node.output[0]
                 and not moves)
        self._tabulated(node, name, moves, op_type, [value.index], value.nhwc,
                        input_params=self._params_of(x) if alone else None, **options)

    def _float_branches(self, name, branch_table):
        """The float unary ops that read float run `name` beside its other readers, a QuantizeLinear among
        them (the QOperator form quantizes a float activation's result and also feeds it to the next float
        op): each such reader, with the float unary ops after it, becomes a table of its own on the run's
        int8 input, quantized as the QuantizeLinear after it says (``branch_table(reader, its run's last
        output, [(op type, options)] of the reader and the ops after it)`` adds it), and leaves the readers
        of `name`. Returns False when such ops were all that read the run."""
        readers = self.consumers.get(name, [])
        if name in self.outputs or len(readers) < 2:
            return True
        for reader in list(readers):
            if reader.op_type not in UNARY_LUT_OPS or arity_problem(reader) or reader.input[0] != name:
                continue
            branch_type, branch_options = self._unary_options(reader, _attributes(reader))
            branch, chain, moves = self._float_chain(reader.output[0])
            if moves:
                raise Skip(f"its float output '{name}' is read by a {reader.op_type} whose result moves on in float")
            branch_table(reader, branch, [(branch_type, branch_options), *chain])
            self._mark_done(reader)
            readers = [c for c in readers if c is not reader]
        self.consumers[name] = readers
        return bool(readers)

    def _float_pools(self, name, x, function):
        """The GlobalAveragePools that read float run `name` (`function`, the float32 function of int8 `x` as
        onnxruntime computes it, a list of them, one per channel, or None: no pool then) and
        whose results are only quantized: onnxruntime's QOperator form leaves such a pool in float after a
        float op (MobileNetV3's squeeze-excite with HardSwish as one op, opset 14 on). Each becomes the int8
        pool of the run's float32 values, summed, divided and quantized as onnxruntime's float
        GlobalAveragePool and QuantizeLinear do (ops/pooling.py, arithmetic 5), and leaves the readers of
        `name`. Returns False when pools were all that read the run (it needs no table of its own)."""
        readers = self.consumers.get(name, [])
        if name in self.outputs:
            return True
        pools = [c for c in readers if c.op_type == "GlobalAveragePool" and not arity_problem(c) and c.input[0] == name
                 and c.output[0] not in self.outputs]
        t = self.tensors[self.values[x].index]
        if not pools or function is None or len(t.scale) != 1:
            return True
        functions = function if isinstance(function, list) else [function]
        shape = self._onnx_shape(x)
        if len(shape) != 4 or len(functions) not in (1, shape[1]):
            return True   # not a feature map, or slopes along another axis: refused as before
        table = b"".join(float_table("int8", t.scale[0], t.zero_point[0], f) for f in functions)
        for pool in pools:
            try:
                out_names, params, activation = self._quantized_output(pool)
            except Skip:
                continue   # its float result is used in float too: the run stays refused
            self._pool("AVERAGE_POOL_2D", pool, {}, x, out_names, params, activation, global_pool=True,
                       float_table=table)
            self._mark_done(pool)
            readers = [c for c in readers if c is not pool]
        self.consumers[name] = readers
        return bool(readers)   # (pools were made: when none is left, nothing else reads the run)

    def _reshapes_only(self, moves):
        """Whether the moves only reshape (they then run on float32 tensors as well)."""
        return all(m.op_type in ("Reshape", "Flatten", "Squeeze", "Unsqueeze") for m in moves)

    _op_Relu = _op_Sigmoid = _op_HardSwish = _op_HardSigmoid = _op_Tanh = _op_LeakyRelu = _qdq_unary
    _op_Elu = _op_Clip = _qdq_unary

    def _op_PRelu(self, node, attrs):
        self._prelu(node, self._activation_input(node.input[0]))

    def _prelu_slopes(self, node, x_shape):
        """A PRelu's float32 slopes and how they lie on its input of ONNX shape `x_shape`: "one" (for
        all), "feature-map" (one per channel of an NCHW feature map) or "last-axis"."""
        slope = node.input[1]
        if slope in self.quantized_constants:   # DequantizeLinear of an int8 constant: its float32 values
            q = self.quantized_constants[slope]
            slopes, shape = q.dequantized(), q.constant.shape
            if slopes is None:
                raise Skip("a slope quantized per axis is not supported")
        elif slope in self.constants and self.constants[slope].dtype == "float32":
            slopes, shape = self.constants[slope].values(), self.constants[slope].shape
        else:
            raise Skip("the slope must be a float32 constant or a dequantized int8 constant")
        if len(slopes) == 1:
            return slopes, "one"
        if len(x_shape) == 4 and list(shape) in ([x_shape[1], 1, 1], [1, x_shape[1], 1, 1]):
            return slopes, "feature-map"
        if len(x_shape) >= 1 and [d for d in shape if d != 1] == [x_shape[-1]]:
            return slopes, "last-axis"
        raise Skip(f"slope of shape {list(shape)} for an input of shape {list(x_shape)}: only one slope, or "
                   "one per channel")

    def _prelu(self, node, x, before=()):
        """PRelu between DequantizeLinear and QuantizeLinear (onnxruntime's quantizer leaves it in float):
        IR PRELU with the float32 slopes, one per channel of a feature map or one for all, which the
        lowering tabulates as onnxruntime's float op computes them (ops/prelu.py), composed with the
        float unary ops `before` it (on int8 `x`) and after it, further PRelus among them."""
        x_shape = self._onnx_shape(x)
        slopes, layout = self._prelu_slopes(node, x_shape)
        name, chain, moves = self._float_chain(node.output[0])   # float unary ops after it: composed into its tables
        while not moves:
            follower, passed = self._next_float_op(name)
            if follower is None or follower.op_type != "PRelu" or passed:
                break
            # another PRelu in the run: its slopes (per channel too) go into the same tables
            more, more_layout = self._prelu_slopes(follower, x_shape)
            if "one" not in (layout, more_layout) and layout != more_layout:
                raise Skip("PRelus in a row with slopes along different axes are not supported")
            layout = layout if more_layout == "one" else more_layout
            self._mark_done(follower)
            name, after, moves = self._float_chain(follower.output[0])
            chain = chain + [("PRELU", {"slopes": more})] + after
        if moves and self._float_tail(name) and not self._reshapes_only(moves):
            raise Skip("a PRelu's float result moved (Transpose, Slice ...) on its way to the model's output is not "
                       "supported")
        if layout == "last-axis" and self.values[x].nhwc:
            raise Skip(f"slopes along the last axis of an input of shape {list(x_shape)} held as NHWC are not supported")
        made = []   # (the input as the tables read it, the slopes, whether NHWC): made once, when a table reads them

        def inputs():
            if not made:
                index = self._nhwc(x) if layout == "feature-map" else self.values[x].index
                alpha = self._tensor(f"{node.output[0]}/slope", [len(slopes)], "float32", data=float32_bytes(slopes))
                made.append((index, alpha, index != self.values[x].index or self.values[x].nhwc))
            return made[0]

        def branch_table(reader, branch, after):
            index, alpha, nhwc = inputs()
            self._tabulated(reader, branch, [], "PRELU", [index, alpha], nhwc, before=list(before), then=chain + after)
        if not moves and layout in ("one", "feature-map") and \
                not (self._float_branches(name, branch_table)
                     and self._float_pools(name, x, self._slope_functions(slopes, before, chain))):
            return   # only pools and further float ops read the run: each made its own int8 result
        index, alpha, nhwc = inputs()
        self._tabulated(node, name, moves, "PRELU", [index, alpha], nhwc, before=list(before), then=chain)

    def _slope_functions(self, slopes, before, chain):
        """The float32 function of a PRelu run (the ops `before` it, the PRelu, the ops and PRelus `chain` after
        it) as onnxruntime computes it: one where every PRelu has one slope, else a list, one per channel; None
        where an op has no exact model here."""
        further = [o["slopes"] for t, o in chain if t == "PRELU"]
        try:
            function = prelu_function(list(before), chain)
        except Unsupported:
            return None
        count = max([len(slopes)] + [len(f) for f in further])
        if any(len(v) not in (1, count) for v in [slopes] + further):
            return None

        def of_channel(c):
            constants = [v[c if len(v) > 1 else 0] for v in [slopes] + further]
            return lambda v: function(v, constants)
        return of_channel(0) if count == 1 else [of_channel(c) for c in range(count)]

    def _op_QLinearSigmoid(self, node, attrs):
        x = self._qlinear_input(node.input[0], node.input[1], node.input[2])
        params = self._qparams(node.input[3], node.input[4] if len(node.input) > 4 else "", "QLinearSigmoid output")
        self._unary("LOGISTIC", x, [node.output[0]], params)

    def _op_QLinearLeakyRelu(self, node, attrs):
        x = self._qlinear_input(node.input[0], node.input[1], node.input[2])
        params = self._qparams(node.input[3], node.input[4] if len(node.input) > 4 else "", "QLinearLeakyRelu output")
        self._unary("LEAKY_RELU", x, [node.output[0]], params, alpha=attrs.get("alpha", 0.01))
