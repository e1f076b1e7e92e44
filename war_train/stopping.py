"""How a training run stops early and safely: on a signal, or on non-finite numbers.

* ``StopRequests``: while a run with a run folder trains, SIGINT (Ctrl-C) and SIGTERM (what
  schedulers and ``kill`` send) do not kill it mid-update: the update in flight finishes, a
  checkpoint is written, and ``train`` returns with ``TrainResult.interrupted_by`` set
  (``run_training`` then raises ``TrainingInterrupted``, which the CLI turns into exit status
  128 + signal number).  A second signal (2 s or more later) stops at once (``KeyboardInterrupt``); the last
  checkpoint is complete either way, since checkpoints are replaced atomically.
* ``NonFiniteTraining``: a NaN or infinity in the env's rewards/observations, a gradient or a
  parameter stops the run before the bad numbers are applied or checkpointed; the message names
  the update and points at the last good checkpoint.

SIGKILL cannot be caught: a killed run resumes from its last complete checkpoint
(``war-train train --resume RUN_DIR``) and continues exactly (tests/test_train_crash.py).
"""

from __future__ import annotations

import pathlib
import signal
import sys
import threading
import time

__all__ = ["StopRequests", "TrainingInterrupted", "NonFiniteTraining", "non_finite"]

SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: a signal this soon after the first is the same request delivered twice (under torchrun, Ctrl-C
#: reaches every rank from the terminal and again from the launcher, which forwards it)
ECHO_S = 2.0


class TrainingInterrupted(Exception):
    """A run stopped by SIGINT/SIGTERM after writing its checkpoint."""

    def __init__(self, signum: int, run_dir, checkpoint, env_steps: int) -> None:
        self.signum, self.run_dir, self.checkpoint, self.env_steps = signum, run_dir, checkpoint, env_steps
        name = signal.Signals(signum).name
        super().__init__(f"{name} received: stopped at {env_steps:,} env steps after writing {checkpoint}; "
                         f"resume with `war-train train --resume {run_dir}`")

    @property
    def exit_status(self) -> int:
        return 128 + self.signum


class NonFiniteTraining(FloatingPointError):
    """NaN/inf met during training; nothing after the last good checkpoint was saved."""


def non_finite(update: int, checkpoint, what: str, hint: str) -> NonFiniteTraining:
    """The error of update ``update`` meeting ``what`` (non-finite values), naming the last good
    ``checkpoint`` (or that none was written) and ``hint``."""
    kept = (f"the last good checkpoint is {checkpoint} (resume with `war-train train --resume "
            f"{pathlib.Path(checkpoint).parent}`)" if checkpoint is not None else "no checkpoint was written yet")
    return NonFiniteTraining(f"training stopped in update {update}: {what}; nothing from this update was "
                             f"saved, {kept}; {hint}")


class StopRequests:
    """Context manager: SIGINT/SIGTERM set ``signum`` instead of interrupting (a second signal,
    ``ECHO_S`` or more after the first, raises ``KeyboardInterrupt``).  Installs nothing when ``enabled`` is False or when not on the
    main thread (Python delivers signals to the main thread only)."""

    def __init__(self, enabled: bool = True, log=None) -> None:
        self.enabled = enabled and threading.current_thread() is threading.main_thread()
        self.signum: int | None = None
        self._first = 0.0
        self._log = log if log is not None else (lambda msg: print(msg, file=sys.stderr, flush=True))
        self._previous: dict[int, object] = {}

    @property
    def requested(self) -> bool:
        return self.signum is not None

    def _handle(self, signum, frame) -> None:
        now = time.monotonic()
        if self.signum is not None:
            if now - self._first < ECHO_S:
                return   # the same request delivered twice (Ctrl-C under torchrun: terminal + launcher)
            self._restore()
            raise KeyboardInterrupt(f"second signal ({signal.Signals(signum).name}): stopping at once")
        self.signum, self._first = signum, now
        self._log(f"\nwar-train: {signal.Signals(signum).name} received; finishing this update and writing a "
                  f"checkpoint (send it again to stop at once)")

    def __enter__(self) -> "StopRequests":
        if self.enabled:
            for s in SIGNALS:
                self._previous[s] = signal.signal(s, self._handle)
        return self

    def _restore(self) -> None:
        for s, handler in self._previous.items():
            signal.signal(s, handler)
        self._previous = {}

    def __exit__(self, *exc) -> None:
        self._restore()
