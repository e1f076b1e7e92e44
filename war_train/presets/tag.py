"""Tag-v0 on a 2-core CPU: WarpDrive's rules in a smaller game, trained in minutes.

WarpDrive's training config (``tag_warpdrive``) plays 10 taggers and 100 runners on a 20 x 20
grid for 500 steps.  Here: 2 taggers and 10 runners on a 10 x 10 grid for 100 steps, the
other rules as in WarpDrive's config (tag distance 0.02 of the grid, ±10 tag rewards, the
k = 5 nearest agents observed, acceleration ±0.1 and turns up to ±2.356 rad), with four
changes that make the game learnable in a few million steps:

- ``observe_self=True``: each agent also observes its own heading (cos, sin), speed and
  position.  WarpDrive's observation is purely relative (other minus self), so a feed-forward
  tagger cannot know which way it is facing and cannot aim.  Scripted taggers against random
  runners in this arena (``benchmarks/tag_baselines.py``, WarpDrive's 21 x 21 levels): the best
  heading-blind strategy (full speed, one constant turn) makes 1.7x the tags of random
  taggers, pursuit with the true heading 5.1x.  Policies trained without their heading stayed
  at or below the heading-blind level: an MLP (1 M env steps) 1.6x, with 2 stacked frames
  (1 M) no better, GRU runs showed no gain by 0.3 M steps.
- ``observe_egocentric=True``: each observed agent's offset also in the observer's own frame
  (ahead, left), so "turn towards the nearest runner" is the sign of one input instead of a
  product of heading and offset the network has to learn (one seed, 4 M steps: trained taggers
  against random runners went from 2.3x to 3.0x the random taggers' tags).
- coarse action levels (``num_acceleration_levels=2``, ``num_turn_levels=4``: 3 x 5 actions
  instead of 21 x 21): the scripted pursuer keeps 4.4x (and heading-blind play drops to 1.1x),
  and exploration is much cheaper.
- an entropy bonus of 0.03 (at 0.01 the taggers' entropy collapsed to 0.15 nats within 1 M
  steps, and 6 M steps gave 2.7x-3.1x the random taggers' tags over 3 seeds).

Taggers and runners are trained together (their own actors and critics), 3 M env steps.
Measured (independent seeds 1-3, ``benchmarks/results/learning_tag.json``, tables in docs/tag.md):
trained taggers against random runners make 3.48x / 3.40x / 3.69x the tags of random taggers;
trained runners survive 95-96 steps against trained taggers, random runners 68-70.
"""

#: one line for ``war-train train --list-presets`` and ``--help``
DESCRIPTION = "Tag-v0 in a small game (2 taggers, 10 runners, 10 x 10 grid): 3 M env steps on a CPU"

PRESET = {
    "scenario": "Tag-v0",
    "env_kwargs": {"preset": "warpdrive_training", "num_taggers": 2, "num_runners": 10, "grid_length": 10.0,
                   "episode_length": 100, "num_other_agents_observed": 5, "observe_self": True,
                   "observe_egocentric": True,
                   "num_acceleration_levels": 2, "num_turn_levels": 4},
    "num_envs": 256,
    "rollout_length": 25,
    "total_env_steps": 3_000_000,
    "epochs": 5,
    "num_minibatches": 4,
    "lr": 3e-3,
    "critic_lr": 3e-3,
    "anneal_lr": True,
    "gamma": 0.98,
    "entropy_coef": 0.03,
    "checkpoint_every": 25,
}
