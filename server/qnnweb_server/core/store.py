"""Changes to the models folder (uploads, sidecars, deletions): atomic, serialized and logged.

An upload is written to a temporary dotfile in the models folder (no folder listing shows dotfiles)
while its sha256 is computed, fsynced, then renamed over its target and the folder fsynced: a crash
at any point leaves the old version or the new one, never a part of a file. Writers hold an
exclusive ``flock`` on the folder's ``.write.lock`` while they check a precondition (exists? the
sha256 a client expects?) and rename, so concurrent uploads of one name, from any worker process,
end with one whole version, and ``If-Match`` compares against what is really there. An upload in
progress holds a lock on its own temporary file: what a killed server left is removed, what a live
one is writing is not. Every change is logged (logger ``qnnweb_server.changes``) and appended to
``changes.jsonl`` in the data folder.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import stat
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qnnweb_server.core.safe_files import safe_file
from qnnweb_server.core.versions import open_version

log = logging.getLogger("qnnweb_server.changes")

UPLOAD_PREFIX = ".upload-"
LOCK_NAME = ".write.lock"


class StoreError(Exception):
    """A change refused; ``status`` is the HTTP status that says why."""

    status = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class TooLarge(StoreError):
    status = 413


class Conflict(StoreError):
    status = 409


class PreconditionFailed(StoreError):
    status = 412


class NotFound(StoreError):
    status = 404


@dataclass(frozen=True)
class Condition:
    """When a write may replace what is there: ``overwrite`` (anything), ``if_match`` (the current
    version's sha256, as an ETag ``"<sha256>"``; ``*``: any version), ``if_none_match`` (``*``: only if
    there is none). Without any: only if there is none."""

    overwrite: bool = False
    if_match: str | None = None
    if_none_match: str | None = None

    def check(self, name: str, current_sha256: str | None) -> None:
        if self.if_none_match is not None and self.if_none_match.strip() == "*" and current_sha256 is not None:
            raise PreconditionFailed(f"{name} exists (If-None-Match: *)")
        if self.if_match is not None:
            if current_sha256 is None:
                raise PreconditionFailed(f"{name} does not exist (If-Match needs a current version)")
            tags = {t.strip().removeprefix("W/") for t in self.if_match.split(",")}
            if "*" not in tags and (current_sha256 == NOT_SERVED or f'"{current_sha256}"' not in tags):
                now = f"its sha256 is now {current_sha256}" if current_sha256 else "it is not a file the server serves"
                raise Conflict(f"{name} has changed: {now}, not {self.if_match}")
            return
        if current_sha256 is not None and not self.overwrite:
            raise Conflict(f"{name} exists: send ?overwrite=true, or If-Match: \"<its sha256>\" to replace it")


class Upload:
    """A file being written into ``folder`` under a temporary name, hashed as it is written."""

    def __init__(self, folder: Path, limit: int) -> None:
        self.folder = folder
        self.limit = limit
        fd, path = _temporary(folder)
        self.path = Path(path)
        self.file = os.fdopen(fd, "wb")
        fcntl.flock(self.file, fcntl.LOCK_EX)  # "in progress": remove_stale_uploads leaves it alone
        self.size = 0
        self.digest = hashlib.sha256()

    def write(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self.limit:
            raise TooLarge(f"the upload is larger than the limit of {self.limit} bytes (--max-upload-mb)")
        self.file.write(chunk)
        self.digest.update(chunk)

    def finish(self) -> bytes:
        """Flush and fsync; the bytes written (for validation)."""
        self.file.flush()
        os.fsync(self.file.fileno())
        return self.path.read_bytes()

    @property
    def sha256(self) -> str:
        return self.digest.hexdigest()

    def discard(self) -> None:
        self.file.close()
        self.path.unlink(missing_ok=True)


def _temporary(folder: Path) -> tuple[int, str]:
    folder.mkdir(parents=True, exist_ok=True)
    return tempfile.mkstemp(dir=folder, prefix=UPLOAD_PREFIX, suffix=".part")


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """The models folder's write lock (every process of the server shares it)."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / LOCK_NAME, "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


NOT_SERVED = ""  # what current_sha256 says of an entry the server does not serve (a symlink leading out)


def current_sha256(folder: Path, name: str) -> str | None:
    """The sha256 of the file the server serves as ``name``; None if there is no entry of that name,
    ``NOT_SERVED`` if there is one the server does not serve (it is replaced as a link, never followed)."""
    try:
        st = os.lstat(folder / name)
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(st.st_mode):
        raise Conflict(f"{name} is a folder")
    path = safe_file(folder, name, {os.path.splitext(name)[1].lower()})
    version = None if path is None else open_version(path)
    if version is None:
        return NOT_SERVED
    with version:
        return version.sha256


def commit(upload: Upload, name: str, condition: Condition) -> bool:
    """Rename the finished upload to ``name`` if ``condition`` holds; True if it created the file."""
    target = upload.folder / name
    try:
        with folder_lock(upload.folder):
            before = current_sha256(upload.folder, name)
            condition.check(name, before)
            os.replace(upload.path, target)
            _fsync_folder(upload.folder)
    except BaseException:
        upload.discard()
        raise
    upload.file.close()
    return before is None


def write_small(folder: Path, name: str, data: bytes) -> bool:
    """Atomically write a small file (a sidecar); True if it created the file."""
    upload = Upload(folder, len(data))
    try:
        upload.write(data)
        upload.finish()
    except BaseException:
        upload.discard()
        raise
    return commit(upload, name, Condition(overwrite=True))


def delete(folder: Path, name: str, condition: Condition | None = None) -> str:
    """Remove ``name`` (if ``condition`` holds, when given); its sha256. NotFound if it is not there."""
    target = folder / name
    with folder_lock(folder):
        before = current_sha256(folder, name)
        if before is None or before == NOT_SERVED:
            raise NotFound(f"no such file: {name}")
        if condition is not None and condition.if_match is not None:
            condition.check(name, before)
        target.unlink()
        _fsync_folder(folder)
    return before


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


STALE_SECONDS = 60  # an upload's file is locked a moment after it is made: younger ones are left


def remove_stale_uploads(folder: Path) -> list[str]:
    """Delete the temporary files of uploads no process is writing (a server killed mid-upload)."""
    removed = []
    try:
        entries = [p for p in folder.iterdir() if p.name.startswith(UPLOAD_PREFIX)]
    except OSError:
        return removed
    for path in entries:
        try:
            if time.time() - path.stat().st_mtime < STALE_SECONDS:
                continue
            with open(path, "rb") as f:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                path.unlink()
                removed.append(path.name)
        except OSError:
            continue  # being written (locked), or gone already
    return removed


def record_change(data_dir: Path, action: str, name: str, client: str | None, **details: Any) -> None:
    """Log one change and append it to ``<data_dir>/changes.jsonl``."""
    entry = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "action": action, "name": name,
             "client": client, **details}
    line = json.dumps(entry, sort_keys=True)
    log.info("%s", line)
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        with open(data_dir / "changes.jsonl", "a", encoding="utf-8") as f:
            fcntl.flock(f, fcntl.LOCK_EX)  # one whole line per change, whatever the number of workers
            f.write(line + "\n")
    except OSError:
        log.exception("could not append to the change log")
