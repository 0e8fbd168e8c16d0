"""Numpy reference implementations of the int8 ops qnnweb's kernels run (see reference.int8)."""
