"""Atomic, ``torch.load(weights_only=True)``-compatible checkpoints.

A checkpoint is a plain nested dict of tensors, dicts, lists, tuples, ints, floats, bools,
strs and None (what ``weights_only=True`` unpickles).  It is written to a temporary file in
the destination folder, flushed and fsynced, then moved over the destination with
``os.replace`` (atomic on POSIX), and the folder is fsynced: a crash leaves either the old or
the new checkpoint, never a torn one.  A SHA-256 of the content is stored with it and checked
on load, so a corrupted file is refused instead of loading wrong weights.
"""

from __future__ import annotations

import hashlib
import io
import os
import pathlib
import re
import tempfile

import torch

__all__ = ["FORMAT", "READABLE", "REQUIRED", "RESUMABLE", "WAR_RESUMABLE", "atomic_write_bytes", "save_checkpoint",
           "load_checkpoint", "content_digest", "malformed_entries"]

FORMAT = "war_train.mappo/2"
#: formats this version reads; /1 (before the content checksum) is read without verification
READABLE = ("war_train.mappo/1", FORMAT)
#: entries every checkpoint has, and their types (checked on load, before anything uses them)
REQUIRED = {"config": dict, "env": dict, "update": int, "env_steps": int, "wall_s": float, "actors": dict,
            "critics": dict}
#: the further entries a checkpoint needs to resume lock-step training (``war_train.run.lockstep``)
RESUMABLE = {"actor_opts": dict, "critic_opts": dict, "valuenorms": dict, "generator": torch.Tensor,
             "env_state": dict, "obs": dict, "starts": torch.Tensor, "episode_stats": dict}
#: the further entries a WAR run's checkpoint needs to resume (``war_train.war.mode.WarMode.state_dict``)
WAR_RESUMABLE = {"war": dict, "actor_opts": dict, "critic_opts": dict, "valuenorms": dict, "generator": torch.Tensor,
                 "workers": list, "episode_stats": list, "cost_models": dict, "schedule": dict, "drafts": dict,
                 "draft_opts": dict, "version": int, "model_s": float, "lane_generators": dict}


def malformed_entries(payload: dict, spec: dict) -> list[str]:
    """Names in ``spec`` that ``payload`` lacks or holds with another type."""
    return [k for k, kind in spec.items() if not isinstance(payload.get(k), kind)]


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
    """Serialize ``payload`` (tensors moved to CPU) and write it atomically to ``path``.

    Temporary files left by a writer killed mid-write (``.<name>.*.tmp``) are removed first."""
    path = pathlib.Path(path)
    for stale in path.parent.glob(f".{path.name}.*.tmp"):
        stale.unlink(missing_ok=True)
    payload = _to_cpu(dict(payload, format=FORMAT))
    payload["sha256"] = content_digest(payload)
    buffer = io.BytesIO()
    torch.save(payload, buffer)
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
    except Exception as exc:  # truncated, corrupted, or a pickle of arbitrary objects (refused unexecuted)
        raise ValueError(f"checkpoint: {str(path)!r} is not a readable war_train checkpoint (truncated, "
                         f"corrupted or not written by war_train: {type(exc).__name__}: {_reason(exc)})") from None
    if not isinstance(payload, dict) or payload.get("format") not in READABLE:
        found = payload.get("format") if isinstance(payload, dict) else type(payload).__name__
        raise ValueError(f"checkpoint: {str(path)!r} has format {found!r}, expected one of {list(READABLE)}")
    if payload["format"] != READABLE[0] and payload.get("sha256") != content_digest(payload):
        raise ValueError(f"checkpoint: {str(path)!r} is corrupted (its content does not match the checksum "
                         f"written with it)")
    missing = malformed_entries(payload, REQUIRED)
    if missing:
        raise ValueError(f"checkpoint: {str(path)!r} lacks (or has malformed) entries {missing}; "
                         f"it is incomplete or was edited")
    return payload


def _reason(exc: Exception) -> str:
    """The informative part of torch.load's (long, multi-paragraph) error."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))   # torch bolds parts of it with ANSI codes
    for line in text.splitlines():
        if "WeightsUnpickler error:" in line:         # what weights_only refused, e.g. a global
            return line.split("WeightsUnpickler error:", 1)[1].strip().split(". ")[0].rstrip(".")
    first = (text.strip().splitlines() or [type(exc).__name__])[0]
    return first.split(". ")[0].rstrip(".")


def content_digest(payload: dict) -> str:
    """SHA-256 over every entry but ``sha256`` (keys, tensor dtypes/shapes/bytes, scalars): torch's
    zip reader does not verify the data it reads, so a flipped byte would load as a wrong weight."""
    h = hashlib.sha256()

    def feed(obj) -> None:
        if isinstance(obj, torch.Tensor):
            t = obj.detach().cpu().contiguous()
            h.update(f"T{t.dtype}{tuple(t.shape)}".encode())
            h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
        elif isinstance(obj, dict):
            keys = sorted((k for k in obj if not (obj is payload and k == "sha256")), key=repr)
            h.update(f"D{len(keys)}".encode())
            for k in keys:
                h.update(repr(k).encode())
                feed(obj[k])
        elif isinstance(obj, (list, tuple)):
            h.update(f"L{len(obj)}".encode())
            for v in obj:
                feed(v)
        else:
            h.update(f"S{obj!r}".encode())

    feed(payload)
    return h.hexdigest()


def _to_cpu(obj):
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: _to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_cpu(v) for v in obj)
    return obj
