"""JaxMARL 0.2.0's ``hanabi`` recorded for the parity tests (tests/test_hanabi_reference.py).

Runs in JaxMARL's own virtual environment (``~/.cache/war-envs/bench-venvs/jaxmarl/bin/python``:
jax 0.10.2, jaxmarl 0.2.0) and imports only the standard library, numpy, jax and jaxmarl — never
war_envs or torch.  Reads a JSON list of jobs (``python hanabi_reference.py JOBS OUT``), runs them
in one process (one jax start-up) and writes one JSON list of results:

``{"kind": "trace", "config": {...}, "episodes": n, "seed": s, "policy": "uniform" | "careful" | "mixed"}``
    plays games with a random policy (numpy, seeded ``s``): every agent picks uniformly among its
    legal moves (``get_legal_moves``; ``"careful"``: the mover plays a card that fits if it holds one and
    never picks a play that would misplay, so that games reach the end of the deck or a perfect
    score; ``"mixed"``: careful in odd episodes), calling ``step_env`` (no auto-reset: an
    episode stops at its first ``done["__all__"]``).  Per episode: the draws of the reset
    (the shuffled (colour, rank) pairs and the seat order, recomputed from its key exactly as
    ``reset_game`` splits it), the start observations, legal moves and state; per step the
    actions, then the observations, legal moves, rewards, done and state after it.
    Observations are base64 float32 bytes, legal moves base64 uint8, states compacted to our
    layout (card codes ``colour * num_ranks + rank``, -1 none; token and firework counts, checked
    to be thermometers).
``{"kind": "random_stats", "config": {...}, "worlds": W, "seed": s, "steps": T}``
    the uniform-legal random policy on JaxMARL's auto-reset ``step`` (jit + vmap over W worlds,
    T steps): the first episode of every world: its length and the first agent's return (the
    final score).
"""

from __future__ import annotations

import base64
import json
import sys

import numpy as np

import jax
import jax.numpy as jnp
from jaxmarl import make
from jaxmarl_jit import jit_reset  # noqa: E402


def b64(x, dtype) -> str:
    return base64.b64encode(np.ascontiguousarray(np.asarray(x, dtype=dtype)).tobytes()).decode()


def codes(cards: np.ndarray, R: int) -> np.ndarray:
    """One-hot ``[..., C, R]`` cards -> int codes (-1 for an all-zero card)."""
    flat = cards.reshape(*cards.shape[:-2], -1)
    has = flat.any(-1)
    return np.where(has, flat.argmax(-1), -1)


def count(thermometer) -> int:
    t = np.asarray(thermometer).astype(int)
    n = int(t.sum())
    assert (t[:n] == 1).all() and (t[n:] == 0).all(), t
    return n


def compact(state, env) -> dict:
    R = env.num_ranks
    fw = np.asarray(state.fireworks)
    return {
        "seat_order": np.asarray(state.seat_order).tolist(),
        "discard_pile": codes(np.asarray(state.discard_pile), R).tolist(),
        "num_cards_discarded": int(state.num_cards_discarded),
        "fireworks": [count(row) for row in fw],
        "player_hands": codes(np.asarray(state.player_hands), R).tolist(),
        "info_tokens": count(state.info_tokens),
        "life_tokens": count(state.life_tokens),
        "card_knowledge": np.asarray(state.card_knowledge).astype(int).tolist(),
        "colors_revealed": np.asarray(state.colors_revealed).astype(int).tolist(),
        "ranks_revealed": np.asarray(state.ranks_revealed).astype(int).tolist(),
        "num_cards_dealt": int(state.num_cards_dealt),
        "cur_player_idx": int(np.flatnonzero(np.asarray(state.cur_player_idx))[0]),
        "terminal": int(bool(state.terminal)), "out_of_lives": int(bool(state.out_of_lives)),
        "bombed": int(bool(state.bombed)), "last_round_count": int(state.last_round_count),
        "score": int(state.score), "t": int(state.step), "done": bool(state.done),
        "deck": codes(np.asarray(state.deck), R).tolist(),
        "remaining_deck_size": np.asarray(state.remaining_deck_size).astype(int).tolist(),
    }


def reset_draws(env, key) -> tuple[np.ndarray, np.ndarray]:
    """The pairs and seat order ``reset_game(key)`` draws, recomputed as it splits ``key``."""
    colors = jnp.arange(env.num_colors)
    ranks = jnp.repeat(jnp.arange(env.num_ranks), env.num_cards_of_rank)
    pairs = jnp.dstack(jnp.meshgrid(colors, ranks)).reshape(-1, 2)
    key, sub = jax.random.split(key)
    shuffled = jax.random.permutation(sub, pairs, axis=0)
    seats = jax.random.permutation(key, env.agent_range) if env.shuffle_player_order else env.agent_range
    return np.asarray(shuffled), np.asarray(seats)


