"""Warp kernels of ``TagGridWorld-v0`` (WarpDrive's ``tag_gridworld``), written once for float32
and float64 worlds.  Arrays are indexed ``[world, agent(, axis)]``; agents ``0..T-1`` are the
taggers, agent ``T`` (the last) the runner.  Positions are int32 cells ``0..L`` on each axis.
Every kernel takes the world struct ``w`` (``world_struct``: parameters, episode state and
outputs of every world), plus the launch's own choices.

Step pipeline (captured into one graph by ``TagGridWorld``), in WarpDrive's order — every agent
moves, then the tag check on the new cells, then the observation of the new state:

    grid_move           (world, agent)  action -> cell, clipped to [0, L]^2, wall hit flag
    grid_reward_done    (world)         owner thread: clock, taggers on the runner's cell,
                                        rewards, done flags (episode protocol)
    grid_observe        (world, agent)  SAME_STEP: final observations of the worlds to reset
    grid_observe        (world, agent)  observations of the worlds not being reset
    grid_reset          (world)         owner thread: the start of the worlds flagged in reset_now
    grid_observe        (world, agent)  observations of the worlds just reset

No float atomics and no races: each world's count and rewards are made by its owner thread in
agent order, so results are bitwise reproducible on any device and shard split.
"""

from typing import Any

import warp as wp

from war_envs.core.episode import AUTORESET_DISABLED, AUTORESET_NEXT_STEP  # noqa: F401  (this module's API)
from war_envs.core.episode import AUTORESET_SAME_STEP, KERNEL_MODULE_OPTIONS  # noqa: F401
from war_envs.core.episode import begin_pending_reset, end_step, start_episode  # noqa: F401
from war_envs.core.fields import module_kernels, struct_type

wp.set_module_options(KERNEL_MODULE_OPTIONS)

# Which worlds an observe launch writes (and where).
WORLDS_RUNNING = wp.constant(0)  # worlds not flagged in reset_now -> obs
WORLDS_RESET = wp.constant(1)  # worlds flagged in reset_now -> obs (final obs with final=1)
WORLDS_ALL = wp.constant(2)  # every world -> obs (reset / set_state / clone_worlds)

#: WarpDrive's ``step_actions``: action index -> (dx, dy)
MOVES = ((0, 0), (1, 0), (-1, 0), (0, 1), (0, -1))
NUM_ACTIONS = len(MOVES)


def struct_fields(F) -> dict:
    """The fields of a TagGridWorld world struct whose rewards have float type ``F``."""
    return {
        # Params
        "mode": int, "num_taggers": int, "grid_length": int, "episode_length": int,
        "full_observation": int, "random_start": int, "start_span": int, "start_reject_below": int,
        "wall_penalty": wp.float64, "tagger_tag_reward": wp.float64, "tagger_step_reward": wp.float64,
        "runner_tag_reward": wp.float64, "runner_step_reward": wp.float64,
        "start_x": wp.array(dtype=wp.int32), "start_y": wp.array(dtype=wp.int32),
        # State
        "world_seed": wp.array(dtype=wp.int32), "episode": wp.array(dtype=wp.int32),
        "t": wp.array(dtype=wp.int32), "pending_reset": wp.array(dtype=wp.int32),
        "reset_now": wp.array(dtype=wp.int32), "agent_pos": wp.array3d(dtype=wp.int32),
        # Actions
        "action": wp.array2d(dtype=wp.int32),
        # Outputs
        "reward": wp.array2d(dtype=F), "terminated": wp.array(dtype=wp.bool),
        "truncated": wp.array(dtype=wp.bool), "wall_hits": wp.array2d(dtype=wp.int32),
        "tagged": wp.array(dtype=wp.int32), "taggers_on_runner": wp.array(dtype=wp.int32),
        "tagger_obs": wp.array3d(dtype=wp.float32), "runner_obs": wp.array3d(dtype=wp.float32),
        "tagger_final_obs": wp.array3d(dtype=wp.float32), "runner_final_obs": wp.array3d(dtype=wp.float32),
    }


def world_struct(F):
    """The ``wp.struct`` type of TagGridWorld worlds with rewards in ``F`` (made once per process)."""
    return struct_type(f"TagGridWorld_{F.__name__}", __name__, lambda: struct_fields(F))


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


@wp.func
def move_dx(a: int):
    """x step of action a (WarpDrive's step_actions[a][0])."""
    if a == 1:
        return 1
    if a == 2:
        return -1
    return 0


