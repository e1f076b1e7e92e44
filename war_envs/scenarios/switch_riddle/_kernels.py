"""Warp kernels of ``SwitchRiddle-v0`` (JaxMARL's ``switch_riddle``), written once for float32 and
float64 worlds.  Arrays are indexed ``[world(, agent)]``.  Every kernel takes the world struct
``w`` (``world_struct``: parameters, episode state and outputs of every world) and runs ``chunk``
consecutive worlds a thread (``BatchedEnv._launch_chunked``: every world in one thread on the CPU,
one world a thread on a GPU).  A world is a few integers: one launch per step does everything.

Step (``riddle_step``, captured into one graph by ``SwitchRiddle``), in JaxMARL's order: the
action of the agent in the room (the others' are ignored) marks it as having been in the room,
switches the bulb or tells; the clock advances; the next agent in the room is drawn; then the
episode protocol (SAME_STEP: the final observation, the reset), and every agent's observation.

No float atomics and no races: each world is its owner thread's, so results are bitwise
reproducible on any device and shard split.
"""

from typing import Any

import warp as wp

from war_envs.core.episode import AUTORESET_DISABLED, AUTORESET_NEXT_STEP  # noqa: F401  (this module's API)
from war_envs.core.episode import AUTORESET_SAME_STEP, KERNEL_MODULE_OPTIONS  # noqa: F401
from war_envs.core.episode import begin_pending_reset, end_step, start_episode
from war_envs.core.fields import clock_fields, flag_fields, module_kernels, struct_type

wp.set_module_options(KERNEL_MODULE_OPTIONS)

#: JaxMARL's ``game_actions``: 0 NOTHING, 1 SWITCH_LIGHT, 2 TELL
NOTHING = wp.constant(0)
SWITCH_LIGHT = wp.constant(1)
TELL = wp.constant(2)
NUM_ACTIONS = 3
#: salt of the in-episode stream (the next agent in the room), apart from the reset stream
STEP_SALT = wp.constant(0x5A17C3)


def struct_fields(F) -> dict:
    """The fields of a SwitchRiddle world struct whose rewards have float type ``F``."""
    return {
        # Params
        "mode": int, "max_steps": int, "initial_bulb": int,
        "reward_all_live": wp.float64, "reward_all_die": wp.float64,
        # State
        **clock_fields(),
        "bulb": wp.array(dtype=wp.int32), "in_room": wp.array(dtype=wp.int32),
        "has_been": wp.array2d(dtype=wp.int32),
        # Injected draws (tests): the next agent in the room, used once where draw_injected is set
        "draw": wp.array(dtype=wp.int32), "draw_injected": wp.array(dtype=wp.int32),
        # Actions
        "action": wp.array2d(dtype=wp.int32),
        # Outputs
        **flag_fields(F),
        "told": wp.array(dtype=wp.int32),
        "success": wp.array(dtype=wp.int32), "visited": wp.array(dtype=wp.int32),
        "obs": wp.array3d(dtype=wp.float32), "final_obs": wp.array3d(dtype=wp.float32),
    }


def world_struct(F):
    """The ``wp.struct`` type of SwitchRiddle worlds with rewards in ``F`` (made once per process)."""
    return struct_type(f"SwitchRiddle_{F.__name__}", __name__, lambda: struct_fields(F))


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


@wp.func(inline=True)
def uniform_below(state: wp.uint32, n: int):
    """Exactly uniform on {0, ..., n - 1}: Lemire's multiply-shift with rejection (the low 32 bits
    of u * n below 2^32 mod n are redrawn; the division runs only when they are below n)."""
    span = wp.uint64(n)
    m = wp.uint64(wp.randu(state)) * span
    low = wp.uint32(m & wp.uint64(0xFFFFFFFF))
    if low < wp.uint32(n):
        reject_below = (wp.uint32(0) - wp.uint32(n)) % wp.uint32(n)  # 2^32 mod n
        while low < reject_below:
            m = wp.uint64(wp.randu(state)) * span
            low = wp.uint32(m & wp.uint64(0xFFFFFFFF))
    return int(m >> wp.uint64(32))


