"""Warp start-up: a quiet ``wp.init()``, the kernel cache location, device parsing.

Warp prints an INFO greeting and per-module load lines, and on a machine with no CUDA
driver its native library writes "Could not find or load the NVIDIA CUDA driver" to the
stderr *file descriptor* with ``fprintf``; no Warp setting silences that. ``import
war_envs`` must print nothing, so the first initialisation runs with fd 2 pointed at
/dev/null (only for the duration of ``wp.init()``).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading

import warp as wp

_init_lock = threading.Lock()
_initialized = False


@contextlib.contextmanager
def _silenced_stderr_fd():
    """Point file descriptor 2 at /dev/null for the duration of the block."""
    try:
        sys.stderr.flush()
    except (AttributeError, ValueError):
        pass
    try:
        saved = os.dup(2)
    except OSError:  # no fd 2 (embedded interpreters): nothing to silence
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def init_warp() -> None:
    """Initialise Warp once, quietly. Honours ``WARP_CACHE_PATH`` for the kernel cache.

    Set ``WAR_ENVS_VERBOSE=1`` to see Warp's own start-up and compile messages.
    """
    global _initialized
    if _initialized:
        return
    with _init_lock:
        if _initialized:
            return
        verbose = os.environ.get("WAR_ENVS_VERBOSE", "") not in ("", "0")
        if not verbose:
            wp.config.log_level = wp.LOG_WARNING
            wp.config.quiet = True
        if verbose:
            wp.init()
        else:
            with _silenced_stderr_fd():
                wp.init()
        _initialized = True


def kernel_cache_dir() -> str:
    """Where compiled kernels are kept (``WARP_CACHE_PATH`` or ``~/.cache/warp/<version>``)."""
    init_warp()
    return wp.config.kernel_cache_dir


def resolve_device(device) -> wp.Device:
    """Turn ``"cpu"``, ``"cuda"``, ``"cuda:N"``, a ``torch.device`` or a ``wp.Device`` into a Warp device.

    Raises ``ValueError`` naming ``device`` when it is unknown or not present here.
    """
    init_warp()
    if isinstance(device, wp.Device):
        return device
    name = str(device) if device is not None else "cpu"
    if name == "cuda":
        name = "cuda:0"
    if not (name == "cpu" or (name.startswith("cuda:") and name[5:].isdigit())):
        raise ValueError(f"device: expected 'cpu', 'cuda' or 'cuda:N', got {device!r}")
    available = [d.alias for d in wp.get_devices()]
    if name not in available:
        raise ValueError(
            f"device: {name!r} is not available on this machine (available: {available}); "
            "a CUDA device needs an NVIDIA driver"
        )
    return wp.get_device(name)


class CaptureGuard:
    """Process-wide guard for Warp graph capture.

    On the CPU, Warp's graph capture state is global to the process: while one thread captures,
    a kernel launch or graph replay issued by *another* thread would be recorded into that
    graph instead of running.  Envs therefore run their Warp work under ``shared()`` (many at
    once) and capture under ``exclusive()`` (alone).  Never request ``exclusive()`` while
    holding ``shared()`` in the same thread.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._active = 0
        self._capturing = False
        self._waiting = 0  # threads waiting in _cond (notify only when someone waits)
        self._shared = _SharedHold(self)

    def shared(self):
        """A context manager holding the guard shared (one stateless object, reused: a step
        pays no generator set-up)."""
        return self._shared

    def _wait(self) -> None:
        self._waiting += 1
        try:
            self._cond.wait()
        finally:
            self._waiting -= 1

    def _enter_shared(self) -> None:
        with self._lock:
            while self._capturing:
                self._wait()
            self._active += 1

    def _exit_shared(self) -> None:
        with self._lock:
            self._active -= 1
            if self._active == 0 and self._waiting:
                self._cond.notify_all()

    @contextlib.contextmanager
    def exclusive(self):
        with self._lock:
            while self._capturing or self._active:
                self._wait()
            self._capturing = True
        try:
            yield
        finally:
            with self._lock:
                self._capturing = False
                if self._waiting:
                    self._cond.notify_all()


class _SharedHold:
    """``CaptureGuard.shared()``'s context manager."""

    __slots__ = ("_guard",)

    def __init__(self, guard: CaptureGuard) -> None:
        self._guard = guard

    def __enter__(self) -> None:
        self._guard._enter_shared()

    def __exit__(self, *exc) -> None:
        self._guard._exit_shared()


capture_guard = CaptureGuard()
