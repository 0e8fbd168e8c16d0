"""Pre-compressed siblings of static files: ``x.wasm.br`` and ``x.wasm.gz`` next to ``x.wasm``, which the
server sends instead when the request's ``Accept-Encoding`` allows (``StaticDir``). Made once, at build
time (``./build.sh build`` runs ``python -m qnnweb_server.precompress`` over the Pyodide folder; any
other folder the server serves statically can be given): brotli at its best quality costs seconds per
megabyte, far too slow for a request. A sibling is remade when its original is newer.

    python -m qnnweb_server.precompress .cache/pyodide [more folders...]
"""

from __future__ import annotations

import argparse
import gzip
import os
import tempfile
from pathlib import Path

from qnnweb_server.static import is_fresh

COMPRESSIBLE = {".bin", ".wasm", ".mjs", ".js", ".json", ".whl", ".zip", ".map", ".css", ".html", ".py", ".txt", ".svg"}
MIN_BYTES = 1024  # smaller files gain nothing worth a second file


def _brotli(data: bytes) -> bytes:
    import brotli  # a build-time dependency only: the server itself never compresses

    return brotli.compress(data, quality=11 if len(data) < (8 << 20) else 9)


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)


COMPRESSORS = {".br": _brotli, ".gz": _gzip}


def precompress(folder: Path) -> list[str]:
    """Make the missing or stale siblings of the compressible files under ``folder``; the files made.
    A sibling that is not smaller than 90 % of its original is not kept (already compressed data)."""
    made = []
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.suffix.lower() not in COMPRESSIBLE or any(
                part.startswith(".") for part in path.relative_to(folder).parts):
            continue
        st = path.stat()
        if st.st_size < MIN_BYTES:
            continue
        data = None
        for suffix, compress in COMPRESSORS.items():
            sibling = path.with_name(path.name + suffix)
            if is_fresh(st, sibling):
                continue
            data = data if data is not None else path.read_bytes()
            packed = compress(data)
            if len(packed) > 0.9 * len(data):
                sibling.unlink(missing_ok=True)
                continue
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=suffix)
            with os.fdopen(fd, "wb") as f:
                f.write(packed)
            os.replace(tmp, sibling)
            made.append(str(sibling))
    return made


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m qnnweb_server.precompress", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folders", nargs="+", type=Path)
    args = p.parse_args(argv)
    for folder in args.folders:
        made = precompress(folder)
        print(f"{folder}: {len(made)} compressed sibling(s) made")


if __name__ == "__main__":
    main()
