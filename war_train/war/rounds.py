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
- ``steal`` (work stealing, the other remedy for a straggler): lock-step like ``sync``, but a
  worker that has finished its window takes over unfinished worlds of the worker with the most
  work left (``steal=`` a factory of guest envs: ``num_envs -> env`` of the same scenario).
  Nothing is dropped: the round's batch has ``sync``'s transitions in ``sync``'s rows (bit for
  bit the same with a deterministic policy; a sampling policy draws the moved worlds' actions in
  another order from its generator).

How a steal works.  A worker steps the worlds it holds in one collector at a time.  When worker
``w`` is idle, it picks the holding ``h`` (``n`` worlds, ``L`` window steps left, on a worker
whose measured cost this round is ``c_h`` seconds per world-step) with the largest estimated
remainder ``L·n·c_h``, and takes ``m = round(n·c_h / (c_h + c_w))`` of its worlds: the split at
which both finish together when a step's cost is proportional to its worlds (the declared
per-decision costs; 60 % of a 1.5x straggler's worlds).  It steals only when that finish, plus
the move's price, is earlier than ``h`` finishing alone.  Both parts move into guest collectors
over guest envs of exactly their size — the thief's on its own ``InferenceCost`` and clock, the
kept part on the victim's (a batched env cannot drop worlds, so the victim's own collector
parks) — with ``Collector.export_worlds``/``import_worlds``: env state (``get_state`` /
``set_state``), observations, the carried fragments (macro-steps and pending decisions) and
episode counters; their windows continue the victim's (``continue_window``).  Another idle worker
may later split any holding again.  When every holding of an owner's worlds is done, the rows
come home (``take_rows``), the final world states are moved back into the owner's env, the
owner's ``stats`` replays the guests' steps (rewards, infos, dones scattered to its worlds) and
the owner's window ends as ``sync``'s would — the next round starts from the same state.  The
price of every move is its *measured* copy time (export + import), paid on the victim's clock
(and the thief's, which waits for it) going out and on the owner's coming back, when the
collectors count measured time (``env_time``).  Stealing is simulated on virtual clocks, with
lock-step schedules and windows of a fixed number of steps (a moved world must land in the same
rows).

Virtual clocks are simulated event by event (always advance the worker whose clock is
earliest), so preemption happens at the same modelled instant it would in real time; with
wall clocks every worker runs in its own thread (``threads=True``).
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time

import torch

from war_envs.core import validation as v
from war_train.rollout.collector import Collector, Trigger, WindowBatch

__all__ = ["ARMS", "Round", "collect_round"]

ARMS = ("sync", "ddppo", "steal", "overlap", "war")


@dataclasses.dataclass
class Round:
    windows: list[WindowBatch]
    seconds: float                 # modelled (virtual clocks) or measured round duration
    preempted: int = 0             # workers stopped early (DD-PPO)
    moves: list = dataclasses.field(default_factory=list)  # steals: {owner, victim, thief, worlds, kept, step, seconds}
    move_seconds: float = 0.0      # measured copy time of every move (out and back)

    @property
    def stolen(self) -> int:
        """World moves to another worker in this round (steal)."""
        return sum(len(m["worlds"]) for m in self.moves)


def _progress(c: Collector, trigger: Trigger) -> float:
    if trigger.max_steps:
        return c.window_steps / trigger.max_steps
    if trigger.batch_size:
        return c.ready() / trigger.batch_size
    return 1.0


def collect_round(collectors: list[Collector], triggers: list[Trigger], version: int, *,
                  ddppo: tuple[float, float] | None = None, steal=None, threads: bool = False,
                  stop=None) -> Round:
    """One window from every worker.  ``ddppo=(sync_frac, min_frac)`` turns on preemption;
    ``steal`` (a factory ``num_envs -> env`` of guest envs of the workers' scenario) turns on
    work stealing.  ``stop(t)``: asked before each env step of a worker that has taken ``t``
    steps of its window; True preempts the window there (the torchrun rank-level straggler
    rules, ``war_train.learn.distributed``: one worker, no stealing, no threads)."""
    if stop is not None and (len(collectors) != 1 or steal is not None or threads):
        raise ValueError("stop: a rank-level stop rule needs one worker without stealing or threads")
    if len(collectors) != len(triggers) or not collectors:
        raise ValueError("collectors, triggers: expected one trigger per collector (at least one)")
    if ddppo is not None:
        v.check_float("sync_frac", ddppo[0], low=0.0, high=1.0)
        v.check_float("min_frac", ddppo[1], low=0.0, high=1.0)
    if steal is not None:
        _check_steal(collectors, triggers, ddppo, steal, threads)
        return _round_steal(collectors, triggers, version, steal)
    if threads and len(collectors) > 1:
        return _round_threads(collectors, triggers, version, ddppo)
    return _round_events(collectors, triggers, version, ddppo, stop)


def _round_events(collectors, triggers, version, ddppo, stop=None) -> Round:
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
        if trig.check(c.ready, c.window_steps, c.clock.now()):
            windows[j] = c.end_window(trig.reason)
            active.remove(j)
            finished += 1
            if need is not None and t_pre is None and finished >= need:
                t_pre = c.elapsed
            continue
        if (t_pre is not None and c.elapsed >= t_pre and _progress(c, trig) >= ddppo[1]) or \
                (stop is not None and stop(c.window_steps)):
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
                if trig.check(c.ready, c.window_steps, c.clock.now()):
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


# ----------------------------------------------------------------------------- work stealing
def _check_steal(collectors, triggers, ddppo, steal, threads) -> None:
    if not callable(steal):
        raise TypeError(f"steal: expected a factory num_envs -> env of guest envs (the workers' scenario), "
                        f"got {type(steal).__name__}")
    if ddppo is not None:
        raise ValueError("steal, ddppo: work stealing keeps the data DD-PPO's preemption drops; pass one of them")
    if len(collectors) < 2:
        raise ValueError("collectors: work stealing moves worlds between workers; expected at least 2 workers")
    if threads:
        raise ValueError("threads: work stealing is simulated event by event on virtual clocks; use threads=False")
    for j, (c, trig) in enumerate(zip(collectors, triggers)):
        if not c.cost.virtual:
            raise ValueError(f"collectors[{j}]: work stealing is simulated on virtual clocks, got a wall clock")
        if trig.batch_size or trig.max_wait or not trig.max_steps:
            raise ValueError(f"triggers[{j}]: work stealing needs windows of a fixed number of steps "
                             f"(Trigger(max_steps=T) only): a moved world's transitions must land in the same rows")
        if any(k > 1.0 for k in c.schedule.interval.values()):
            raise ValueError(f"collectors[{j}]: work stealing needs the lock-step schedule (every group decides "
                             f"at every step), got intervals {c.schedule.interval}")


@dataclasses.dataclass(eq=False)
class _Holding:
    """Worlds of one owner's window stepped by one collector: the owner's own, or a guest."""

    owner: int
    holder: int                   # the worker whose resources and clock step them
    collector: Collector
    worlds: torch.Tensor          # the owner's indices of the collector's worlds
    row0: int = 0                 # the owner's window row of the collector's row 0
    first: int = 0                # the owner's window step of the collector's first step
    log: "_StepLog | None" = None
    state: str = "running"        # running / split / done
    finish: float = 0.0           # when it was done, on the round's time axis

    @property
    def step(self) -> int:
        """The owner's window step its worlds have reached."""
        return self.row0 + self.collector.window_steps


class _StepLog:
    """A guest collector's ``stats``: each step's rewards, infos and dones, copied, to be replayed
    into the owner's episode statistics when the worlds come home."""

    def __init__(self) -> None:
        self.steps: list = []

    def step(self, rew, info, done) -> None:
        self.steps.append(_copy_tree((rew, info, done)))


def _copy_tree(x):
    if isinstance(x, torch.Tensor):
        return x.clone()
    if isinstance(x, dict):
        return {k: _copy_tree(val) for k, val in x.items()}
    if isinstance(x, tuple):
        return tuple(_copy_tree(val) for val in x)
    return x


def _scatter(parts: list, E: int):
    """One tree of ``[E, ...]`` tensors from per-part trees of ``[len(idx), ...]`` tensors
    (``parts``: ``(idx, tree)``); leaves that are not per world are taken from the first part."""
    idx0, first = parts[0]
    if isinstance(first, torch.Tensor) and first.dim() and first.shape[0] == len(idx0):
        out = first.new_zeros((E, *first.shape[1:]))
        for idx, x in parts:
            out[idx.to(out.device)] = x
        return out
    if isinstance(first, dict):
        return {k: _scatter([(idx, x[k]) for idx, x in parts], E) for k in first}
    if isinstance(first, tuple):
        return tuple(_scatter([(idx, x[i]) for idx, x in parts], E) for i in range(len(first)))
    return first


def _round_steal(collectors, triggers, version, make_env) -> Round:
    W = len(collectors)
    T = [trig.max_steps for trig in triggers]
    for c, trig in zip(collectors, triggers):
        c.begin_window(version)
        trig.start(c.clock.now())
    t0 = [c.clock.now() for c in collectors]

    def now(w: int) -> float:  # the round's time axis: every worker's clock since the round began
        return collectors[w].clock.now() - t0[w]

    task = [_Holding(j, j, c, torch.arange(c.E, device=c.device)) for j, c in enumerate(collectors)]
    held = [[h] for h in task]
    busy = [[0.0, 0] for _ in range(W)]  # per worker, this round: seconds stepping, world-steps stepped
    rnd = Round(windows=[None] * W, seconds=0.0)
    active = list(range(W))
    while active:
        w = min(active, key=now)
        h = task[w]
        if h is None:  # idle: steal, or retire
            if not _steal(w, task, held, busy, T, collectors, make_env, now, rnd):
                active.remove(w)
            continue
        if h.step >= T[h.owner]:
            h.state, h.finish, task[w] = "done", now(w), None
            if h.collector is collectors[h.owner]:
                rnd.windows[h.owner] = h.collector.end_window("steps")
            elif all(x.state != "running" for x in held[h.owner]):
                rnd.windows[h.owner] = _bring_home(collectors[h.owner], held[h.owner], now(h.owner), rnd)
            continue
        s0 = collectors[w].clock.now()
        h.collector.step()
        busy[w][0] += collectors[w].clock.now() - s0
        busy[w][1] += h.collector.E
    rnd.seconds = max(now(w) for w in range(W))
    return rnd


def _steal(w, task, held, busy, T, collectors, make_env, now, rnd) -> bool:
    """Idle worker ``w`` takes worlds of the running holding with the most estimated work left,
    when that ends earlier than letting it finish alone (see the module docstring)."""
    if not busy[w][1]:
        return False
    c_w = busy[w][0] / busy[w][1]
    best = None
    for x in task:
        if x is None or x.collector.E < 2 or T[x.owner] - x.step < 1 or not busy[x.holder][1]:
            continue
        c_x = busy[x.holder][0] / busy[x.holder][1]
        left = (T[x.owner] - x.step) * x.collector.E * c_x
        if best is None or left > best[0]:
            best = (left, x, c_x)
    if best is None:
        return False
    left, x, c_x = best
    n, v, steps = x.collector.E, x.holder, T[x.owner] - x.step
    m = min(n - 1, max(1, round(n * c_x / (c_x + c_w)))) if c_x + c_w > 0 else n // 2
    # the price: this round's measured copy seconds per world, out and back (none measured yet: 0)
    copied = sum(len(mv["worlds"]) + mv["kept"] for mv in rnd.moves)
    per_world = sum(mv["seconds"] for mv in rnd.moves) / copied if copied else 0.0
    price = 2 * n * per_world if collectors[v].env_time else 0.0
    start = max(now(w), now(v) + price)
    finish = max(start + steps * m * c_w, now(v) + price + steps * (n - m) * c_x)
    if finish >= now(v) + left:
        return False
    pos = x.step
    kept, moved, seconds = _split(x, w, m, collectors, make_env)
    rnd.moves.append({"owner": x.owner, "victim": v, "thief": w, "worlds": moved.worlds.tolist(), "kept": n - m,
                      "step": pos, "seconds": seconds})
    rnd.move_seconds += seconds
    held[x.owner] += [kept, moved]
    task[v], task[w] = kept, moved
    wait = now(v) - now(w)  # the thief starts the worlds once the victim has copied them out
    if wait > 0:
        collectors[w].clock.advance(wait)
    return True


def _split(x: _Holding, w: int, m: int, collectors, make_env) -> tuple[_Holding, _Holding, float]:
    """Move the last ``m`` worlds of holding ``x`` into a guest collector on worker ``w`` and
    the others into one on ``x``'s own worker; ``x`` stops.  Returns both parts and the
    measured copy seconds."""
    c, v, n = x.collector, x.holder, x.collector.E
    pos = x.step
    lead = 1 if pos > 0 else 0
    parts = []
    for holder, local in ((v, torch.arange(n - m, device=c.device)), (w, torch.arange(n - m, n, device=c.device))):
        log = _StepLog() if collectors[x.owner].stats is not None else None
        guest = Collector(make_env(len(local)), c.policy, gamma=c.gamma, schedule=c.schedule,
                          cost=collectors[holder].cost, draft_groups=c.draft_groups, stats=log, env_time=c.env_time,
                          frames=c.frames, hidden_size=c.hidden_size, critic_input=c.critic.critic_input,
                          critic_time=c.critic.time)
        parts.append(_Holding(x.owner, holder, guest, x.worlds[local], row0=pos - lead, first=pos, log=log))
    s0 = time.perf_counter()
    for part, local in zip(parts, (torch.arange(n - m), torch.arange(n - m, n))):
        part.collector.import_worlds(c.export_worlds(local))
    seconds = time.perf_counter() - s0
    for part in parts:
        part.collector.continue_window(c.version, lead)
    if c.env_time:
        collectors[v].clock.advance(seconds)
    x.state = "split"
    return parts[0], parts[1], seconds


def _bring_home(own: Collector, holdings: list[_Holding], own_now: float, rnd: Round) -> WindowBatch:
    """Every holding of ``own``'s worlds is done: rows, final world states and episode steps come
    home; the owner's window ends as lock-step's would."""
    guests = holdings[1:]
    done = [h for h in guests if h.state == "done"]
    s0 = time.perf_counter()
    for h in done:
        own.import_worlds(h.collector.export_worlds(torch.arange(h.collector.E)), worlds=h.worlds)
    seconds = time.perf_counter() - s0
    for h in guests:
        own.take_rows(h.collector, h.worlds, h.row0)
    if own.stats is not None:
        by_step: dict[int, list] = {}
        for h in guests:
            for k, record in enumerate(h.log.steps):
                by_step.setdefault(h.first + k, []).append((h.worlds, record))
        for r in sorted(by_step):
            if sum(len(idx) for idx, _ in by_step[r]) != own.E:
                raise RuntimeError(f"steal: window step {r} was not stepped exactly once in every world")
            own.stats.step(*_scatter(by_step[r], own.E))
    own.clock.advance(max(0.0, max(h.finish for h in done) - own_now) + (seconds if own.env_time else 0.0))
    rnd.move_seconds += seconds
    for h in guests:
        h.collector.env.close()
    return own.end_window("steps")
