"""One collection round over several workers, for each arm of the WAR harness (docs/war.md, "The arms").

A *worker* is one ``Collector`` over its own batched env (a shard of the worlds) with its own
inference resources and clock.  A round asks every worker for one window and returns the
windows and the round's duration:

- ``sync``: lock-step (every group decides at every step); the round ends when the slowest
  worker is done (duration = max over workers).
- ``war``: the workers' collectors follow their WAR schedules; duration = max over workers.
- ``ddppo``: lock-step, with DD-PPO's preemption (Wijmans et al. 2020): once a fraction
  ``sync_frac`` (0.6) of the workers have finished their window, every worker that has done at
  least ``min_frac`` (25 %) of its window stops; shortened windows are used as they are.
  Stragglers here are *workers* (jitter in their costs): DD-PPO cannot shorten the wait for a
  slow agent inside every world — all workers wait for it alike.
- ``overlap`` (HTS-RL, Liu et al. 2020): collection as ``sync``; the caller overlaps learning
  on the previous batch with this round (behaviour policy one version behind).

Virtual clocks are simulated event by event (always advance the worker whose clock is
earliest), so preemption happens at the same modelled instant it would in real time; with
wall clocks every worker runs in its own thread (``threads=True``).
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time

from war_envs.core import validation as v
from war_envs.war.collector import Collector, Trigger, WindowBatch

__all__ = ["ARMS", "Round", "collect_round"]

ARMS = ("sync", "ddppo", "overlap", "war")


@dataclasses.dataclass
class Round:
    windows: list[WindowBatch]
    seconds: float                 # modelled (virtual clocks) or measured round duration
    preempted: int = 0             # workers stopped early (DD-PPO)


def _progress(c: Collector, trigger: Trigger) -> float:
    if trigger.max_steps:
        return c.window_steps / trigger.max_steps
    if trigger.batch_size:
        return c.ready() / trigger.batch_size
    return 1.0


def collect_round(collectors: list[Collector], triggers: list[Trigger], version: int, *,
                  ddppo: tuple[float, float] | None = None, threads: bool = False) -> Round:
    """One window from every worker.  ``ddppo=(sync_frac, min_frac)`` turns on preemption."""
    if len(collectors) != len(triggers) or not collectors:
        raise ValueError("collectors, triggers: expected one trigger per collector (at least one)")
    if ddppo is not None:
        v.check_float("sync_frac", ddppo[0], low=0.0, high=1.0)
        v.check_float("min_frac", ddppo[1], low=0.0, high=1.0)
    if threads and len(collectors) > 1:
        return _round_threads(collectors, triggers, version, ddppo)
    return _round_events(collectors, triggers, version, ddppo)


def _round_events(collectors, triggers, version, ddppo) -> Round:
    W = len(collectors)
    for c, trig in zip(collectors, triggers):
        c.begin_window(version)
        trig.start(c.clock.now())
    windows: list[WindowBatch | None] = [None] * W
    active = list(range(W))
    finished = preempted = 0
    t_pre = None
    need = math.ceil(ddppo[0] * W) if ddppo else None
    while active:
        j = min(active, key=lambda i: collectors[i].elapsed)
        c, trig = collectors[j], triggers[j]
        if trig.check(c.ready(), c.window_steps, c.clock.now()):
            windows[j] = c.end_window(trig.reason)
            active.remove(j)
            finished += 1
            if need is not None and t_pre is None and finished >= need:
                t_pre = c.elapsed
            continue
        if t_pre is not None and c.elapsed >= t_pre and _progress(c, trig) >= ddppo[1]:
            windows[j] = c.end_window("preempted", preempted=True)
            active.remove(j)
            preempted += 1
            continue
        c.step()
    return Round(windows=windows, seconds=max(w.clock_seconds for w in windows), preempted=preempted)


def _round_threads(collectors, triggers, version, ddppo) -> Round:
    W = len(collectors)
    need = math.ceil(ddppo[0] * W) if ddppo else None
    lock = threading.Lock()
    state = {"finished": 0, "preempted": 0}
    stop = threading.Event()
    windows: list[WindowBatch | None] = [None] * W
    errors: list[BaseException] = []

    def work(j: int) -> None:
        c, trig = collectors[j], triggers[j]
        try:
            trig.start(c.clock.now())
            while True:
                if trig.check(c.ready(), c.window_steps, c.clock.now()):
                    windows[j] = c.end_window(trig.reason)
                    with lock:
                        state["finished"] += 1
                        if need is not None and state["finished"] >= need:
                            stop.set()
                    return
                if stop.is_set() and _progress(c, trig) >= ddppo[1]:
                    windows[j] = c.end_window("preempted", preempted=True)
                    with lock:
                        state["preempted"] += 1
                    return
                c.step()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(exc)
            stop.set()

    for c in collectors:
        c.begin_window(version)
    t0 = time.perf_counter()
    pool = [threading.Thread(target=work, args=(j,), name=f"war-worker-{j}") for j in range(W)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    if errors:
        raise errors[0]
    return Round(windows=windows, seconds=time.perf_counter() - t0, preempted=state["preempted"])
