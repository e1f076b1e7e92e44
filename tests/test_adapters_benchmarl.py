"""BenchMARL: war-envs scenarios as BenchMARL tasks; MAPPO runs two iterations (with an
evaluation) on Spread through BenchMARL's Experiment, moves the policy, and repeats exactly
under the same seed.  BenchMARL pins torchrl<0.12, so this runs only where the ``[benchmarl]``
extra is installed, not in ``[dev]``: ``bash scripts/benchmarl_check.sh`` builds that
environment and runs it (elsewhere it is skipped)."""

from __future__ import annotations

import importlib.util
import pathlib

import pytest
import torch

pytest.importorskip("benchmarl")

from benchmarl.algorithms import MappoConfig  # noqa: E402
from benchmarl.experiment import Experiment, ExperimentConfig  # noqa: E402
from benchmarl.models.mlp import MlpConfig  # noqa: E402

from war_train.adapters.benchmarl import WarEnvsClass, WarEnvsTask  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")


@pytest.mark.parametrize("task,config,groups", [
    (WarEnvsTask.SPREAD, {"max_cycles": 7}, {"agent": 3}),
    (WarEnvsTask.PREDATOR_PREY, {}, {"adversary": 3, "agent": 1}),
    (WarEnvsTask.TAG, {"episode_length": 9}, {"tagger": 1, "runner": 10}),
])
def test_task_class(task, config, groups):
    t = task.get_task(config=config)
    assert isinstance(t, WarEnvsClass) and t.supports_discrete_actions()
    env = t.get_env_fun(num_envs=4, continuous_actions=False, seed=0, device="cpu")()
    assert {g: len(a) for g, a in t.group_map(env).items()} == groups
    assert t.max_steps(env) == next(iter(config.values()), 25)
    assert "state" not in t.observation_spec(env).keys() and "state" in t.state_spec(env).keys()
    for g in groups:
        assert (g, "observation") in t.observation_spec(env).keys(True)
        assert (g, "action") in t.action_spec(env).keys(True)
    assert t.supports_continuous_actions() == (task != WarEnvsTask.TAG)


def _mappo_on_spread(folder: pathlib.Path, seed: int = 0) -> Experiment:
    """BenchMARL's MAPPO on Spread: two iterations of 400 frames (16 worlds), one evaluation."""
    torch.manual_seed(seed)
    folder.mkdir()
    cfg = ExperimentConfig.get_from_yaml()
    cfg.sampling_device = cfg.train_device = cfg.buffer_device = "cpu"
    cfg.max_n_iters, cfg.max_n_frames = 2, None
    cfg.on_policy_collected_frames_per_batch = 400
    cfg.on_policy_n_envs_per_worker = 16
    cfg.on_policy_n_minibatch_iters = 1
    cfg.on_policy_minibatch_size = 200
    cfg.evaluation, cfg.evaluation_interval, cfg.evaluation_episodes, cfg.render = True, 400, 2, False
    cfg.loggers, cfg.save_folder, cfg.create_json = ["csv"], str(folder), False
    cfg.checkpoint_interval, cfg.checkpoint_at_end = 0, False
    return Experiment(task=WarEnvsTask.SPREAD.get_task(config={"max_cycles": 25}),
                      algorithm_config=MappoConfig.get_from_yaml(), model_config=MlpConfig.get_from_yaml(),
                      critic_model_config=MlpConfig.get_from_yaml(), seed=seed, config=cfg)


def _policy_parameters(exp: Experiment) -> list[torch.Tensor]:
    return [p.detach().clone() for p in exp.policy.parameters()]


