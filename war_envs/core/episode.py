"""The episode protocol every scenario's kernels follow, written once (Warp functions).

Per world (one owner thread), a step's reward/done kernel either

- finds ``pending_reset`` set (NEXT_STEP: the previous step ended the episode): it clears the
  flag, zeroes the step's rewards and info, and calls ``begin_pending_reset`` (flags false, the
  world reset by this step's observe kernel, no physics ran); or
- computes rewards and the episode flags, then calls ``end_step(e, term, trunc, ...)``, which
  writes the flags and schedules the autoreset for the mode: SAME_STEP resets the world in this
  step's observe kernel (after keeping its final observation), NEXT_STEP at the next step
  (``pending_reset``), DISABLED never.

The observe kernel then resets the worlds flagged in ``reset_now`` (``start_episode`` advances
the episode counter that keys the world's random stream and restarts the clock) and observes
every world.  ``BatchedEnv.reset`` sets ``reset_now`` itself.  The autoreset mode is passed to
kernels as these ints.
"""

import contextlib
import os

import warp as wp

#: the environment variable that lowers the kernels' optimization level (see ``kernel_optimization_level``)
OPT_LEVEL_VARIABLE = "WAR_ENVS_KERNEL_OPT_LEVEL"


def kernel_optimization_level() -> int:
    """The compiler's optimization level of every kernel module: 3 (the default), or the level
    0-3 in ``$WAR_ENVS_KERNEL_OPT_LEVEL``.  The test suite compiles at 0 (``scripts/dev.sh
    test``): about ten times sooner per module (hundreds of modules on a clean machine), with
    the same results (no FMA contraction at any level: IEEE operations round the same way), and
    slower kernels.  Never for measuring speed: ``benchmarks/`` record the level they ran at."""
    value = os.environ.get(OPT_LEVEL_VARIABLE, "").strip()
    if not value:
        return 3
    if value not in ("0", "1", "2", "3"):
        raise ValueError(f"${OPT_LEVEL_VARIABLE}: expected an optimization level 0, 1, 2 or 3, got {value!r}")
    return int(value)


_LEVEL_INSIDE: list[int] = []  # the levels of the open ``kernels_compiled_at`` blocks, innermost last


@contextlib.contextmanager
def kernels_compiled_at(level: int):
    """Inside this block, the scenario kernel modules made for the first time (every family's, by
    ``war_envs.core.fields.module_kernels``: an env's whole step) are compiled at ``level``
    (0-3) whatever ``$WAR_ENVS_KERNEL_OPT_LEVEL`` says; where that differs from the process's
    level, under a name of their own, so both builds live side by side.  For the long runs of a
    process that compiles at -O0 (the test suite's random-policy statistics: a VMAS joint world
    steps about 90 times slower at -O0 than at -O3); the results are the same at every level."""
    if isinstance(level, bool) or not isinstance(level, int) or level not in (0, 1, 2, 3):
        raise ValueError(f"level: expected an optimization level 0, 1, 2 or 3, got {level!r}")
    _LEVEL_INSIDE.append(level)
    try:
        yield
    finally:
        _LEVEL_INSIDE.pop()


def module_level_suffix() -> tuple[int, str]:
    """The optimization level of a kernel module made now and the suffix of its name: ``""`` at
    the process's level, ``"_O{level}"`` inside a ``kernels_compiled_at`` block of another one."""
    level = _LEVEL_INSIDE[-1] if _LEVEL_INSIDE else KERNEL_MODULE_OPTIONS["optimization_level"]
    return level, "" if level == KERNEL_MODULE_OPTIONS["optimization_level"] else f"_O{level}"


#: Warp options of every kernel module of the package.  fuse_fp off: no a*b+c -> FMA contraction,
#: so CPU and CUDA round every operation the same way (and as numpy/mpe2 do); with contraction a
#: scaled draw such as U(-0.9, 0.9) differs by an ulp between the devices.
KERNEL_MODULE_OPTIONS = {"enable_backward": False, "optimization_level": kernel_optimization_level(),
                         "fuse_fp": False}
wp.set_module_options(KERNEL_MODULE_OPTIONS)

# Autoreset modes, as the ints the kernels see (mirrors gymnasium.vector.AutoresetMode).
AUTORESET_NEXT_STEP = wp.constant(0)
AUTORESET_SAME_STEP = wp.constant(1)
AUTORESET_DISABLED = wp.constant(2)


@wp.func
def schedule_autoreset(
    e: int,
    done: bool,
    mode: int,
    reset_now: wp.array(dtype=wp.int32),
    pending_reset: wp.array(dtype=wp.int32),
):
    """After world ``e``'s step: SAME_STEP resets a done world in this step's observe launch,
    NEXT_STEP in the next step (``pending_reset``), DISABLED never."""
    reset_now[e] = 0
    if done:
        if mode == AUTORESET_SAME_STEP:
            reset_now[e] = 1
        elif mode == AUTORESET_NEXT_STEP:
            pending_reset[e] = 1


@wp.func
def end_step(
    e: int,
    term: bool,
    trunc: bool,
    mode: int,
    terminated: wp.array(dtype=wp.bool),
    truncated: wp.array(dtype=wp.bool),
    reset_now: wp.array(dtype=wp.int32),
    pending_reset: wp.array(dtype=wp.int32),
):
    """World ``e``'s flags for this step (the scenario decides which of the two wins when both
    hold), and its autoreset if either is set."""
    terminated[e] = term
    truncated[e] = trunc
    schedule_autoreset(e, term or trunc, mode, reset_now, pending_reset)


@wp.func
def start_episode(e: int, episode: wp.array(dtype=wp.int32), t: wp.array(dtype=wp.int32)):
    """After world ``e``'s reset draws (keyed by ``(seed_e, episode_e)``): the next episode's key,
    clock at 0."""
    episode[e] = episode[e] + 1
    t[e] = 0


@wp.func
def begin_pending_reset(
    e: int,
    terminated: wp.array(dtype=wp.bool),
    truncated: wp.array(dtype=wp.bool),
    reset_now: wp.array(dtype=wp.int32),
):
    """NEXT_STEP: the step after a done only resets the world (reward 0, flags false)."""
    terminated[e] = False
    truncated[e] = False
    reset_now[e] = 1
