"""Per-world episode bookkeeping shared by every scenario's kernels (Warp functions).

Each scenario's reward/done kernel runs one owner thread per world; at its end the world's
autoreset is scheduled the same way everywhere, and under NEXT_STEP the step after a done only
resets the world.  The autoreset mode is passed to kernels as these ints.
"""

import warp as wp

#: Warp options of every kernel module of the package.  fuse_fp off: no a*b+c -> FMA contraction,
#: so CPU and CUDA round every operation the same way (and as numpy/mpe2 do); with contraction a
#: scaled draw such as U(-0.9, 0.9) differs by an ulp between the devices.
KERNEL_MODULE_OPTIONS = {"enable_backward": False, "optimization_level": 3, "fuse_fp": False}
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
