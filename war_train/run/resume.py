"""What a resumed run checks: that the checkpoint is of the same mode, config (but
``RESUMABLE_CHANGES``), WAR config and env, and holds everything resuming needs."""

from __future__ import annotations

from war_envs.core.validation import check_action_mask
from war_train.checkpoint import RESUMABLE, WAR_RESUMABLE, malformed_entries
from war_train.config import TrainConfig, WarConfig, config_to_dict, war_config_to_dict
from war_train.learn.policy import env_signature

__all__ = ["RESUMABLE_CHANGES", "WAR_RESUMABLE_CHANGES", "check_config", "config_changes", "check_resume"]

RESUMABLE_CHANGES = ("total_env_steps", "checkpoint_every", "progress", "tensorboard", "gif", "eval_episodes",
                     "profile")


def config_changes(saved: dict, now: dict, default: dict, allowed=()) -> list[str]:
    """``field=saved (now value)`` for each field of ``now`` but ``allowed`` that differs from
    ``saved`` (a field newer than the checkpoint has its ``default`` there)."""
    return [f"{k}={saved.get(k)!r} (now {now[k]!r})" for k in sorted(now)
            if k not in allowed and saved.get(k, default[k]) != now[k]]


#: WarConfig fields that may differ between a checkpoint and the run resuming it (none: every one
#: shapes the rollouts)
WAR_RESUMABLE_CHANGES = ()


def check_resume(ckpt: dict, path, cfg: TrainConfig, env, war: WarConfig | None = None) -> None:
    """``ValueError`` unless ``ckpt`` (read from ``path``) is a checkpoint of this run: its mode
    (lock-step, or WAR with ``war``), complete (not networks only), of ``cfg`` (but
    ``RESUMABLE_CHANGES``) and ``war``, on ``env``; a lock-step checkpoint also holds the
    per-world entries this env needs (``alive``, ``action_mask``)."""
    name = repr(str(path))
    saved_war = ckpt.get("war")
    if war is None and isinstance(saved_war, dict):
        raise ValueError(f"resume: {name} is a WAR run's checkpoint (arm {saved_war.get('arm')!r}); resume it with "
                         f"war_train.train(..., war=its WarConfig, resume=...) or `war-train train --resume RUN_DIR`")
    if war is not None and not isinstance(saved_war, dict):
        raise ValueError(f"resume: {name} is a lock-step MAPPO run's checkpoint (no WAR config); resume it with "
                         f"war_train.train(env, config, resume=...) without war=, or `war-train train --resume "
                         f"RUN_DIR`")
    missing = malformed_entries(ckpt, RESUMABLE if war is None else WAR_RESUMABLE)
    if missing:
        raise ValueError(f"resume: {name} holds networks only (no {', '.join(missing)})"
                         + ("" if war is None else ", e.g. a WAR run's final checkpoint from before WAR runs resumed")
                         + "; it can be evaluated and rendered but not resumed")
    check_config(ckpt, name, cfg)
    if war is not None:
        diff = config_changes(saved_war, war_config_to_dict(war), war_config_to_dict(WarConfig()),
                              WAR_RESUMABLE_CHANGES)
        if diff:
            raise ValueError(f"resume: {name} was trained with a different WAR config: " + ", ".join(diff))
    _check_env(ckpt, name, cfg, env)
    if war is None:
        _check_world_entries(ckpt, name, cfg, env)


def _check_world_entries(ckpt: dict, name: str, cfg: TrainConfig, env) -> None:
    """A lock-step checkpoint's per-world entries that some envs need: who is in the game, which
    actions are available."""
    if env.agents_can_leave and not isinstance(ckpt.get("alive"), dict):
        raise ValueError(f"resume: {name} has no 'alive' masks, which this env's agents (who can leave the "
                         "game) need")
    if env.has_action_mask:
        masks = ckpt.get("action_mask")
        if not isinstance(masks, dict):
            raise ValueError(f"resume: {name} has no 'action_mask' entry, which this env (has_action_mask: some "
                             "actions are unavailable at times) needs")
        for g, s in env.groups.items():
            check_action_mask(f"resume: {name}'s action_mask[{g!r}]", masks.get(g),
                              (cfg.num_envs, s.n_agents, int(s.action_space.n)))


def check_config(ckpt: dict, name: str, cfg: TrainConfig, also=()) -> None:
    """Every mode: the config is the checkpoint's but for ``RESUMABLE_CHANGES`` (and ``also``)."""
    diff = config_changes(ckpt["config"], config_to_dict(cfg), config_to_dict(TrainConfig()),
                          (*RESUMABLE_CHANGES, *also))
    if diff:
        raise ValueError(f"resume: {name} was trained with a different config: " + ", ".join(diff))


def _check_env(ckpt: dict, name: str, cfg: TrainConfig, env) -> None:
    """Every mode: the env is the one the checkpoint was trained on."""
    sig = env_signature(env, cfg)
    if ckpt["env"] != sig:
        raise ValueError(f"resume: {name} was trained on the env {ckpt['env']}, not this one {sig}")