def test_benchmarl_mappo_trains_on_spread(tmp_path):
    exp = _mappo_on_spread(tmp_path / "a")
    before = _policy_parameters(exp)
    exp.run()
    after = _policy_parameters(exp)
    assert exp.n_iters_performed == 2 and exp.total_frames == 800
    # the optimizer stepped (the policy moved) and everything stayed finite
    assert any(not torch.equal(b, a) for b, a in zip(before, after))
    assert all(torch.isfinite(a).all() for a in after)
    assert torch.isfinite(torch.as_tensor(exp.mean_return)) and exp.mean_return < 0   # Spread: negative distances
    # same seed => the same trained policy
    again = _mappo_on_spread(tmp_path / "b")
    again.run()
    for a, b in zip(after, _policy_parameters(again)):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_benchmarl_mappo_samples_available_actions_on_smax(tmp_path):
    """SMAX-v0's masks reach BenchMARL: the task's action_mask_spec holds the group's
    ``action_mask`` (not its observation spec), the policy is a MaskedCategorical reading it, and
    MAPPO collects and trains on an env that refuses every unavailable action
    (``strict_action_mask=True``)."""
    task = WarEnvsClass(name="SMAX-v0", config={"max_steps": 20, "strict_action_mask": True})
    env = task.get_env_fun(num_envs=4, continuous_actions=False, seed=0, device="cpu")()
    masks = task.action_mask_spec(env)
    assert list(masks.keys(True, True)) == [("ally", "action_mask")]
    assert masks["ally", "action_mask"].shape == (3, 8) and masks["ally", "action_mask"].dtype == torch.bool
    assert ("ally", "action_mask") not in task.observation_spec(env).keys(True)
    env.close()
    spread = WarEnvsTask.SPREAD.get_task(config={})
    env = spread.get_env_fun(num_envs=2, continuous_actions=False, seed=0, device="cpu")()
    assert spread.action_mask_spec(env) is None  # no masks, no mask spec
    env.close()
    folder = tmp_path / "smax"
    folder.mkdir()
    cfg = ExperimentConfig.get_from_yaml()
    cfg.sampling_device = cfg.train_device = cfg.buffer_device = "cpu"
    cfg.max_n_iters, cfg.max_n_frames = 2, None
    cfg.on_policy_collected_frames_per_batch = 400
    cfg.on_policy_n_envs_per_worker = 16
    cfg.on_policy_n_minibatch_iters = 1
    cfg.on_policy_minibatch_size = 200
    # render=False: BenchMARL's video writer needs torchvision, which does not import beside
    # torch's CPU build here (docs/integrations.md); its per-step frame call is checked above
    cfg.evaluation, cfg.evaluation_interval, cfg.evaluation_episodes, cfg.render = True, 400, 2, False
    cfg.loggers, cfg.save_folder, cfg.create_json = ["csv"], str(folder), False
    cfg.checkpoint_interval, cfg.checkpoint_at_end = 0, False
    exp = Experiment(task=task, algorithm_config=MappoConfig.get_from_yaml(), model_config=MlpConfig.get_from_yaml(),
                     critic_model_config=MlpConfig.get_from_yaml(), seed=0, config=cfg)
    assert ("ally", "action_mask") in exp.policy.in_keys
    exp.run()   # a single unavailable action would raise in the strict env
    assert exp.n_iters_performed == 2 and exp.total_frames == 800


