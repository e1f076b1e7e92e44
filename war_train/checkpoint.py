"""Atomic, ``torch.load(weights_only=True)``-compatible checkpoints.

A checkpoint is a plain nested dict of tensors, dicts, lists, tuples, ints, floats, bools,
strs and None (what ``weights_only=True`` unpickles).  It is written to a temporary file in
the destination folder, flushed and fsynced, then moved over the destination with
``os.replace`` (atomic on POSIX), and the folder is fsynced: a crash leaves either the old or
the new checkpoint, never a torn one.
"""

from __future__ import annotations

import io
import os
import pathlib
import tempfile

import torch

__all__ = ["FORMAT", "atomic_write_bytes", "save_checkpoint", "load_checkpoint"]

FORMAT = "war_train.mappo/1"


def atomic_write_bytes(path, data: bytes) -> pathlib.Path:
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # mkstemp creates 0600; give it a normal file's mode
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:
        dir_fd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return path
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)
    return path


def save_checkpoint(path, payload: dict) -> pathlib.Path:
    """Serialize ``payload`` (tensors moved to CPU) and write it atomically to ``path``."""
    buffer = io.BytesIO()
    torch.save(_to_cpu(dict(payload, format=FORMAT)), buffer)
    return atomic_write_bytes(path, buffer.getvalue())


def load_checkpoint(path) -> dict:
    """Load a checkpoint written by ``save_checkpoint`` with ``weights_only=True``.

    A folder is taken to mean ``<folder>/checkpoint.pt``.  Raises ``FileNotFoundError`` or
    ``ValueError`` (not a war_train checkpoint) with the path in the message.
    """
    path = pathlib.Path(path)
    if path.is_dir():
        path = path / "checkpoint.pt"
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint: no such file {str(path)!r}")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # corrupt / foreign file
        raise ValueError(f"checkpoint: {str(path)!r} is not a readable war_train checkpoint ({exc})") from exc
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        found = payload.get("format") if isinstance(payload, dict) else type(payload).__name__
        raise ValueError(f"checkpoint: {str(path)!r} has format {found!r}, expected {FORMAT!r}")
    return payload


def _to_cpu(obj):
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: _to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_cpu(v) for v in obj)
    return obj
