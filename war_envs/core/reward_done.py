"""One world's reward/done step under the episode protocol (``war_envs.core.episode``), written
once for the MPE and VMAS families (whose kernels differ in how worlds map to threads)."""

from typing import Any

import warp as wp

from war_envs.core.episode import KERNEL_MODULE_OPTIONS, begin_pending_reset

wp.set_module_options(KERNEL_MODULE_OPTIONS)


def reward_done_world(reward, clear_info, finish_step):
    """A Warp function ``(w, e)``: world e's reward/done step.  A pending reset (NEXT_STEP) clears
    the flag, zeroes ``w.reward[e, :]`` and the info (``clear_info(w, e)``) and begins the reset;
    otherwise ``finish_step(w, e, reward(w, e))`` (the scenario's ``reward`` writes the rewards
    and info and returns ``terminal``; the family's ``finish_step`` ends the step)."""

    @wp.func(inline=True)
    def reward_done_one(w: Any, e: int):
        if w.pending_reset[e] != 0:
            w.pending_reset[e] = 0
            zero = type(w.dt)(0.0)
            for i in range(w.reward.shape[1]):
                w.reward[e, i] = zero
            clear_info(w, e)
            begin_pending_reset(e, w.terminated, w.truncated, w.reset_now)
        else:
            terminal = reward(w, e)
            finish_step(w, e, terminal)

    return reward_done_one
