"""Every scenario page opens with a committed picture of one episode (scripts/scenario_gifs.py,
docs/images/scenarios/): every registered scenario has its GIF and manifest entry, the page
shows it with a caption from the manifest, and the script renders random and trained policies."""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
import sys

import pytest

PIL = pytest.importorskip("PIL")
from PIL import Image  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import mkdocs_hooks  # noqa: E402
import scenario_gifs  # noqa: E402

import war_envs  # noqa: E402

PICTURES = ROOT / "docs" / mkdocs_hooks.PICTURES_DIR
MAX_BYTES = 300 * 1024


def _manifest(folder: pathlib.Path = PICTURES) -> dict:
    return json.loads((folder / scenario_gifs.MANIFEST).read_text())["pictures"]


def test_every_registered_scenario_has_its_committed_picture():
    pictures = _manifest()
    ids = war_envs.registered_ids()
    assert sorted(pictures) == sorted(ids), "run: python scripts/scenario_gifs.py --only <missing ids>"
    tracked = None
    if (ROOT / ".git").exists() and shutil.which("git"):
        tracked = set(subprocess.run(["git", "ls-files", "--", str(PICTURES)], cwd=ROOT, capture_output=True,
                                     text=True, check=True).stdout.split())
    for env_id in ids:
        entry = pictures[env_id]
        path = PICTURES / entry["file"]
        assert path.is_file(), path
        if tracked is not None:
            assert path.relative_to(ROOT).as_posix() in tracked, f"{path} is not committed (git add it)"
        assert entry["bytes"] == path.stat().st_size <= MAX_BYTES, env_id   # the manifest describes this file
        with Image.open(path) as gif:
            assert gif.format == "GIF" and gif.size == (entry["size"], entry["size"])
            assert gif.n_frames == entry["frames"] <= entry["steps"] + 1
        assert 1 <= entry["steps"] <= min(entry["max_steps"], entry["episode_length"])
        assert entry["policy"] in ("random", "greedy")
        assert entry["command"].startswith("python scripts/scenario_gifs.py")


@pytest.mark.parametrize("env_id", war_envs.registered_ids())
def test_page_opens_with_the_picture_and_its_caption(env_id):
    entry = _manifest()[env_id]
    lines = mkdocs_hooks.scenario_page(env_id).splitlines()
    assert lines[0] == f"# {env_id}"
    assert lines[2].startswith(f"![{env_id}: one episode, ") and f"(../images/scenarios/{entry['file']})" in lines[2]
    caption = lines[4]
    assert caption == f"*{mkdocs_hooks.picture_caption(env_id, entry)}*"
    assert ("Random actions" in caption) == (entry["policy"] == "random")


def test_caption_says_what_the_picture_shows():
    random = {"policy": "random", "preset": None, "seed": 1, "checkpoint_env_steps": None, "steps": 50,
              "episode_length": 100, "max_steps": 50, "frames": 51, "env_kwargs": {}, "size": 320}
    text = mkdocs_hooks.picture_caption("Tag-v0", random)
    assert text.startswith("Random actions") and "the first 50 of the episode's 100 steps" in text
    assert "default arguments" in text and "320 × 320" in text
    trained = {**random, "policy": "greedy", "preset": "tag", "checkpoint_env_steps": 3_000_000,
               "steps": 25, "episode_length": 25, "env_kwargs": {"num_taggers": 2}}
    text = mkdocs_hooks.picture_caption("Tag-v0", trained)
    assert "preset `tag`, acting greedily" in text and "3,000,000 env steps" in text and "seed 1" in text
    assert "the whole 25-step episode" in text and "`num_taggers=2`" in text
    ended = mkdocs_hooks.picture_caption("Tag-v0", {**random, "steps": 30})
    assert "ended after 30 of at most 100 steps" in ended
    still = mkdocs_hooks.picture_caption("Crypto-v0", {**random, "steps": 25, "episode_length": 25, "frames": 1})
    assert "one still frame" in still


def test_a_scenario_without_a_picture_fails_its_page(tmp_path):
    folder = tmp_path / mkdocs_hooks.PICTURES_DIR
    with pytest.raises(ValueError, match="manifest.json is missing"):
        mkdocs_hooks.scenario_picture("Spread-v0", tmp_path)
    folder.mkdir(parents=True)
    scenario_gifs.write_manifest(folder, {"Simple-v0": dict(_manifest()["Simple-v0"])})
    with pytest.raises(ValueError, match=r"Spread-v0: no entry .*scenario_gifs.py --only Spread-v0"):
        mkdocs_hooks.scenario_picture("Spread-v0", tmp_path)
    with pytest.raises(ValueError, match=r"Simple-v0: docs/images/scenarios/Simple-v0.gif is missing"):
        mkdocs_hooks.scenario_picture("Simple-v0", tmp_path)