@wp.func(inline=True)
def observe_world(w: Any, e: int, out: wp.array3d(dtype=wp.float32)):
    """Every agent's observation (JaxMARL's ``get_obs``): [1 if it is in the room, 1 if it is in
    the room and the bulb is on]."""
    for i in range(out.shape[1]):
        here = w.in_room[e] == i
        out[e, i, 0] = wp.where(here, wp.float32(1.0), wp.float32(0.0))
        out[e, i, 1] = wp.where(here and w.bulb[e] != 0, wp.float32(1.0), wp.float32(0.0))


@wp.func(inline=True)
def reset_world(w: Any, e: int):
    """World e's start (JaxMARL's ``reset``): the bulb as ``initial_bulb_state``, nobody has been
    in the room, the agent in the room uniform, from the world's stream of this episode."""
    state = wp.rand_init(w.world_seed[e], w.episode[e])
    n = w.has_been.shape[1]
    w.bulb[e] = w.initial_bulb
    w.in_room[e] = uniform_below(state, n)
    for i in range(n):
        w.has_been[e, i] = 0
    start_episode(e, w.episode, w.t)


@wp.func(inline=True)
def clear_outputs(w: Any, e: int):
    for i in range(w.reward.shape[1]):
        w.reward[e, i] = type(w.reward[e, i])(0.0)
    w.told[e] = 0
    w.success[e] = 0
    w.visited[e] = 0


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------


def step_kernel(World, F):
    def riddle_step(w: World, chunk: int):
        """One step of world e (JaxMARL's ``step_env``), its episode protocol and observations."""
        first = wp.tid() * chunk
        for e in range(first, wp.min(first + chunk, w.t.shape[0])):
            n = w.has_been.shape[1]
            if w.pending_reset[e] != 0:
                # NEXT_STEP: the step after a done only resets the world (reward 0, flags false)
                w.pending_reset[e] = 0
                clear_outputs(w, e)
                begin_pending_reset(e, w.terminated, w.truncated, w.reset_now)
            else:
                r = w.in_room[e]
                a = w.action[e, r]
                w.has_been[e, r] = 1
                if a == SWITCH_LIGHT:
                    w.bulb[e] = 1 - w.bulb[e]
                visited = int(0)
                for i in range(n):
                    visited += w.has_been[e, i]
                tell = a == TELL
                reward = wp.float64(0.0)
                success = int(0)
                if tell:
                    reward = w.reward_all_die
                    if visited == n:
                        reward = w.reward_all_live
                        success = 1
                for i in range(n):
                    w.reward[e, i] = F(reward)
                w.told[e] = wp.where(tell, 1, 0)
                w.success[e] = success
                w.visited[e] = visited
                steps = w.t[e] + 1
                w.t[e] = steps
                if w.draw_injected[e] != 0:
                    w.in_room[e] = w.draw[e]
                    w.draw_injected[e] = 0
                else:
                    key = wp.rand_init(w.world_seed[e], w.episode[e])
                    state = wp.rand_init(int(key) ^ STEP_SALT, steps)
                    w.in_room[e] = uniform_below(state, n)
                end_step(e, tell, steps >= w.max_steps and not tell, w.mode, w.terminated, w.truncated,
                         w.reset_now, w.pending_reset)
                if w.reset_now[e] != 0:
                    observe_world(w, e, w.final_obs)
            if w.reset_now[e] != 0:
                reset_world(w, e)
            observe_world(w, e, w.obs)

    return riddle_step


def observe_kernel(World, F):
    def riddle_observe(
        w: World,
        # Params
        write_final: int,
        chunk: int,
    ):
        """reset() / set_state() / clone_worlds(): (``write_final``: the final observation of the
        worlds flagged in ``reset_now``), reset those worlds, observe every world."""
        first = wp.tid() * chunk
        for e in range(first, wp.min(first + chunk, w.t.shape[0])):
            if w.reset_now[e] != 0:
                if write_final != 0:
                    observe_world(w, e, w.final_obs)
                reset_world(w, e)
            observe_world(w, e, w.obs)

    return riddle_observe


_FACTORIES = (step_kernel, observe_kernel)


def kernels(F) -> dict:
    """SwitchRiddle's kernels for reward type ``F`` by name, in one Warp module (made once per
    process)."""
    World = world_struct(F)
    return module_kernels(f"war_envs_switch_riddle_{F.__name__}", lambda: [factory(World, F) for factory in _FACTORIES])
