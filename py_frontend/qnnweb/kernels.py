"""The kernel modules shipped inside the package, and the choice of variant."""

import functools
from importlib import resources

from .host import host_class as current_host_class

VARIANTS = ("relaxed", "simd128", "scalar")   # best first


def wasm_bytes(variant, threaded=False):
    """A variant's module; ``threaded``: its build for several threads (shared memory, atomics)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown kernel variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    return _module_file(f"qnnweb-{variant}{'-threads' if threaded else ''}.wasm")


@functools.cache
def _module_file(name):
    path = resources.files("qnnweb") / "wasm" / name
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"kernel module {path} is missing: build it with ./build.sh build") from None


@functools.lru_cache(maxsize=None)
def supported_variants(host_class=None, module_bytes=wasm_bytes):
    """The kernel variants this WebAssembly engine (``host_class``: by default the one qnnweb runs
    on here) validates, best first; ``module_bytes``: ``(variant, threaded) -> bytes`` (default: the
    shipped modules)."""
    if host_class is None:
        host_class = current_host_class()
    return tuple(v for v in VARIANTS if host_class.validate(module_bytes(v)))


def select_variant(host_class, requested=None, module_bytes=wasm_bytes):
    """The requested variant if this engine validates it, else the best one it validates."""
    if requested is not None:
        if not host_class.validate(module_bytes(requested)):
            raise RuntimeError(f"this WebAssembly engine does not support the {requested} kernels "
                               f"(it supports: {', '.join(supported_variants(host_class, module_bytes)) or 'none'})")
        return requested
    supported = supported_variants(host_class, module_bytes)
    if not supported:
        raise RuntimeError("this WebAssembly engine validates none of qnnweb's kernel modules")
    return supported[0]