def test_script_renders_random_actions_and_keeps_other_entries(tmp_path):
    out = tmp_path / "pictures"
    small = ["--out", str(out), "--size", "64", "--max-steps", "5"]
    assert scenario_gifs.main(small + ["--only", "Simple-v0"]) == 0
    assert scenario_gifs.main(small + ["--only", "Line-v0,Tag-v0"]) == 0
    pictures = _manifest(out)
    assert sorted(pictures) == ["Line-v0", "Simple-v0", "Tag-v0"]
    entry = pictures["Tag-v0"]
    assert entry["policy"] == "random" and entry["preset"] is None and entry["checkpoint"] is None
    assert entry["steps"] == 5 and entry["episode_length"] == 100 and entry["max_steps"] == 5
    assert entry["command"] == "python scripts/scenario_gifs.py " + " ".join(small + ["--only", "Line-v0,Tag-v0"])
    with Image.open(out / "Tag-v0.gif") as gif:
        assert gif.size == (64, 64) and gif.n_frames == entry["frames"]
    assert pictures["Simple-v0"]["command"].endswith("--only Simple-v0")
    # the same call draws the same picture
    before = (out / "Simple-v0.gif").read_bytes()
    assert scenario_gifs.main(small + ["--only", "Simple-v0"]) == 0
    assert (out / "Simple-v0.gif").read_bytes() == before


def test_script_plays_a_trained_checkpoint_where_the_preset_has_a_run(tmp_path, capsys):
    import war_train

    runs = tmp_path / "runs"
    cfg = war_train.preset_config("smoke", total_env_steps=400, checkpoint_every=1, eval_episodes=0)
    assert cfg.scenario == "Spread-v0" and cfg.seed == 1
    war_train.train(None, cfg, run_dir=runs / "spread__seed1")
    out = tmp_path / "pictures"
    small = ["--out", str(out), "--size", "64", "--max-steps", "5", "--runs", str(runs)]
    assert scenario_gifs.main(small + ["--only", "Spread-v0,PredatorPrey-v0,Simple-v0"]) == 0
    err = capsys.readouterr().err
    assert "PredatorPrey-v0: no run at" in err and "predator_prey__seed1" in err   # preset, but no run
    pictures = _manifest(out)
    spread = pictures["Spread-v0"]
    assert spread["policy"] == "greedy" and spread["preset"] == "spread" and spread["seed"] == 1
    assert spread["checkpoint"] == str(runs / "spread__seed1" / "checkpoint.pt")
    assert spread["checkpoint_env_steps"] == 400 and spread["env_kwargs"] == cfg.env_kwargs
    assert pictures["PredatorPrey-v0"]["policy"] == "random" and pictures["Simple-v0"]["policy"] == "random"
    assert "preset `spread`, acting greedily" in mkdocs_hooks.picture_caption("Spread-v0", spread)
    greedy = (out / "Spread-v0.gif").read_bytes()
    assert scenario_gifs.main(["--out", str(out), "--size", "64", "--max-steps", "5", "--only", "Spread-v0"]) == 0
    assert (out / "Spread-v0.gif").read_bytes() != greedy   # random actions play another episode

    # a run folder holding another scenario's run is refused, not drawn
    shutil.copytree(runs / "spread__seed1", runs / "predator_prey__seed1")
    with pytest.raises(ValueError, match=r"--runs: .*predator_prey__seed1.* is a run of Spread-v0, expected a run of "
                                         r"PredatorPrey-v0"):
        scenario_gifs.main(small + ["--only", "PredatorPrey-v0"])


@pytest.mark.parametrize("argv, message", [
    (["--only", "Nope-v0"], "--only: unknown scenario ids"),
    (["--only", ","], "--only: unknown scenario ids"),
    (["--size", "0"], "--size: expected an int >= 1"),
    (["--max-steps", "x"], "--max-steps: expected an int >= 1"),
    (["--runs", "/no/such/folder"], "--runs: /no/such/folder is not a folder"),
])
def test_script_rejects_bad_arguments(argv, message, capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        scenario_gifs.main(["--out", str(tmp_path)] + argv)
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_episode_frames_checks_its_arguments_and_stops_after_max_steps():
    from war_train.run.evaluate import episode_frames

    frames = list(episode_frames({}, "Simple-v0", {}, seed=1, mode="random", size=48, max_steps=3))
    assert len(frames) == 4 and all(f.shape == (48, 48, 3) and f.dtype.name == "uint8" for f in frames)
    assert len(list(episode_frames({}, "Simple-v0", {"max_cycles": 2}, seed=1, mode="random", size=48))) == 3
    with pytest.raises(ValueError, match="max_steps: expected None or an int >= 1"):
        episode_frames({}, "Simple-v0", {}, max_steps=0)
    with pytest.raises(ValueError, match="mode: expected one of"):
        episode_frames({}, "Simple-v0", {}, mode="best")
    with pytest.raises(ValueError, match=r"policies: no policy for groups \['agent'\]"):
        next(episode_frames({}, "Simple-v0", {}, mode="greedy"))