def test_benchmarl_vmas_navigation_task_runs_on_war_envs(tmp_path):
    """BenchMARL's own VMAS ``navigation`` task (its yaml config, specs and group map) with the
    task's env factory building war-envs' ``VmasEnv``: the task's specs on it equal those on
    torchrl's ``VmasEnv`` (VMAS itself), and MAPPO runs one iteration and an evaluation."""
    from benchmarl.environments import VmasTask

    from war_train.adapters.benchmarl import WarVmasClass, war_vmas_task
    from war_train.adapters.torchrl import VmasEnv

    theirs_task = VmasTask.NAVIGATION.get_from_yaml()
    task = war_vmas_task(VmasTask.NAVIGATION)
    assert isinstance(task, WarVmasClass) and task.config == theirs_task.config and task.name == "NAVIGATION"
    ours = task.get_env_fun(num_envs=4, continuous_actions=True, seed=0, device="cpu")()
    assert isinstance(ours, VmasEnv) and ours.batched.clamp_actions   # BenchMARL's clamp_actions=True
    if importlib.util.find_spec("vmas") is not None:
        theirs = theirs_task.get_env_fun(num_envs=4, continuous_actions=True, seed=0, device="cpu")()
        for spec in ("observation_spec", "info_spec", "action_spec", "state_spec", "action_mask_spec"):
            assert getattr(task, spec)(ours) == getattr(theirs_task, spec)(theirs), spec
        assert task.group_map(ours) == theirs_task.group_map(theirs) == {"agents": ["agent_0", "agent_1", "agent_2"]}
        assert ours.full_done_spec == theirs.full_done_spec and ours.full_reward_spec == theirs.full_reward_spec
    # BenchMARL's evaluation frames (render=True): the task's render_callback, VMAS's env.render call
    assert task.has_render(ours)
    ours.reset()
    assert task.__class__.render_callback(None, ours, None).shape == (700, 700, 3)
    ours.close()
    with pytest.raises(TypeError, match="task: expected a BenchMARL VMAS task"):
        war_vmas_task(WarEnvsTask.SPREAD.get_task(config={}))

    torch.manual_seed(0)
    folder = tmp_path / "navigation"
    folder.mkdir()
    cfg = ExperimentConfig.get_from_yaml()
    cfg.sampling_device = cfg.train_device = cfg.buffer_device = "cpu"
    cfg.max_n_iters, cfg.max_n_frames = 1, None
    cfg.on_policy_collected_frames_per_batch = 400
    cfg.on_policy_n_envs_per_worker = 4   # 4 worlds x the task's 100 steps
    cfg.on_policy_n_minibatch_iters = 1
    cfg.on_policy_minibatch_size = 200
    # render=False: BenchMARL's video writer needs torchvision, which does not import beside
    # torch's CPU build here (docs/integrations.md); its per-step frame call is checked above
    cfg.evaluation, cfg.evaluation_interval, cfg.evaluation_episodes, cfg.render = True, 400, 2, False
    cfg.loggers, cfg.save_folder, cfg.create_json = ["csv"], str(folder), False
    cfg.checkpoint_interval, cfg.checkpoint_at_end = 0, False
    exp = Experiment(task=task, algorithm_config=MappoConfig.get_from_yaml(), model_config=MlpConfig.get_from_yaml(),
                     critic_model_config=MlpConfig.get_from_yaml(), seed=0, config=cfg)
    assert isinstance(exp.test_env.base_env, VmasEnv)
    before = _policy_parameters(exp)
    exp.run()
    after = _policy_parameters(exp)
    assert exp.n_iters_performed == 1 and exp.total_frames == 400
    assert any(not torch.equal(b, a) for b, a in zip(before, after))
    assert all(torch.isfinite(a).all() for a in after) and torch.isfinite(torch.as_tensor(exp.mean_return))


def load_dropin():
    import importlib.util as iu

    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "benchmarl_dropin.py"
    spec = iu.spec_from_file_location("benchmarl_dropin", path)
    mod = iu.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_benchmarl_dropin_refuses_bad_arguments(capsys):
    mod = load_dropin()
    with pytest.raises(SystemExit):
        mod.main(["--task", "no_such_task"])
    assert "--task: expected one of BenchMARL's VMAS tasks" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        mod.main(["--tolerance", "1.5"])
    assert "--tolerance" in capsys.readouterr().err
    assert mod.war_scenario_id(mod.vmas_task("football")) == "Football-v0"


def test_benchmarl_dropin_benchmark_runs(tmp_path):
    """``benchmarks/benchmarl_dropin.py`` (issue #25's drop-in proof) at a toy budget: one MAPPO
    iteration on VMAS's navigation and on ours, the results file with each run's evaluation
    return under BenchMARL's key and the comparison of the means."""
    pytest.importorskip("vmas")
    import json

    mod = load_dropin()
    out = tmp_path / "dropin.json"
    threads = torch.get_num_threads()
    try:
        assert mod.main(["--seeds", "0", "--frames", "400", "--frames-per-batch", "400", "--n-envs", "4",
                         "--eval-every", "1", "--eval-episodes", "2", "--minibatch-iters", "1",
                         "--json", str(out)]) == 0
    finally:
        torch.set_num_threads(threads)
    report = json.loads(out.read_text())
    assert report["return_key"] == "eval/reward/episode_reward_mean" and report["seeds"] == [0]
    runs = {r["env"]: r for r in report["runs"]}
    assert runs["vmas"]["env_class"] == "torchrl.envs.libs.vmas.VmasEnv"
    assert runs["war"]["env_class"] == "war_train.adapters.torchrl.VmasEnv"
    for r in runs.values():
        assert r["frames"] == 400 and r["iterations"] == 1 and len(r["eval_curve"]) == 1
        assert r["final_eval_return"] == r["eval_curve"][-1]["return"] and len(r["train_curve"]) == 1
    assert runs["vmas"]["config"] == runs["war"]["config"]
    summary = report["summary"]
    assert 0 <= summary["relative_difference"] and summary["tolerance"] == 0.10
    assert summary["within_tolerance"] == (summary["relative_difference"] <= 0.10)
    assert report["task"].startswith("VmasTask.NAVIGATION")
    assert "machine" in report and report["versions"]["benchmarl"] != "?"
