"""GPU check: CPU-vs-CUDA parity of every scenario, graph-captured throughput, sampler speed.

One short run (a few minutes, most of it first-time kernel compilation) for a machine with an
NVIDIA GPU.  On a machine without one it prints why and exits with code 0.

1. **Parity** — for every registered scenario (Spread-v0, PredatorPrey-v0, Command-v0, Tag-v0
   in its default, busy and WarpDrive-training configurations): a CPU env and a CUDA env with the
   same seed and the same random actions (drawn on the CPU, copied to the GPU), stepped through
   whole episodes with SAME_STEP auto-reset.  With float64 worlds every observation, reward and
   state value must agree to 1e-5 and every flag, alive mask and integer metric exactly (the
   pass criterion).  float32 worlds are reported for information (max deviation, first step
   where a discrete outcome differed).  The kernels are compiled with ``fuse_fp`` off (no a*b+c
   -> FMA contraction), so both devices round alike; what remains are the math library's
   transcendental functions, and float32 trajectories are close but not guaranteed to 1e-5.
   The starts must be bitwise identical (the counter-based RNG is the same integer hash on both).
2. **Throughput** with graph capture, actions drawn on the GPU (``torch.randint`` on the device):
   Spread-v0 at 8192 and 65536 worlds, Tag-v0 at 2000 worlds x 1000 agents (the WarpDrive
   paper's size; training preset, 10 % taggers, constant density, k = 10), plus a per-kernel
   time breakdown of one Tag step.
3. **End-to-end training** (``benchmarks/train_speed.py``'s measurement): war_train's MAPPO on
   Spread-v0 at 8192 worlds and on Tag-v0 with the ``tag_warpdrive`` preset (WarpDrive's
   training config: 10 taggers + 100 runners, local critics) at 100 and 2000 worlds, a fixed
   number of updates each, printing agent-steps/s end to end (PPO updates included) and the
   env / policy / learn / other breakdown.  Goals: 5 M agent-steps/s on Spread and WarpDrive's
   Numba end-to-end rate on Tag (51 k world-steps/s x 105 agents = 5.4 M agent-steps/s).
4. **Sampler** (``war_envs.core.sampling``) vs ``torch.distributions.Categorical`` and
   ``torch.multinomial`` on the GPU: 2000 x 1000 agents x 21 actions, and WarpDrive's tiny case
   (2 worlds x 5 agents x 3 actions); CPU/CUDA agreement of the draws and a chi-square check.

Exit code: 0 when every check passes (or there is no GPU), 1 when a parity or sampler check
fails, 2 when Warp sees a GPU but torch is a CPU-only build (install a CUDA torch).

    python benchmarks/gpu_check.py [--device cuda:0] [--json PATH] [--skip-throughput] [--skip-training]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # run from a checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402  (benchmarks/_results.py: the metadata of results files)
import train_speed  # noqa: E402  (benchmarks/train_speed.py: the end-to-end measurement)

TOL = 1e-5
SEED = 1234


def log(msg: str = "") -> None:
    print(msg, flush=True)


def sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize(device)


# ---------------------------------------------------------------------------------------------
# device discovery
# ---------------------------------------------------------------------------------------------


def find_device(requested: str):
    """(device string, None) or (None, (exit code, message))."""
    import torch
    import warp as wp

    from war_envs.core.runtime import init_warp

    init_warp()
    warp_gpus = wp.get_cuda_device_count() if hasattr(wp, "get_cuda_device_count") else 0
    if warp_gpus == 0:
        return None, (0, "No CUDA device: Warp finds no NVIDIA GPU/driver on this machine "
                         f"(torch.cuda.is_available() = {torch.cuda.is_available()}). "
                         "Nothing to check; run this script on a machine with a GPU.")
    if not torch.cuda.is_available():
        return None, (2, f"Warp sees {warp_gpus} CUDA device(s) but torch {torch.__version__} has no CUDA "
                         "support (a CPU-only build): install a CUDA build of torch to run the GPU check.")
    index = int(requested.split(":")[1]) if ":" in requested else 0
    if index >= min(warp_gpus, torch.cuda.device_count()):
        return None, (1, f"--device {requested}: only {min(warp_gpus, torch.cuda.device_count())} CUDA device(s)")
    return f"cuda:{index}", None


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def random_actions(env, gen, device="cpu"):
    """Valid random actions for every group, drawn with ``gen`` on ``device``."""
    import gymnasium
    import torch

    out = {}
    for g, spec in env.groups.items():
        space, n, E = spec.action_space, spec.n_agents, env.num_envs
        if isinstance(space, gymnasium.spaces.Discrete):
            out[g] = torch.randint(0, int(space.n), (E, n), generator=gen, device=device)
        elif isinstance(space, gymnasium.spaces.MultiDiscrete):
            parts = [torch.randint(0, int(k), (E, n, 1), generator=gen, device=device) for k in space.nvec]
            out[g] = torch.cat(parts, dim=2)
        else:
            low, high = float(space.low.min()), float(space.high.max())
            out[g] = low + (high - low) * torch.rand((E, n, *space.shape), generator=gen, device=device)
    return out


def flatten(prefix, value, out):
    """Nested dicts of tensors -> {path: tensor}."""
    import torch

    if isinstance(value, torch.Tensor):
        out[prefix] = value
    elif isinstance(value, dict):
        for k, v in value.items():
            flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    return out


class Comparison:
    """Max deviation of floating tensors and exact equality of the rest, across a run."""

    def __init__(self) -> None:
        self.max_abs = 0.0
        self.where = ""
        self.discrete_mismatch = None  # (step, path)
        self.values = 0

    def add(self, step, cpu: dict, gpu: dict) -> None:
        for path, a in cpu.items():
            b = gpu[path].detach().cpu()
            a = a.detach().cpu()
            if a.shape != b.shape:
                raise AssertionError(f"{path}: shape {tuple(a.shape)} on the CPU vs {tuple(b.shape)} on CUDA")
            self.values += a.numel()
            if a.is_floating_point():
                if a.numel():
                    m = float((a.double() - b.double()).abs().max())
                    if m != m:  # NaN somewhere: equal only if NaN in the same places on both
                        same_nan = bool((a.isnan() == b.isnan()).all())
                        m = float((a.double() - b.double()).nan_to_num(nan=0.0).abs().max()) if same_nan else math.inf
                    if m > self.max_abs:
                        self.max_abs, self.where = m, f"step {step}, {path}"
            elif not bool((a == b).all()) and self.discrete_mismatch is None:
                self.discrete_mismatch = (step, path)


def episode_length(env) -> int:
    return int(getattr(env, "episode_length", getattr(env, "max_cycles", 25)))


def parity_run(env_id: str, kwargs: dict, device: str, precision: str, num_envs: int, episodes: float):
    """Step a CPU and a CUDA env side by side; returns a result dict."""
    import torch
    import warp as wp

    import war_envs

    t0 = time.perf_counter()
    common = dict(num_envs=num_envs, seed=SEED, precision=precision, autoreset_mode="same_step", **kwargs)
    cpu = war_envs.make(env_id, device="cpu", **common)
    gpu = war_envs.make(env_id, device=device, **common)
    # it really runs on the GPU: Warp buffers and torch views on the device
    first_state = next(iter(gpu._state_arrays().values()))
    assert isinstance(first_state, wp.array) and first_state.device.alias == gpu.device.alias == device, \
        f"{env_id}: env device is {gpu.device}"
    obs_c, obs_g = cpu.reset(), gpu.reset()
    for g in obs_g:
        assert str(obs_g[g].device) == device, f"{env_id}: observations on {obs_g[g].device}"
    starts_equal = all(torch.equal(cpu.get_state()[k], gpu.get_state()[k].cpu()) for k in cpu.state_keys)
    cmp = Comparison()
    cmp.add(0, flatten("obs", obs_c, {}), flatten("obs", obs_g, {}))
    gen = torch.Generator().manual_seed(0)
    steps = int(round(episodes * episode_length(cpu)))
    for t in range(1, steps + 1):
        actions = random_actions(cpu, gen)
        out_c = cpu.step(actions)
        out_g = gpu.step({g: a.to(device) for g, a in actions.items()})
        parts_c, parts_g = {}, {}
        for name, c, g_ in zip(("obs", "rew", "term", "trunc", "info"), out_c, out_g):
            flatten(name, c, parts_c)
            flatten(name, g_, parts_g)
        cmp.add(t, parts_c, parts_g)
    cmp.add(steps, flatten("state", cpu.get_state(), {}), flatten("state", gpu.get_state(), {}))
    sync(device)
    ok = starts_equal and cmp.max_abs <= TOL and cmp.discrete_mismatch is None
    return {"scenario": env_id, "kwargs": kwargs, "precision": precision, "worlds": num_envs, "steps": steps,
            "agents": cpu.num_agents, "starts_bitwise_equal": starts_equal, "max_abs_diff": cmp.max_abs,
            "max_at": cmp.where, "first_discrete_mismatch": cmp.discrete_mismatch, "ok": ok,
            "values_compared": cmp.values, "seconds": round(time.perf_counter() - t0, 1)}


def parity_configs():
    import war_envs

    busy = dict(num_taggers=4, num_runners=8, grid_length=10.0, episode_length=40, tagging_distance=0.15,
                edge_hit_penalty=-0.5, use_full_observation=False, num_other_agents_observed=4)
    configs = []
    for env_id in war_envs.registered_ids():
        if env_id == "Tag-v0":
            configs += [("Tag-v0", {}, 32, 2.0), ("Tag-v0", busy, 32, 3.0),
                        ("Tag-v0", {"preset": "warpdrive_training"}, 8, 1.0)]
        else:
            configs.append((env_id, {}, 64, 2.4))  # crosses an auto-reset
    return configs


# ---------------------------------------------------------------------------------------------
# throughput
# ---------------------------------------------------------------------------------------------


def tag_scale_config(agents: int) -> dict:
    taggers = max(1, agents // 10)
    return {"preset": "warpdrive_training", "num_taggers": taggers, "num_runners": agents - taggers,
            "grid_length": 20.0 * math.sqrt(agents / 110.0)}


def throughput(env_id: str, kwargs: dict, num_envs: int, device: str, seconds: float = 2.0) -> dict:
    """Steps/s with graph capture (the first step captures), actions drawn on the GPU."""
    import torch

    import war_envs

    t0 = time.perf_counter()
    env = war_envs.make(env_id, num_envs=num_envs, device=device, seed=0, **kwargs)
    env.reset()
    gen = torch.Generator(device=device).manual_seed(0)
    for _ in range(3):  # capture + warm-up
        env.step(random_actions(env, gen, device))
    sync(device)
    setup = time.perf_counter() - t0
    n, elapsed = 0, 0.0
    batch = 10
    while elapsed < seconds:
        t1 = time.perf_counter()
        for _ in range(batch):
            env.step(random_actions(env, gen, device))
        sync(device)
        elapsed += time.perf_counter() - t1
        n += batch
        batch = min(batch * 2, 1000)
    assert env._graph is not None, "the step was not graph-captured"
    rate = n * num_envs / elapsed
    result = {"scenario": env_id, "worlds": num_envs, "agents": env.num_agents, "steps": n,
              "env_steps_per_s": rate, "agent_steps_per_s": rate * env.num_agents,
              "ms_per_step": 1e3 * elapsed / n, "setup_s": round(setup, 1)}
    env.close()
    return result


def kernel_breakdown(env_id: str, kwargs: dict, num_envs: int, device: str, repeats: int = 5) -> list:
    """Time of each kernel of one (uncaptured) step, synchronising after every launch."""
    import torch
    import warp as wp

    import war_envs

    env = war_envs.make(env_id, num_envs=num_envs, device=device, seed=0, **kwargs)
    env.reset()
    gen = torch.Generator(device=device).manual_seed(0)
    env.step(random_actions(env, gen, device))
    times: dict[str, float] = {}
    original = wp.launch

    def timed(kernel, *args, **kw):
        wp.synchronize_device(device)
        t = time.perf_counter()
        original(kernel, *args, **kw)
        wp.synchronize_device(device)
        times[kernel.key] = times.get(kernel.key, 0.0) + time.perf_counter() - t

    wp.launch = timed
    try:
        for _ in range(repeats):
            env._write_actions(random_actions(env, gen, device))
            with env._warp_work():
                env._launch_step()
    finally:
        wp.launch = original
    env.close()
    return [{"kernel": k, "ms": 1e3 * v / repeats} for k, v in sorted(times.items(), key=lambda kv: -kv[1])]


# ---------------------------------------------------------------------------------------------
# sampler
# ---------------------------------------------------------------------------------------------


def sampler_checks(device: str, scale: float = 1.0) -> dict:
    import numpy as np
    import torch
    from scipy import stats

    from war_envs.core.sampling import Sampler

    out = {}
    # agreement of the draws on the CPU and the GPU (same seed, same counter-based streams)
    logits = torch.randn(100_000, 21, generator=torch.Generator().manual_seed(0))
    cpu = Sampler(seed=3).categorical(logits)
    gpu = Sampler(seed=3).categorical(logits.to(device))
    assert str(gpu.device) == device
    out["cpu_cuda_same_draws"] = float((cpu == gpu.cpu()).double().mean())
    md_c = Sampler(seed=4).multi_discrete(logits[:, :20], [8, 12])
    md_g = Sampler(seed=4).multi_discrete(logits[:, :20].to(device), [8, 12])
    out["cpu_cuda_same_multi_discrete"] = float((md_c == md_g.cpu()).double().mean())
    # chi-square on the GPU
    probs = np.array([0.05, 0.2, 0.0, 0.4, 0.1, 0.25])
    with np.errstate(divide="ignore"):
        row = torch.tensor(np.log(probs), dtype=torch.float32, device=device)
    draws = Sampler(seed=5).categorical(row.expand(500_000, -1)).cpu().numpy()
    counts = np.bincount(draws, minlength=6)
    keep = probs > 0
    out["zero_probability_drawn"] = int(counts[~keep].sum())
    out["chi_square_p"] = float(stats.chisquare(counts[keep], probs[keep] / probs[keep].sum() * len(draws)).pvalue)
    out["ok"] = (out["cpu_cuda_same_draws"] > 0.999 and out["cpu_cuda_same_multi_discrete"] > 0.999
                 and out["zero_probability_drawn"] == 0 and out["chi_square_p"] > 1e-4)

    # speed: ours vs torch on the GPU
    def bench(fn, calls):
        fn()
        sync(device)
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        sync(device)
        return (time.perf_counter() - t) / calls

    speed = []
    big = max(1, int(2000 * scale))
    for label, shape, calls in ((f"{big} worlds x 1000 agents x 21 actions", (big, 1000, 21), 20),
                                ("WarpDrive's case: 2 worlds x 5 agents x 3 actions", (2, 5, 3), 1000)):
        x = torch.randn(*shape, device=device)
        sampler = Sampler(seed=0)
        buf = torch.empty(shape[:-1], dtype=torch.int64, device=device)
        ours = bench(lambda: sampler.categorical(x, out=buf, validate=False), calls)
        cat = bench(lambda: torch.distributions.Categorical(logits=x).sample(), calls)
        mult = bench(lambda: torch.multinomial(torch.softmax(x.reshape(-1, shape[-1]), -1), 1), calls)
        speed.append({"case": label, "ours_ms": 1e3 * ours, "torch_categorical_ms": 1e3 * cat,
                      "torch_multinomial_ms": 1e3 * mult, "categorical_over_ours": cat / ours,
                      "multinomial_over_ours": mult / ours})
    out["speed"] = speed
    return out


# ---------------------------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------------------------


def training_configs(scale: float) -> list[tuple[str, str, int, int, dict]]:
    """(scenario, preset, worlds, measured updates, config overrides) of the end-to-end section.
    At 2000 Tag worlds the preset's 250-step rollouts would hold 14 GB of runner observations
    alone: 25-step rollouts and 8 minibatches keep the batch at 5 M agent-steps."""
    return [("Spread-v0", "spread", max(16, int(8192 * scale)), 6, {}),
            ("Tag-v0", "tag_warpdrive", max(2, int(100 * scale)), 3, {}),
            ("Tag-v0", "tag_warpdrive", max(4, int(2000 * scale)), 3, {"rollout_length": 25, "num_minibatches": 8})]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda:0")
    p.add_argument("--json", metavar="PATH", help="write every result as JSON")
    p.add_argument("--skip-throughput", action="store_true", help="parity and sampler checks only")
    p.add_argument("--skip-training", action="store_true", help="no end-to-end training section")
    p.add_argument("--dry-run-on-cpu", action="store_true",
                   help="test this script without a GPU: the 'CUDA' side is a second CPU env, sizes / 64")
    args = p.parse_args(argv)
    t_start = time.perf_counter()

    if args.dry_run_on_cpu:
        device, scale, name = "cpu", 1 / 64, "CPU (dry run: CPU vs CPU, sizes / 64)"
    else:
        device, problem = find_device(args.device)
        if device is None:
            code, message = problem
            log(message)
            return code
        import torch

        scale, name = 1.0, torch.cuda.get_device_name(device)

    import torch
    import warp as wp

    torch.set_num_threads(1)  # the CPU side only handles small tensors; avoid thread-pool stalls
    log(f"GPU check on {device}: {name}; torch {torch.__version__}, warp {wp.config.version}")
    report = {"device": device, "name": name, "parity": [], "parity_float32": []}
    failures = []

    # 1. parity
    log(f"\n1. CPU vs CUDA parity (float64: every value to {TOL:g}, flags exact; float32: information)")
    for env_id, kwargs, worlds, episodes in parity_configs():
        for precision in ("float64", "float32"):
            label = f"{env_id} {kwargs or ''} {precision}".replace("  ", " ")
            try:
                r = parity_run(env_id, kwargs, device, precision, worlds, episodes)
            except Exception as exc:  # a crash is a failure of this check, the others still run
                traceback.print_exc()
                r = {"scenario": env_id, "kwargs": kwargs, "precision": precision, "ok": False,
                     "error": f"{type(exc).__name__}: {exc}"}
            if precision == "float64":
                report["parity"].append(r)
                if not r["ok"]:
                    failures.append(f"parity {label}")
                status = "ok  " if r["ok"] else "FAIL"
            else:
                report["parity_float32"].append(r)
                status = "info"
            if "error" in r:
                log(f"  [{status}] {label}: {r['error']}")
            else:
                log(f"  [{status}] {label}: {r['worlds']} worlds x {r['agents']} agents, {r['steps']} steps, "
                    f"starts equal={r['starts_bitwise_equal']}, max |diff| {r['max_abs_diff']:.2e} "
                    f"({r['max_at']}), discrete mismatch: {r['first_discrete_mismatch']} [{r['seconds']} s]")

    # 2. throughput
    if not args.skip_throughput:
        log("\n2. Throughput with graph capture (actions drawn on the GPU)")
        report["throughput"] = []
        tag_worlds = max(1, int(2000 * scale))
        for env_id, kwargs, worlds in (("Spread-v0", {}, int(8192 * scale)), ("Spread-v0", {}, int(65536 * scale)),
                                       ("Tag-v0", tag_scale_config(1000), tag_worlds)):
            try:
                r = throughput(env_id, kwargs, worlds, device, seconds=2.0 * min(1.0, scale * 16))
                report["throughput"].append(r)
                log(f"  {env_id:10s} {worlds:6d} worlds x {r['agents']:4d} agents: "
                    f"{r['env_steps_per_s'] / 1e6:8.3f} M env-steps/s, {r['agent_steps_per_s'] / 1e6:9.2f} M "
                    f"agent-steps/s, {r['ms_per_step']:.3f} ms/step (setup {r['setup_s']} s)")
            except Exception as exc:
                traceback.print_exc()
                report["throughput"].append({"scenario": env_id, "worlds": worlds, "error": str(exc)})
                log(f"  {env_id} {worlds} worlds: ERROR {exc}")
        try:
            rows = kernel_breakdown("Tag-v0", tag_scale_config(1000), tag_worlds, device)
            report["tag_kernels"] = rows
            log(f"  Tag-v0 {tag_worlds} x 1000, one uncaptured step, per kernel: " +
                ", ".join(f"{r['kernel']} {r['ms']:.2f} ms" for r in rows))
        except Exception as exc:
            traceback.print_exc()
            log(f"  kernel breakdown: ERROR {exc}")

    # 3. end-to-end training
    if not args.skip_training:
        log("\n3. End-to-end MAPPO training (war_train, profile: env / policy / learn / other)")
        report["training"] = []
        for scenario, preset, worlds, updates, overrides in training_configs(scale):
            try:
                r = train_speed.measure(scenario, preset, worlds, updates, 2, device, 1, overrides)
                report["training"].append(r)
                log(f"  {scenario:9s} {preset:14s} {worlds:6d} worlds x {r['agents_per_world']:4d} agents: "
                    f"{r['agent_steps_per_s'] / 1e6:8.3f} M agent-steps/s end to end "
                    f"({r['env_steps_per_s'] / 1e3:.1f} k env-steps/s, {r['update_s']:.3f} s/update; env "
                    f"{100 * r['env_share']:.0f}%, policy {100 * r['policy_share']:.0f}%, learn "
                    f"{100 * r['learn_share']:.0f}%, other {100 * r['other_share']:.0f}%)")
            except Exception as exc:
                traceback.print_exc()
                report["training"].append({"scenario": scenario, "preset": preset, "worlds": worlds,
                                           "error": f"{type(exc).__name__}: {exc}"})
                log(f"  {scenario} {preset} {worlds} worlds: ERROR {exc}")

    # 4. sampler
    log("\n4. Sampler (war_envs.core.sampling) on the GPU")
    try:
        s = sampler_checks(device, scale)
        report["sampler"] = s
        if not s["ok"]:
            failures.append("sampler")
        log(f"  [{'ok  ' if s['ok'] else 'FAIL'}] same draws as the CPU: {s['cpu_cuda_same_draws']:.6f} "
            f"(MultiDiscrete {s['cpu_cuda_same_multi_discrete']:.6f}), chi-square p = {s['chi_square_p']:.3g}, "
            f"zero-probability draws: {s['zero_probability_drawn']}")
        for r in s["speed"]:
            log(f"  {r['case']}: ours {r['ours_ms']:.3f} ms, torch Categorical {r['torch_categorical_ms']:.3f} ms "
                f"({r['categorical_over_ours']:.1f}x), torch multinomial {r['torch_multinomial_ms']:.3f} ms "
                f"({r['multinomial_over_ours']:.1f}x)")
    except Exception as exc:
        traceback.print_exc()
        failures.append("sampler")
        log(f"  sampler: ERROR {exc}")

    report["failures"] = failures
    report["seconds"] = round(time.perf_counter() - t_start, 1)
    if args.json:
        _results.write(args.json, report, _results.metadata("gpu_check.py", argv))
    log(f"\n{'PASS' if not failures else 'FAIL: ' + ', '.join(failures)} in {report['seconds']} s")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
