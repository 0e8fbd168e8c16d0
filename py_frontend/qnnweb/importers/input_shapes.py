"""The ``input_shapes`` argument of the importers: checked once, and checked against the model's inputs."""


def check_input_shapes(input_shapes):
    """{name: tuple of positive ints}, or a ValueError naming what is wrong."""
    if input_shapes is None:
        return {}
    if not isinstance(input_shapes, dict):
        raise ValueError(f"input_shapes must be a dict {{input name: shape}}, got {type(input_shapes).__name__}")
    out = {}
    for name, shape in input_shapes.items():
        try:
            dims = tuple(int(d) for d in shape)
        except (TypeError, ValueError):
            raise ValueError(f"input_shapes[{name!r}] must be a list of integers, got {shape!r}") from None
        if any(d <= 0 for d in dims):
            raise ValueError(f"input_shapes[{name!r}] = {list(dims)}: dimensions must be positive")
        out[name] = dims
    return out


def unknown_inputs(input_shapes, names):
    unknown = sorted(set(input_shapes) - set(names))
    if unknown:
        raise ValueError(f"input_shapes names {unknown}, which are not inputs of the model (inputs: {sorted(names)})")
