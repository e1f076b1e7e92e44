"""Run outputs while training: ``metrics.csv``, TensorBoard events, JSON-lines side logs and a
stderr progress bar.

The CSV has a fixed header (every row has every column; ``nan`` where an update finished no
episode) and floats written with ``repr`` (round-trip exact), so a resumed run's rows can be
compared number for number with an uninterrupted run's.
"""

from __future__ import annotations

import csv
import io
import json
import math
import pathlib
import sys
import time

from war_envs._extras import needs_extra

__all__ = ["MetricsCSV", "TensorBoard", "ProgressBar", "open_jsonl", "read_metrics", "format_eta"]


def _fmt(value) -> str:
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def read_metrics(path) -> list[dict[str, float]]:
    """Rows of a metrics.csv as dicts of floats (``update``/steps as ints)."""
    rows = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            rows.append({k: (int(v) if k in ("update", "env_steps", "agent_steps", "episodes") else float(v))
                         for k, v in row.items()})
    return rows


def open_jsonl(path, keep_until: int | None = None):
    """A JSON-lines log of one record per update (``{"update": u, ...}``) opened for appending;
    with ``keep_until`` (a resumed run) only the lines of updates up to it are kept, as
    ``MetricsCSV`` keeps its rows (a torn last line is dropped)."""
    path = pathlib.Path(path)
    if keep_until is None or not path.exists():
        return open(path, "w")
    from war_train.checkpoint import atomic_write_bytes

    kept = []
    for line in path.read_text().splitlines():
        try:
            if json.loads(line)["update"] <= keep_until:
                kept.append(line + "\n")
        except (json.JSONDecodeError, KeyError, TypeError):
            continue
    atomic_write_bytes(path, "".join(kept).encode())
    return open(path, "a")


class MetricsCSV:
    """Appends one row per update to ``path``; on resume keeps only rows up to ``keep_until``
    (rows written after the checkpoint by a run that died are dropped)."""

    def __init__(self, path, columns: list[str], keep_until: int | None = None) -> None:
        self.path = pathlib.Path(path)
        self.columns = list(columns)
        if keep_until is not None and self.path.exists():
            with open(self.path, newline="") as f:
                reader = csv.DictReader(f)
                if reader.fieldnames != self.columns:
                    raise ValueError(f"{self.path}: columns differ from this run's; cannot resume into it")
                # a run killed while writing leaves a torn last row: it lacks fields (csv gives None)
                # or belongs to an update after the checkpoint -- either way it is dropped
                kept = [row for row in reader if None not in row.values() and int(row["update"]) <= keep_until]
            # rewritten atomically: a crash while resuming must not lose the rows kept
            from war_train.checkpoint import atomic_write_bytes

            text = io.StringIO()
            writer = csv.writer(text)
            writer.writerow(self.columns)
            for row in kept:
                writer.writerow([row[c] for c in self.columns])
            atomic_write_bytes(self.path, text.getvalue().encode())
            self._file = open(self.path, "a", newline="")
            self._writer = csv.writer(self._file)
        else:
            self._file = open(self.path, "w", newline="")
            self._writer = csv.writer(self._file)
            self._writer.writerow(self.columns)
            self._file.flush()

    def write(self, row: dict) -> None:
        self._writer.writerow([_fmt(row.get(c, float("nan"))) for c in self.columns])
        self._file.flush()

    def close(self) -> None:
        self._file.close()


class TensorBoard:
    """TensorBoard scalars (global step = env steps); a no-op when ``enabled`` is False.

    On resume, events at or after the checkpoint's step are purged (``purge_step``)."""

    def __init__(self, log_dir, enabled: bool, purge_step: int | None = None) -> None:
        self.writer = None
        if not enabled:
            return
        with needs_extra("train", "TensorBoard logging", note="(or pass --no-tensorboard)"):
            from torch.utils.tensorboard import SummaryWriter
        self.writer = SummaryWriter(log_dir=str(log_dir), purge_step=purge_step)

    def write(self, row: dict, step: int) -> None:
        if self.writer is None:
            return
        for key, value in row.items():
            if key in ("update", "env_steps") or not isinstance(value, (int, float)):
                continue
            if isinstance(value, float) and math.isnan(value):
                continue
            self.writer.add_scalar(key, value, global_step=step)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.flush()
            self.writer.close()


def format_eta(seconds: float) -> str:
    if not math.isfinite(seconds) or seconds < 0:
        return "--:--"
    seconds = int(round(seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def _si(x: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= scale:
            return f"{x / scale:.2f}{unit}"
    return f"{x:.0f}"


class ProgressBar:
    """One self-overwriting line on a terminal (a plain line every ``line_every`` s otherwise):
    progress, env-steps/s, the latest episode return and the ETA."""

    def __init__(self, total: int, desc: str, enabled: bool = True, stream=None, line_every: float = 10.0) -> None:
        self.total = total
        self.desc = desc
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.line_every = line_every
        self._last_line = -math.inf
        self._start = (time.perf_counter(), None)

    def update(self, steps: int, steps_this_session: int, ret: float | None, label: str = "return") -> None:
        """``steps``: total so far; ``steps_this_session``: since this process started (or resumed)."""
        if not self.enabled:
            return
        now = time.perf_counter()
        elapsed = now - self._start[0]
        rate = steps_this_session / elapsed if elapsed > 0 else float("nan")
        eta = (self.total - steps) / rate if rate and rate > 0 else float("nan")
        frac = min(1.0, steps / self.total) if self.total else 1.0
        bar = "#" * int(frac * 20) + "." * (20 - int(frac * 20))
        ret_s = "n/a" if ret is None or (isinstance(ret, float) and math.isnan(ret)) else f"{ret:.1f}"
        text = (f"{self.desc} [{bar}] {frac:4.0%} {_si(steps)}/{_si(self.total)} steps | "
                f"{_si(rate) if math.isfinite(rate) else '-'} steps/s | {label} {ret_s} | ETA {format_eta(eta)}")
        if self.tty:
            self.stream.write("\r" + text + "\x1b[K")
            self.stream.flush()
        elif now - self._last_line >= self.line_every or steps >= self.total:
            self.stream.write(text + "\n")
            self.stream.flush()
            self._last_line = now

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()
