"""A plain numpy implementation of WarpDrive's ``TagContinuous`` rules (one world), written from
the rules — brute-force distances, no cell grid — to check ``Tag-v0``'s kernels against.

It follows WarpDrive's ``TagContinuous.step`` (CPU path) in order: advance the clock, move every
agent, observe, then compute rewards (tags in runner order) and done.  Deliberate choices shared
with ``Tag-v0`` (each documented in the env's docstring): taggers are agents ``0..T-1``; a runner
tagged on the last step gets no end-of-game reward (it is no longer in the game); ``terminated``
(no runner left) and ``truncated`` (``t == episode_length``) are separate; nearest-neighbour ties
go to the lower index (numpy's stable sort).  All arithmetic is done in ``dtype`` (float32 or
float64) so float64 runs agree with the kernels to round-off.
"""

from __future__ import annotations

import math

import numpy as np

DEFAULTS = {
    "num_taggers": 1, "num_runners": 10, "grid_length": 10.0, "episode_length": 100,
    "max_speed": 1.0, "skill_level_runner": 1.0, "skill_level_tagger": 1.0,
    "max_acceleration": 1.0, "min_acceleration": -1.0, "max_turn": math.pi / 2,
    "min_turn": -math.pi / 2, "num_acceleration_levels": 10, "num_turn_levels": 10,
    "edge_hit_penalty": -0.0, "use_full_observation": True, "num_other_agents_observed": 2,
    "tagging_distance": 0.01, "tag_reward_for_tagger": 1.0, "step_penalty_for_tagger": -0.0,
    "tag_penalty_for_runner": -1.0, "step_reward_for_runner": 0.0,
    "end_of_game_reward_for_runner": 1.0, "runner_exits_game_after_tagged": True,
}


