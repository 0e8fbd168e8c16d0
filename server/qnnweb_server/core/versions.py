"""One version of a file, and what is computed from it once.

A file the server describes or serves is opened once; its size, its sha256 (the ETag), its parsed
contents and the bytes sent all come from that one descriptor, so a file replaced meanwhile gives
either the old version or the new one, never a mix. What is computed from a version (hashes,
descriptions, sidecars, folder listings) is cached under the version's identity: device, inode,
size, mtime and ctime (a rewrite keeping size and mtime still changes ctime, and a rename-replace
the inode). Timestamps are only as fine as the kernel's clock tick, so a version younger than
``RACY_NS`` is not cached (two writes within one tick would share a key: git's "racy" rule).
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self

RACY_NS = 20_000_000  # 20 ms: above the coarsest kernel tick (HZ=100)
HASH_CHUNK = 1 << 20


def identity(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def settled(st: os.stat_result) -> bool:
    """Whether the file's timestamps tell this version apart from any later write."""
    return time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > RACY_NS


class Computed:
    """Values computed from one version of something, each once: concurrent callers of the same key
    wait for the first one's result instead of computing it again. Per (what, path) only the latest
    version's value is kept."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[tuple, Any] = {}
        self._latest: dict[tuple, tuple] = {}
        self._running: dict[tuple, threading.Lock] = {}

    def get(self, what: Any, path: str, version: tuple, compute: Callable[[], Any], cacheable: bool = True) -> Any:
        key = (what, path, version)
        with self._lock:
            if key in self._values:
                return self._values[key]
            running = self._running.setdefault(key, threading.Lock())
        with running:
            with self._lock:
                if key in self._values:
                    return self._values[key]
            try:
                value = compute()
                if cacheable:  # stored before the key stops running: no second computation starts between
                    with self._lock:
                        old = self._latest.get((what, path))
                        if old is not None and old != key:
                            self._values.pop(old, None)
                        self._latest[(what, path)] = key
                        self._values[key] = value
            finally:
                with self._lock:
                    self._running.pop(key, None)
            return value


computed = Computed()


class FileVersion:
    """A file opened once (``open_version``); close it, or use it as a context manager."""

    def __init__(self, path: Path, file: Any) -> None:
        self.path = path
        self.file = file
        self.stat = os.fstat(file.fileno())
        self.identity = identity(self.stat)
        self.settled = settled(self.stat)

    @property
    def size(self) -> int:
        return self.stat.st_size

    def read(self) -> bytes:
        """The whole version's bytes (positional reads: the file offset stays where it is)."""
        fd, size, parts, at = self.file.fileno(), self.stat.st_size, [], 0
        while at < size:
            chunk = os.pread(fd, min(HASH_CHUNK * 16, size - at), at)
            if not chunk:
                break  # truncated in place after it was opened: what is there
            parts.append(chunk)
            at += len(chunk)
        return b"".join(parts)

    def cached(self, what: Any, compute: Callable[[FileVersion], Any]) -> Any:
        """``compute(self)``, once per version of this file."""
        return computed.get(what, str(self.path), self.identity, lambda: compute(self), self.settled)

    @property
    def sha256(self) -> str:
        return self.cached("sha256", _sha256)

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _sha256(version: FileVersion) -> str:
    digest, fd, at = hashlib.sha256(), version.file.fileno(), 0
    while True:
        chunk = os.pread(fd, HASH_CHUNK, at)
        if not chunk:
            return digest.hexdigest()
        digest.update(chunk)
        at += len(chunk)


def open_version(path: Path) -> FileVersion | None:
    """The file's current version, or None if it is gone (deleted, or replaced by a non-file)."""
    try:
        file = open(path, "rb")  # noqa: SIM115 (closed by the caller)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    try:
        version = FileVersion(path, file)
    except BaseException:
        file.close()
        raise
    if not stat.S_ISREG(version.stat.st_mode):
        version.close()
        return None
    return version

