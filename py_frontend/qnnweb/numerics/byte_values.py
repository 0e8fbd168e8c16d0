"""The values of int8 / uint8 bytes, which the 256-entry tables (the lut records) are indexed by."""

RANGES = {"int8": (-128, 127), "uint8": (0, 255)}


def input_values(dtype):
    """The value of each table index (the input byte) for int8 / uint8 inputs."""
    return [b - 256 if dtype == "int8" and b >= 128 else b for b in range(256)]
