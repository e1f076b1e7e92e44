"""What a resumed run checks: that the checkpoint is of the same mode, config (but
``RESUMABLE_CHANGES``), WAR config and env, and holds everything resuming needs."""

from __future__ import annotations

from war_envs.core.validation import check_action_mask
from war_train.checkpoint import RESUMABLE, WAR_RESUMABLE, malformed_entries
from war_train.config import TrainConfig, config_to_dict
from war_train.policy import env_signature
from war_train.war_config import WarConfig, war_config_to_dict

__all__ = ["RESUMABLE_CHANGES", "WAR_RESUMABLE_CHANGES", "check_config", "config_changes", "check_lockstep_resume",
           "check_war_resume"]

RESUMABLE_CHANGES = ("total_env_steps", "checkpoint_every", "progress", "tensorboard", "gif", "eval_episodes",
                     "profile")


def config_changes(saved: dict, now: dict, default: dict, allowed=()) -> list[str]:
    """``field=saved (now value)`` for each field of ``now`` but ``allowed`` that differs from
    ``saved`` (a field newer than the checkpoint has its ``default`` there)."""
    return [f"{k}={saved.get(k)!r} (now {now[k]!r})" for k in sorted(now)
            if k not in allowed and saved.get(k, default[k]) != now[k]]


def check_lockstep_resume(ckpt: dict, path, cfg: TrainConfig, env) -> None:
    """``ValueError`` unless ``ckpt`` (read from ``path``) is a lock-step run's checkpoint of ``cfg`` on ``env``."""
    name = repr(str(path))
    if isinstance(ckpt.get("war"), dict):
        raise ValueError(f"resume: {name} is a WAR run's checkpoint (arm {ckpt['war'].get('arm')!r}); resume it with "
                         f"war_train.train(..., war=its WarConfig, resume=...) or `war-train train --resume RUN_DIR`")
    missing = malformed_entries(ckpt, RESUMABLE)
    if missing:
        raise ValueError(f"resume: {name} holds networks only (no {', '.join(missing)}); "
                         f"it can be evaluated and rendered but not resumed")
    check_config(ckpt, name, cfg)
    _check_env(ckpt, name, cfg, env)
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

#: WarConfig fields that may differ between a checkpoint and the run resuming it (none: every one
#: shapes the rollouts)
WAR_RESUMABLE_CHANGES = ()


def check_war_resume(ckpt: dict, path, cfg: TrainConfig, war: WarConfig, env) -> None:
    """``ValueError`` unless ``ckpt`` (read from ``path``) is a WAR run's checkpoint of ``cfg``/``war`` on ``env``."""
    if not isinstance(ckpt.get("war"), dict):
        raise ValueError(f"resume: {str(path)!r} is a lock-step MAPPO run's checkpoint (no WAR config); resume it "
                         f"with war_train.train(env, config, resume=...) without war=, or `war-train train --resume "
                         f"RUN_DIR`")
    missing = malformed_entries(ckpt, WAR_RESUMABLE)
    if missing:
        raise ValueError(f"resume: {str(path)!r} holds networks only (no {', '.join(missing)}), e.g. a WAR run's "
                         f"final checkpoint from before WAR runs resumed; it can be evaluated and rendered but not "
                         f"resumed")
    check_config(ckpt, repr(str(path)), cfg)
    diff = config_changes(ckpt["war"], war_config_to_dict(war), war_config_to_dict(WarConfig()),
                          WAR_RESUMABLE_CHANGES)
    if diff:
        raise ValueError(f"resume: {str(path)!r} was trained with a different WAR config: " + ", ".join(diff))
    _check_env(ckpt, repr(str(path)), cfg, env)


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