@wp.func
def move_dy(a: int):
    """y step of action a (WarpDrive's step_actions[a][1])."""
    if a == 3:
        return 1
    if a == 4:
        return -1
    return 0


@wp.func
def cell(pos: wp.array3d(dtype=wp.int32), e: int, j: int, axis: int, grid_length: float):
    """Agent j's coordinate divided by L, in float32 (WarpDrive: ``x / float(world_boundary)``)."""
    return wp.float32(pos[e, j, axis]) / wp.float32(grid_length)


@wp.func
def nearest_tagger(pos: wp.array3d(dtype=wp.int32), e: int, num_taggers: int, runner: int):
    """The tagger nearest to the runner by squared cell distance, the lowest index on ties
    (WarpDrive CPU's ``np.argmin``)."""
    rx = pos[e, runner, 0]
    ry = pos[e, runner, 1]
    best = int(0)
    best_d = int(-1)
    for j in range(num_taggers):
        dx = pos[e, j, 0] - rx
        dy = pos[e, j, 1] - ry
        d = dx * dx + dy * dy
        if best_d < 0 or d < best_d:
            best = j
            best_d = d
    return best


@wp.func
def observe_agent(w: Any, e: int, i: int, tagger_out: wp.array3d(dtype=wp.float32),
                  runner_out: wp.array3d(dtype=wp.float32)):
    """Agent i's observation (into its group's row of ``tagger_out`` / ``runner_out``).  Full:
    x_j / L for every agent j, then y_j / L, then each agent's type (1 for the runner), then
    one-hot of i, then t / episode_length (4 A + 1 values).  Partial: x_i / L, y_i / L, the
    runner's (for a tagger) or the nearest tagger's (for the runner) x / L, y / L, i's type,
    t / episode_length (6 values)."""
    num_agents = w.agent_pos.shape[1]
    num_taggers = w.num_taggers
    runner = num_agents - 1
    pos = w.agent_pos
    L = float(w.grid_length)
    out = runner_out
    slot = int(0)
    if i < num_taggers:
        out = tagger_out
        slot = i
    time = wp.float32(w.t[e]) / wp.float32(w.episode_length)
    if w.full_observation != 0:
        for j in range(num_agents):
            out[e, slot, j] = cell(pos, e, j, 0, L)
            out[e, slot, num_agents + j] = cell(pos, e, j, 1, L)
            out[e, slot, 2 * num_agents + j] = wp.float32(0.0)
            out[e, slot, 3 * num_agents + j] = wp.float32(0.0)
        out[e, slot, 3 * num_agents - 1] = wp.float32(1.0)
        out[e, slot, 3 * num_agents + i] = wp.float32(1.0)
        out[e, slot, 4 * num_agents] = time
    else:
        other = runner
        if i == runner:
            other = nearest_tagger(pos, e, num_taggers, runner)
        out[e, slot, 0] = cell(pos, e, i, 0, L)
        out[e, slot, 1] = cell(pos, e, i, 1, L)
        out[e, slot, 2] = cell(pos, e, other, 0, L)
        out[e, slot, 3] = cell(pos, e, other, 1, L)
        out[e, slot, 4] = wp.float32(0.0)
        if i == runner:
            out[e, slot, 4] = wp.float32(1.0)
        out[e, slot, 5] = time


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------


def move_kernel(World, F):
    def grid_move(w: World):
        """WarpDrive's move: cell += step_actions[action], clipped to [0, L] per axis; the wall
        hit flag is set when the clip changed the cell (WarpDrive CPU's rule)."""
        e, i = wp.tid()
        if w.pending_reset[e] != 0:
            return
        a = w.action[e, i]
        x = w.agent_pos[e, i, 0] + move_dx(a)
        y = w.agent_pos[e, i, 1] + move_dy(a)
        cx = wp.clamp(x, 0, w.grid_length)
        cy = wp.clamp(y, 0, w.grid_length)
        w.agent_pos[e, i, 0] = cx
        w.agent_pos[e, i, 1] = cy
        hit = int(0)
        if cx != x or cy != y:
            hit = 1
        w.wall_hits[e, i] = hit

    return grid_move


