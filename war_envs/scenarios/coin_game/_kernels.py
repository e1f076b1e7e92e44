"""Warp kernels of ``CoinGame-v0`` (JaxMARL's ``coin_game``), written once for float32 and float64
worlds.  Arrays are indexed ``[world, agent or coin(, axis)]``: agent / coin 0 is red, 1 blue;
cells are int32 ``(row, column)`` in ``0..2`` on a torus.  Every kernel takes the world struct
``w`` (``world_struct``) and runs ``chunk`` consecutive worlds a thread (``BatchedEnv._launch_chunked``: every world in one
thread on the CPU, one world a thread on a GPU).  A world is a few integers: one launch per step
does everything.

Step (``coin_step``, captured into one graph by ``CoinGame``), in JaxMARL's order: both agents
move; coins under the new cells are picked up (rewards from the payoff matrix); picked-up coins
respawn; the clock advances; at the end of an inner game every position is drawn afresh and the
step's rewards are zeroed (JaxMARL's rule); then the episode protocol and both observations.

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

#: JaxMARL's ``MOVES`` (row, column): 0 right, 1 left, 2 up, 3 down, 4 stay
MOVES = ((0, 1), (0, -1), (1, 0), (-1, 0), (0, 0))
NUM_ACTIONS = len(MOVES)
#: draws of one step: the two coins' respawn cells (4 ints), then the inner reset's 4 cells (8)
NUM_DRAWS = 12
#: salt of the in-episode stream (respawns, inner resets), apart from the reset stream
STEP_SALT = wp.constant(0xC014C0)


def struct_fields(F) -> dict:
    """The fields of a CoinGame world struct whose rewards have float type ``F``."""
    return {
        # Params
        "mode": int, "num_inner_steps": int, "max_steps": int, "egocentric": int, "shared_rewards": int,
        "payoff": wp.array2d(dtype=wp.float64),
        # State
        **clock_fields(),
        "agent_pos": wp.array3d(dtype=wp.int32), "coin_pos": wp.array3d(dtype=wp.int32),
        # Injected draws (tests): the next step's NUM_DRAWS cells, used once where draw_injected is set
        "draw": wp.array2d(dtype=wp.int32), "draw_injected": wp.array(dtype=wp.int32),
        # Actions
        "action": wp.array2d(dtype=wp.int32),
        # Outputs
        **flag_fields(F),
        "own_coins": wp.array2d(dtype=wp.int32),
        "other_coins": wp.array2d(dtype=wp.int32), "inner_episode_done": wp.array(dtype=wp.int32),
        "obs": wp.array3d(dtype=wp.float32), "final_obs": wp.array3d(dtype=wp.float32),
    }


def world_struct(F):
    """The ``wp.struct`` type of CoinGame worlds with rewards in ``F`` (made once per process)."""
    return struct_type(f"CoinGame_{F.__name__}", __name__, lambda: struct_fields(F))


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


@wp.func(inline=True)
def move_row(a: int):
    if a == 2:
        return 1
    if a == 3:
        return -1
    return 0


@wp.func(inline=True)
def move_col(a: int):
    if a == 0:
        return 1
    if a == 1:
        return -1
    return 0


@wp.func(inline=True)
def cell3(key: int, k: int):
    """Draw k of stream ``key``: exactly uniform on {0, 1, 2} (32-bit draws below 2^32 mod 3 = 1
    are redrawn)."""
    state = wp.rand_init(key, k)
    u = wp.randu(state)
    while u < wp.uint32(1):
        u = wp.randu(state)
    return int(u % wp.uint32(3))


@wp.func(inline=True)
def same_cell(a: wp.array3d(dtype=wp.int32), b: wp.array3d(dtype=wp.int32), e: int, i: int, j: int):
    return a[e, i, 0] == b[e, j, 0] and a[e, i, 1] == b[e, j, 1]


@wp.func(inline=True)
def mark(out: wp.array3d(dtype=wp.float32), e: int, i: int, row: int, col: int, channel: int):
    out[e, i, (row * 3 + col) * 4 + channel] = wp.float32(1.0)


@wp.func(inline=True)
def observe_world(w: Any, e: int, out: wp.array3d(dtype=wp.float32)):
    """Both agents' observations (JaxMARL's ``_state_to_obs``, flattened): a 3 x 3 x 4 grid of
    0/1, channels [own position, the other's, own coin, the other's coin] (each agent sees
    itself as red); ``egocentric``: shifted (torus) so that the agent is at the centre cell."""
    for i in range(2):
        for k in range(36):
            out[e, i, k] = wp.float32(0.0)
        o = 1 - i
        dr = int(0)
        dc = int(0)
        if w.egocentric != 0:
            dr = 1 - w.agent_pos[e, i, 0]
            dc = 1 - w.agent_pos[e, i, 1]
        mark(out, e, i, (w.agent_pos[e, i, 0] + dr + 3) % 3, (w.agent_pos[e, i, 1] + dc + 3) % 3, 0)
        mark(out, e, i, (w.agent_pos[e, o, 0] + dr + 3) % 3, (w.agent_pos[e, o, 1] + dc + 3) % 3, 1)
        mark(out, e, i, (w.coin_pos[e, i, 0] + dr + 3) % 3, (w.coin_pos[e, i, 1] + dc + 3) % 3, 2)
        mark(out, e, i, (w.coin_pos[e, o, 0] + dr + 3) % 3, (w.coin_pos[e, o, 1] + dc + 3) % 3, 3)


@wp.func(inline=True)
def draw_start(w: Any, e: int, key: int, first: int):
    """Red's, blue's, the red coin's and the blue coin's cells, each uniform (JaxMARL's ``_reset``:
    ``randint((4, 2), 0, 3)``, independent, so they may share a cell): draws ``first ...
    first + 7`` of stream ``key``."""
    for j in range(2):
        for axis in range(2):
            w.agent_pos[e, j, axis] = cell3(key, first + j * 2 + axis)
            w.coin_pos[e, j, axis] = cell3(key, first + 4 + j * 2 + axis)


@wp.func(inline=True)
def respawn_coins(w: Any, e: int, key: int, injected: bool, red: bool, blue: bool):
    """The red coin (``red``) and the blue coin (``blue``) picked up reappear on uniform cells:
    draws 0..3 of the step's stream ``key`` (JaxMARL draws both every step and uses those of the
    coins picked up), or the injected cells."""
    for j in range(2):
        for axis in range(2):
            c = int(0)
            if injected:
                c = w.draw[e, j * 2 + axis]
            else:
                c = cell3(key, j * 2 + axis)
            if (j == 0 and red) or (j == 1 and blue):
                w.coin_pos[e, j, axis] = c


@wp.func(inline=True)
def next_inner_game(w: Any, e: int, key: int, injected: bool):
    """The start of the next inner game: every cell drawn afresh (draws 4..11 of the step's
    stream ``key``), or the injected cells."""
    if injected:
        for j in range(2):
            for axis in range(2):
                w.agent_pos[e, j, axis] = w.draw[e, 4 + j * 2 + axis]
                w.coin_pos[e, j, axis] = w.draw[e, 8 + j * 2 + axis]
    else:
        draw_start(w, e, key, 4)


@wp.func(inline=True)
def clear_outputs(w: Any, e: int):
    for i in range(2):
        w.reward[e, i] = type(w.reward[e, i])(0.0)
        w.own_coins[e, i] = 0
        w.other_coins[e, i] = 0
    w.inner_episode_done[e] = 0


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------


def step_kernel(World, F):
    def coin_step(w: World, chunk: int):
        """One step of world e (JaxMARL's ``step_env``), its episode protocol and observations."""
        first = wp.tid() * chunk
        for e in range(first, wp.min(first + chunk, w.t.shape[0])):
            if w.pending_reset[e] != 0:
                # NEXT_STEP: the step after a done only resets the world (reward 0, flags false)
                w.pending_reset[e] = 0
                clear_outputs(w, e)
                begin_pending_reset(e, w.terminated, w.truncated, w.reset_now)
            else:
                for i in range(2):
                    a = w.action[e, i]
                    w.agent_pos[e, i, 0] = (w.agent_pos[e, i, 0] + move_row(a) + 3) % 3
                    w.agent_pos[e, i, 1] = (w.agent_pos[e, i, 1] + move_col(a) + 3) % 3
                rr = same_cell(w.agent_pos, w.coin_pos, e, 0, 0)
                rb = same_cell(w.agent_pos, w.coin_pos, e, 0, 1)
                br = same_cell(w.agent_pos, w.coin_pos, e, 1, 0)
                bb = same_cell(w.agent_pos, w.coin_pos, e, 1, 1)
                # JaxMARL's sums, in its order and in the world's float type
                red = F(0.0)
                blue = F(0.0)
                if rr:
                    red = red + F(w.payoff[0, 0])
                if rb:
                    red = red + F(w.payoff[0, 1])
                if br:
                    red = red + F(w.payoff[0, 2])
                if br:
                    blue = blue + F(w.payoff[1, 0])
                if bb:
                    blue = blue + F(w.payoff[1, 1])
                if rb:
                    blue = blue + F(w.payoff[1, 2])
                w.own_coins[e, 0] = wp.where(rr, 1, 0)
                w.other_coins[e, 0] = wp.where(rb, 1, 0)
                w.own_coins[e, 1] = wp.where(bb, 1, 0)
                w.other_coins[e, 1] = wp.where(br, 1, 0)
                steps = w.t[e] + 1
                w.t[e] = steps
                inner_done = steps % w.num_inner_steps == 0
                injected = w.draw_injected[e] != 0
                w.draw_injected[e] = 0
                key = int(wp.rand_init(int(wp.rand_init(w.world_seed[e], w.episode[e])) ^ STEP_SALT, steps))
                if rr or br or rb or bb:
                    respawn_coins(w, e, key, injected, rr or br, rb or bb)
                if inner_done:
                    next_inner_game(w, e, key, injected)
                    red = F(0.0)
                    blue = F(0.0)
                if w.shared_rewards != 0:
                    total = red + blue
                    red = total
                    blue = total
                w.reward[e, 0] = red
                w.reward[e, 1] = blue
                w.inner_episode_done[e] = wp.where(inner_done, 1, 0)
                end_step(e, False, steps >= w.max_steps, w.mode, w.terminated, w.truncated, w.reset_now,
                         w.pending_reset)
                if w.reset_now[e] != 0:
                    observe_world(w, e, w.final_obs)
            if w.reset_now[e] != 0:
                draw_start(w, e, int(wp.rand_init(w.world_seed[e], w.episode[e])), 0)
                start_episode(e, w.episode, w.t)
            observe_world(w, e, w.obs)

    return coin_step


def observe_kernel(World, F):
    def coin_observe(
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
                draw_start(w, e, int(wp.rand_init(w.world_seed[e], w.episode[e])), 0)
                start_episode(e, w.episode, w.t)
            observe_world(w, e, w.obs)

    return coin_observe


_FACTORIES = (step_kernel, observe_kernel)


def kernels(F) -> dict:
    """CoinGame's kernels for reward type ``F`` by name, in one Warp module (made once per process)."""
    World = world_struct(F)
    return module_kernels(f"war_envs_coin_game_{F.__name__}", lambda: [factory(World, F) for factory in _FACTORIES])
