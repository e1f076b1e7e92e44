"""Action sampling speed: ``war_envs.core.sampling`` (a Warp kernel) vs torch.

For each batch of logits ``[rows, n]`` (float32, on the CPU unless ``--device cuda:N``) we time

* ours: ``Sampler.categorical(logits, out=buf)`` (also with ``validate=False``: no check that
  every row is a distribution) and, for MultiDiscrete, ``Sampler.multi_discrete``;
* ``torch.distributions.Categorical(logits=logits).sample()`` (the usual trainer call; with
  MultiDiscrete one ``Categorical`` per component) and
  ``torch.multinomial(torch.softmax(logits, -1), 1)``,

and print the time per call and torch's time over ours.  Sizes: WarpDrive's own sampler
benchmark (2 worlds x 5 agents x 3 actions — it reports 7-8x over ``Categorical`` in CUDA C),
Tag's training preset (100 worlds x 110 agents, 21 + 21 actions) and a large batch (256 worlds x
1000 agents x 21 actions; ``--quick``: 64 worlds).  Single-threaded by default (``torch`` and the
process pinned to one core, like the other benchmarks); ``--threads N`` to change.  Median of 5
repeats of calls sized to ~``--target-s``.

    python benchmarks/sampler_speed.py [--quick] [--json PATH] [--device cuda:0]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _results  # noqa: E402  (benchmarks/_results.py: the metadata of results files)


def timed(fn, target_s: float, sync) -> float:
    """Median seconds per call over 5 repeats of a call count sized to ~target_s."""
    fn()
    sync()
    t = time.perf_counter()
    fn()
    sync()
    calls = max(1, int(target_s / max(time.perf_counter() - t, 1e-7)))
    times = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        times.append((time.perf_counter() - t) / calls)
    return statistics.median(times)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="smaller large case, 0.1 s repeats")
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1, process pinned)")
    p.add_argument("--target-s", type=float, help="seconds per repeat (default 0.3; 0.1 with --quick)")
    p.add_argument("--json", metavar="PATH")
    args = p.parse_args(argv)
    target = args.target_s or (0.1 if args.quick else 0.3)
    if args.threads == 1 and args.device == "cpu" and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[-1:])
    import torch

    from war_envs.core.sampling import Sampler

    torch.set_num_threads(args.threads)
    device = torch.device(args.device)

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    big = 64 if args.quick else 256
    cases = [("WarpDrive's case: 2 x 5 agents, 3 actions", (2, 5), [3]),
             ("Tag preset: 100 x 110 agents, 21 actions", (100, 110), [21]),
             ("Tag preset: 100 x 110 agents, MultiDiscrete [21, 21]", (100, 110), [21, 21]),
             (f"{big} x 1000 agents, 21 actions", (big, 1000), [21])]
    rows = []
    gen = torch.Generator().manual_seed(0)
    for label, lead, nvec in cases:
        logits = torch.randn(*lead, sum(nvec), generator=gen).to(device)
        sampler = Sampler(seed=0)
        if len(nvec) == 1:
            buf = torch.empty(lead, dtype=torch.int64, device=device)
            ours = timed(lambda: sampler.categorical(logits, out=buf), target, sync)
            ours_fast = timed(lambda: sampler.categorical(logits, out=buf, validate=False), target, sync)
            cat = timed(lambda: torch.distributions.Categorical(logits=logits).sample(), target, sync)
            flat = logits.reshape(-1, nvec[0])
            mult = timed(lambda: torch.multinomial(torch.softmax(flat, -1), 1), target, sync)
        else:
            buf = torch.empty((*lead, len(nvec)), dtype=torch.int64, device=device)
            ours = timed(lambda: sampler.multi_discrete(logits, nvec, out=buf), target, sync)
            ours_fast = timed(lambda: sampler.multi_discrete(logits, nvec, out=buf, validate=False), target, sync)
            parts = logits.split(nvec, dim=-1)
            cat = timed(lambda: torch.stack([torch.distributions.Categorical(logits=x).sample() for x in parts], -1),
                        target, sync)
            mult = timed(lambda: torch.stack([torch.multinomial(torch.softmax(x.reshape(-1, x.shape[-1]), -1), 1)
                                              for x in parts], -1), target, sync)
        rows.append({"case": label, "rows": int(torch.tensor(lead).prod()), "nvec": nvec,
                     "ours_us": ours * 1e6, "ours_no_validate_us": ours_fast * 1e6,
                     "torch_categorical_us": cat * 1e6, "torch_multinomial_us": mult * 1e6,
                     "categorical_over_ours": cat / ours, "multinomial_over_ours": mult / ours})

    where = f"{device}" + (f", {args.threads} torch thread(s)" if device.type == "cpu" else "")
    print(f"\nAction sampling on {where}: time per call (median of 5), torch's time over ours\n")
    headers = ["case", "ours µs", "ours (no validate) µs", "Categorical µs", "×", "multinomial µs", "×"]
    table = [[r["case"], f"{r['ours_us']:.1f}", f"{r['ours_no_validate_us']:.1f}", f"{r['torch_categorical_us']:.1f}",
              f"{r['categorical_over_ours']:.1f}×", f"{r['torch_multinomial_us']:.1f}",
              f"{r['multinomial_over_ours']:.1f}×"] for r in rows]
    widths = [max(len(h), *(len(t[i]) for t in table)) for i, h in enumerate(headers)]

    def line(cells):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    print(line(headers))
    print(line(["-" * w for w in widths]))
    for t in table:
        print(line(t))
    if args.json:
        _results.write(args.json, rows, _results.metadata("sampler_speed.py", argv))


if __name__ == "__main__":
    main()