def reward_done_kernel(World, F):
    def grid_reward_done(w: World):
        """One world (owner thread): t += 1; the runner is tagged when some tagger shares its
        cell.  Rewards as WarpDrive CPU's float64 ``reward_tag + reward_penalty``: every tagger
        tag_reward_for_tagger if tagged else -step_cost_for_tagger, the runner
        -tag_penalty_for_runner if tagged else +step_cost_for_tagger, plus -wall_hit_penalty *
        hit for each agent; rounded once to the world's float type.  terminated: tagged;
        truncated: t >= episode_length otherwise."""
        e = wp.tid()
        num_agents = w.agent_pos.shape[1]
        num_taggers = w.num_taggers
        if w.pending_reset[e] != 0:
            # NEXT_STEP: the step after a done only resets the world (reward 0, flags false)
            w.pending_reset[e] = 0
            for i in range(num_agents):
                w.reward[e, i] = F(0.0)
                w.wall_hits[e, i] = 0
            w.tagged[e] = 0
            w.taggers_on_runner[e] = 0
            begin_pending_reset(e, w.terminated, w.truncated, w.reset_now)
            return
        steps = w.t[e] + 1
        w.t[e] = steps
        runner = num_agents - 1
        rx = w.agent_pos[e, runner, 0]
        ry = w.agent_pos[e, runner, 1]
        count = int(0)
        for i in range(num_taggers):
            if w.agent_pos[e, i, 0] == rx and w.agent_pos[e, i, 1] == ry:
                count += 1
        tag = count > 0
        tagger_term = w.tagger_step_reward
        runner_term = w.runner_step_reward
        if tag:
            tagger_term = w.tagger_tag_reward
            runner_term = w.runner_tag_reward
        for i in range(num_agents):
            term = tagger_term
            if i == runner:
                term = runner_term
            penalty = w.wall_penalty * wp.float64(w.wall_hits[e, i])
            w.reward[e, i] = F(term + penalty)
        w.tagged[e] = 0
        if tag:
            w.tagged[e] = 1
        w.taggers_on_runner[e] = count
        trunc = steps >= w.episode_length and not tag
        end_step(e, tag, trunc, w.mode, w.terminated, w.truncated, w.reset_now, w.pending_reset)

    return grid_reward_done


def observe_kernel(World, F):
    def grid_observe(
        w: World,
        # Params
        which: int,
        final: int,
    ):
        """Agent i's observation of the worlds ``which`` selects (WORLDS_*), into the
        observation buffers, or with ``final`` into the final-observation buffers."""
        e, i = wp.tid()
        flagged = w.reset_now[e] != 0
        if (which == WORLDS_RUNNING and flagged) or (which == WORLDS_RESET and not flagged):
            return
        if final != 0:
            observe_agent(w, e, i, w.tagger_final_obs, w.runner_final_obs)
        else:
            observe_agent(w, e, i, w.tagger_obs, w.runner_obs)

    return grid_observe


def reset_kernel(World, F):
    def grid_reset(w: World):
        """The start of a flagged world.  Random (WarpDrive's reset-pool generator): each
        tagger's x then y uniform on {1, ..., L - 1}, drawn from the world's counter-based stream
        (seed_e, episode_e), the runner at (0, 0).  Fixed: the start_x / start_y cells."""
        e = wp.tid()
        if w.reset_now[e] == 0:
            return
        num_agents = w.agent_pos.shape[1]
        if w.random_start != 0:
            # exactly uniform on {1, ..., L - 1}: 32-bit draws below start_reject_below =
            # 2^32 mod (L - 1) are redrawn, so the accepted ones are a multiple of L - 1
            state = wp.rand_init(w.world_seed[e], w.episode[e])
            span = wp.uint32(w.start_span)
            reject_below = wp.uint32(w.start_reject_below)
            for i in range(w.num_taggers):
                for axis in range(2):
                    u = wp.randu(state)
                    while u < reject_below:
                        u = wp.randu(state)
                    w.agent_pos[e, i, axis] = 1 + int(u % span)
            w.agent_pos[e, num_agents - 1, 0] = 0
            w.agent_pos[e, num_agents - 1, 1] = 0
        else:
            for i in range(num_agents):
                w.agent_pos[e, i, 0] = w.start_x[i]
                w.agent_pos[e, i, 1] = w.start_y[i]
        start_episode(e, w.episode, w.t)

    return grid_reset


_FACTORIES = (move_kernel, reward_done_kernel, observe_kernel, reset_kernel)


def kernels(F) -> dict:
    """TagGridWorld's kernels for reward type ``F`` by name (``"grid_move"`` ...), in one Warp
    module (made once per process)."""
    World = world_struct(F)
    return module_kernels(f"war_envs_tag_gridworld_{F.__name__}", lambda: [factory(World, F) for factory in _FACTORIES])