def legal_array(env, legal_fn, state) -> np.ndarray:
    legal = legal_fn(state)
    return np.stack([np.asarray(legal[a]) for a in env.agents]).astype(np.uint8)


def choose(env, legal: np.ndarray, state, rng, careful: bool) -> list[int]:
    actions = []
    seat = int(np.flatnonzero(np.asarray(state.cur_player_idx))[0])
    mover = int(np.asarray(state.seat_order)[seat])
    for i in range(env.num_agents):
        options = np.flatnonzero(legal[i])
        if careful and i == mover:
            hand = codes(np.asarray(state.player_hands)[seat], env.num_ranks)
            heights = np.asarray(state.fireworks).sum(-1)
            safe = [a for a in options if not (env.hand_size <= a < 2 * env.hand_size)
                    or heights[hand[a - env.hand_size] // env.num_ranks] == hand[a - env.hand_size] % env.num_ranks]
            playable = [a for a in safe if env.hand_size <= a < 2 * env.hand_size]
            options = np.asarray(playable or safe or options)
        actions.append(int(rng.choice(options)))
    return actions


def trace(job: dict) -> dict:
    env = make("hanabi", **job.get("config", {}))
    agents = env.agents
    rng = np.random.default_rng(job["seed"])
    key = jax.random.PRNGKey(job["seed"])
    reset = jit_reset(env.reset)  # step_env then compiles once
    step = jax.jit(env.step_env)
    legal_fn = jax.jit(env.get_legal_moves)
    policy = job.get("policy", "uniform")
    episodes = []
    for n in range(job["episodes"]):
        careful = policy == "careful" or (policy == "mixed" and n % 2 == 1)
        key, k_reset = jax.random.split(key)
        pairs, seats = reset_draws(env, k_reset)
        obs, state = reset(k_reset)
        assert (np.asarray(state.seat_order) == seats).all()
        legal = legal_array(env, legal_fn, state)
        episode = {"pairs": pairs.tolist(), "seat_order": seats.tolist(), "start": compact(state, env),
                   "obs": b64([obs[a] for a in agents], np.float32), "legal": b64(legal, np.uint8), "steps": []}
        while True:
            key, k_step = jax.random.split(key)
            actions = choose(env, legal, state, rng, careful)
            obs, state, rewards, dones, _ = step(k_step, state, {a: jnp.int32(x) for a, x in zip(agents, actions)})
            legal = legal_array(env, legal_fn, state)
            episode["steps"].append({
                "actions": actions, "state": compact(state, env), "obs": b64([obs[a] for a in agents], np.float32),
                "legal": b64(legal, np.uint8), "rewards": [float(rewards[a]) for a in agents],
                "done": bool(dones["__all__"])})
            if dones["__all__"]:
                break
        episodes.append(episode)
    return {"episodes": episodes, "obs_size": int(env.obs_size), "num_moves": int(env.num_moves)}


def random_stats(job: dict) -> dict:
    env = make("hanabi", **job.get("config", {}))
    agents = env.agents
    W, T = job["worlds"], job["steps"]

    def one_step(carry, key):
        state, ret, length, done_once, first_ret, first_len = carry
        k_act, k_step = jax.random.split(key)
        legal = env.get_legal_moves(state)
        keys = jax.random.split(k_act, len(agents))
        acts = {a: jax.random.categorical(keys[i], jnp.where(legal[a] > 0, 0.0, -jnp.inf))
                for i, a in enumerate(agents)}
        _, state, rewards, dones, _ = env.step(k_step, state, acts)
        ret = ret + rewards[agents[0]]
        length = length + 1
        done = dones["__all__"]
        first_ret = jnp.where(done & ~done_once, ret, first_ret)
        first_len = jnp.where(done & ~done_once, length, first_len)
        done_once = done_once | done
        ret = jnp.where(done, 0.0, ret)
        length = jnp.where(done, 0, length)
        return (state, ret, length, done_once, first_ret, first_len), None

    def world(key):
        k_reset, k_steps = jax.random.split(key)
        _, state = env.reset(k_reset)
        carry = (state, jnp.float32(0.0), jnp.int32(0), jnp.bool_(False), jnp.float32(0.0), jnp.int32(0))
        carry, _ = jax.lax.scan(one_step, carry, jax.random.split(k_steps, T))
        return carry[3], carry[4], carry[5]

    done, ret, length = jax.jit(jax.vmap(world))(jax.random.split(jax.random.PRNGKey(job["seed"]), W))
    done = np.asarray(done)
    return {"returns": np.asarray(ret)[done].tolist(), "lengths": np.asarray(length)[done].tolist()}


def main() -> None:
    jobs = json.loads(open(sys.argv[1]).read())
    results = [{"trace": trace, "random_stats": random_stats}[job["kind"]](job) for job in jobs]
    with open(sys.argv[2], "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main()
