"""Envs side by side: independent seeds in one process, two threads, spawned worker processes,
two processes compiling into one fresh kernel cache, and no leaks across make/close cycles."""

import gc
import multiprocessing
import os
import subprocess
import sys
import textwrap
import threading
import weakref

import pytest
import torch

import war_envs


def checksum_run(env_id: str, seed: int, steps: int = 60, num_envs: int = 16) -> float:
    """A float64 checksum of every observation and reward of a seeded random rollout."""
    env = war_envs.make(env_id, num_envs=num_envs, seed=seed, num_threads=1)
    obs = env.reset()
    gen = torch.Generator().manual_seed(seed)
    total = sum(o.double().sum().item() for o in obs.values())
    for _ in range(steps):
        actions = {g: torch.randint(0, 5, (num_envs, s.n_agents), generator=gen) for g, s in env.groups.items()}
        obs, rew, *_ = env.step(actions)
        total += sum(o.double().sum().item() for o in obs.values())
        total += sum(r.double().sum().item() for r in rew.values())
    env.close()
    return total


def test_two_envs_in_one_process_stay_independent():
    alone_a = checksum_run("Spread-v0", 1)
    alone_b = checksum_run("Spread-v0", 2)
    a = war_envs.make("Spread-v0", num_envs=16, seed=1)
    b = war_envs.make("Spread-v0", num_envs=16, seed=2)
    totals = {}
    for name, env in (("a", a), ("b", b)):
        obs = env.reset()
        totals[name] = sum(o.double().sum().item() for o in obs.values())
    gens = {"a": torch.Generator().manual_seed(1), "b": torch.Generator().manual_seed(2)}
    for _ in range(60):  # interleaved
        for name, env in (("a", a), ("b", b)):
            obs, rew, *_ = env.step({"agent": torch.randint(0, 5, (16, 3), generator=gens[name])})
            totals[name] += obs["agent"].double().sum().item() + rew["agent"].double().sum().item()
    assert totals["a"] == alone_a and totals["b"] == alone_b
    assert alone_a != alone_b


def test_envs_stepped_from_two_threads():
    expected = {s: checksum_run("PredatorPrey-v0", s) for s in (3, 4)}
    results, errors = {}, []

    def work(seed):
        try:
            results[seed] = checksum_run("PredatorPrey-v0", seed)
        except Exception as err:  # surfaced below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(s,)) for s in (3, 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results == expected


def _worker(seed, queue):
    queue.put((seed, checksum_run("Spread-v0", seed)))


def test_spawned_worker_processes_match_in_process_results():
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(s, queue)) for s in (5, 6)]
    for p in procs:
        p.start()
    got = dict(queue.get(timeout=300) for _ in procs)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert got == {5: checksum_run("Spread-v0", 5), 6: checksum_run("Spread-v0", 6)}


def test_two_processes_compiling_into_one_fresh_cache(tmp_path):
    script = textwrap.dedent("""
        import sys, torch, war_envs
        env = war_envs.make("Spread-v0", num_envs=4, seed=0)
        env.reset()
        for _ in range(30):
            obs = env.step({"agent": torch.zeros(4, 3, dtype=torch.long)})[0]
        print(repr(obs["agent"].double().sum().item()))
    """)
    env = {**os.environ, "WARP_CACHE_PATH": str(tmp_path / "cache"), "OMP_NUM_THREADS": "1"}
    procs = [subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert err == "", err  # quiet, even while compiling
    assert outs[0][0] == outs[1][0] != ""


@pytest.mark.parametrize("env_id", ["Spread-v0", "PredatorPrey-v0"])
def test_make_close_cycles_release_envs(env_id):
    """A closed env (with its Warp buffers, views and thread pool) is garbage-collected."""
    refs = []
    for _ in range(20):
        env = war_envs.make(env_id, num_envs=4096, num_threads=2)
        env.reset(seed=0)
        env.step({g: torch.zeros(4096, s.n_agents, dtype=torch.long) for g, s in env.groups.items()})
        refs.append(weakref.ref(env))
        env.close()
        del env
    gc.collect()
    assert all(r() is None for r in refs)


def test_captures_in_one_thread_never_swallow_another_threads_launches():
    """Warp's CPU capture state is process-wide: without war_envs' capture guard, a reset or
    step issued while another thread captures a new env's graph would be recorded, not run."""
    expected = checksum_run("Spread-v0", 9, steps=200)
    stop = threading.Event()
    errors = []

    def churn():  # keeps capturing fresh graphs
        try:
            while not stop.is_set():
                env = war_envs.make("Spread-v0", num_envs=8, num_threads=2)
                env.reset(seed=0)
                env.step({"agent": torch.zeros(8, 3, dtype=torch.long)})
                env.close()
        except Exception as err:
            errors.append(err)

    thread = threading.Thread(target=churn)
    thread.start()
    try:
        results = [checksum_run("Spread-v0", 9, steps=200) for _ in range(3)]
    finally:
        stop.set()
        thread.join()
    assert not errors
    assert results == [expected] * 3
