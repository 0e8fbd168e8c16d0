"""The float32 operation codes of the binary_f32 record (its lowering: binary.py)."""

F32_OPERATIONS = {"ADD": 0, "SUB": 1, "MUL": 2, "DIV": 3}