class TagReference:
    """One world of TagContinuous.  ``set_state(...)`` then ``step(actions [A, 2])``."""

    def __init__(self, config: dict | None = None, dtype=np.float64) -> None:
        c = {**DEFAULTS, **(config or {})}
        self.c = c
        self.dtype = np.dtype(dtype)
        f = self.f = self.dtype.type
        self.T, self.R = c["num_taggers"], c["num_runners"]
        self.A = self.T + self.R
        self.is_tagger = np.arange(self.A) < self.T
        self.L = f(c["grid_length"])

        def table(lo, hi, n):
            return np.insert(np.linspace(f(lo), f(hi), n), 0, 0).astype(self.dtype)

        self.acc_table = table(c["min_acceleration"], c["max_acceleration"], c["num_acceleration_levels"])
        self.turn_table = table(c["min_turn"], c["max_turn"], c["num_turn_levels"])
        self.two_pi = f(2 * math.pi)
        self.top_speed = np.where(self.is_tagger, f(c["max_speed"]) * f(c["skill_level_tagger"]),
                                  f(c["max_speed"]) * f(c["skill_level_runner"])).astype(self.dtype)
        self.diagonal = f(math.sqrt(2.0) * c["grid_length"])
        self.speed_norm = f(c["max_speed"]) + f(1e-10)
        self.margin = f(c["tagging_distance"] * c["grid_length"])
        self.k = c["num_other_agents_observed"]
        self.obs_dim = 7 * (self.A - 1) + 1 if c["use_full_observation"] else 7 * self.k + 1

    # ------------------------------------------------------------------ state
    def set_state(self, pos, speed, direction, acc, alive, t) -> None:
        d = self.dtype
        self.pos = np.array(pos, dtype=d).reshape(self.A, 2)
        self.speed = np.array(speed, dtype=d).reshape(self.A)
        self.dir = np.array(direction, dtype=d).reshape(self.A)
        self.acc = np.array(acc, dtype=d).reshape(self.A)
        self.alive = np.array(alive, dtype=bool).reshape(self.A)
        self.t = int(t)

    # ------------------------------------------------------------------ rules
    def _move(self, actions: np.ndarray) -> np.ndarray:
        f = self.f
        still = self.alive.astype(self.dtype)
        acc = self.acc + self.acc_table[actions[:, 0]]
        heading = np.fmod(self.dir + self.turn_table[actions[:, 1]], self.two_pi) * still
        heading = np.where(heading < 0, self.two_pi + heading, heading)
        speed = np.minimum(self.top_speed, np.maximum(f(0), self.speed + acc)) * still
        acc = np.where((speed <= 0) | (speed >= self.top_speed), f(0), acc)
        x = self.pos[:, 0] + speed * np.cos(heading)
        y = self.pos[:, 1] + speed * np.sin(heading)
        crossed = (x < 0) | (x > self.L) | (y < 0) | (y > self.L)
        self.pos = np.stack([np.clip(x, f(0), self.L), np.clip(y, f(0), self.L)], axis=1).astype(self.dtype)
        self.speed, self.dir, self.acc = speed.astype(self.dtype), heading.astype(self.dtype), acc.astype(self.dtype)
        return crossed

    def _distances(self, i: int) -> np.ndarray:
        dx = self.pos[:, 0] - self.pos[i, 0]
        dy = self.pos[:, 1] - self.pos[i, 1]
        return np.sqrt(dx * dx + dy * dy)

    def _relative(self, i: int, others: np.ndarray) -> np.ndarray:
        """[5, len(others)] relative features (other minus self), float32."""
        rows = [(self.pos[others, 0] - self.pos[i, 0]) / self.diagonal,
                (self.pos[others, 1] - self.pos[i, 1]) / self.diagonal,
                (self.speed[others] - self.speed[i]) / self.speed_norm,
                (self.acc[others] - self.acc[i]) / self.speed_norm,
                (self.dir[others] - self.dir[i]) / self.two_pi]
        return np.array(rows).astype(np.float32)

    def observe(self) -> np.ndarray:
        """[A, obs_dim] float32, WarpDrive's feature-major layout."""
        A, k = self.A, self.k
        out = np.zeros((A, self.obs_dim), dtype=np.float32)
        time = np.float32(self.t) / np.float32(self.c["episode_length"])
        for i in range(A):
            if self.c["use_full_observation"]:
                others = np.array([j for j in range(A) if j != i], dtype=np.int64)
                block = np.zeros((7, A - 1), dtype=np.float32)
                if self.alive[i]:
                    block[:5] = self._relative(i, others)
                    out[i, -1] = time
                block[5] = self.is_tagger[others]
                block[6] = self.alive[others]
                out[i, :-1] = block.reshape(-1)
            elif self.alive[i]:
                candidates = np.array([j for j in range(A) if j != i and self.alive[j]], dtype=np.int64)
                d = self._distances(i)[candidates]
                order = candidates[np.lexsort((candidates, d))][:k]  # nearest, ties to lower index
                block = np.zeros((7, k), dtype=np.float32)
                n = len(order)
                block[:5, :n] = self._relative(i, order)
                block[5, :n] = self.is_tagger[order]
                block[6, :n] = 1.0
                out[i, :-1] = block.reshape(-1)
                out[i, -1] = time
        return out

    def step(self, actions) -> dict:
        """One step with ``actions`` int [A, 2]; returns obs, reward, flags, tags, alive."""
        c, f = self.c, self.f
        actions = np.asarray(actions, dtype=np.int64).reshape(self.A, 2)
        self.t += 1
        crossed = self._move(actions)
        obs = self.observe()  # WarpDrive observes before the tags of this step

        reward = np.zeros(self.A, dtype=self.dtype)
        for i in range(self.A):
            if self.alive[i]:
                r = f(0)
                if crossed[i]:
                    r = r + f(c["edge_hit_penalty"])
                r = r + (f(c["step_penalty_for_tagger"]) if self.is_tagger[i] else f(c["step_reward_for_runner"]))
                reward[i] = r
        tags = np.zeros(self.A, dtype=np.int32)
        taggers = np.arange(self.T)
        for i in range(self.T, self.A):
            if not self.alive[i]:
                continue
            d = self._distances(i)[taggers]
            nearest = int(np.argmin(d))  # first index on ties
            if d[nearest] < self.margin:
                reward[i] = reward[i] + f(c["tag_penalty_for_runner"])
                reward[nearest] = reward[nearest] + f(c["tag_reward_for_tagger"])
                tags[nearest] += 1
                tags[i] = 1
                if c["runner_exits_game_after_tagged"]:
                    self.alive[i] = False
        runners = np.arange(self.T, self.A)
        left = int(self.alive[runners].sum())
        if self.t == c["episode_length"]:
            for i in runners:
                if self.alive[i]:
                    reward[i] = reward[i] + f(c["end_of_game_reward_for_runner"])
        terminated = left == 0
        truncated = self.t >= c["episode_length"] and not terminated
        return {
            "obs": obs, "reward": reward, "terminated": terminated, "truncated": truncated,
            "agent_terminated": terminated | ~self.alive, "agent_truncated": truncated & self.alive,
            "tags": tags, "edge_hits": crossed.astype(np.int32), "alive": self.alive.copy(),
            "runners_left": left,
        }
