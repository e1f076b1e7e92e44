"""Hanabi-v0 without JaxMARL: hand-played games from injected decks (every rule of the docstring,
values worked out by hand), the observation blocks, legal-move masks through the front ends,
argument, state and action checks, ``check_all``.  JaxMARL itself: tests/test_hanabi_reference.py."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import war_envs
from war_envs.scenarios.hanabi.hanabi import action_names, observation_layout
from war_envs.testing import check_all, random_actions

#: 2 players, colours R Y, ranks 1 2 (two 1s and one 2 per colour: 6 cards), 2 cards each
TINY = {"num_agents": 2, "num_colors": 2, "num_ranks": 2, "hand_size": 2, "num_cards_of_rank": [2, 1],
        "max_info_tokens": 3, "max_life_tokens": 3}
R1, R2, Y1, Y2 = (0, 0), (0, 1), (1, 0), (1, 1)
NOOP = 8   # 2 discards, 2 plays, 2 colour hints, 2 rank hints, the no-op


def code(card):
    return card[0] * 2 + card[1]


def game(deck, **kwargs):
    """A one-world TINY game dealt from ``deck`` (pairs from the top: seat 0's two cards, seat 1's,
    then the draw pile)."""
    env = war_envs.make("Hanabi-v0", num_envs=1, seed=0, autoreset_mode="disabled", **{**TINY, **kwargs})
    env.inject_draws(deck=[deck])
    env.reset()
    return env


def play(env, seat_action, seat=None):
    """The seat to move plays ``seat_action``; everyone else the no-op."""
    state = env.get_state()
    mover = int(state["seat_order"][0, int(state["cur_player_idx"][0])]) if seat is None else seat
    actions = [NOOP] * env.num_agents
    actions[mover] = seat_action
    return env.step({"agent": torch.tensor([actions])})


def block(env, obs_row, name):
    start, size = env.layout[name]
    return obs_row[start:start + size].tolist()


def test_plays_score_misplays_cost_a_life_and_the_last_round_ends_the_game():
    env = game([R1, Y2, R2, Y1, R1, Y1])
    s = env.get_state()
    assert s["player_hands"].tolist() == [[[0, 3], [1, 2]]] and s["num_cards_dealt"].tolist() == [4]
    assert s["info_tokens"].tolist() == [3] and s["life_tokens"].tolist() == [3]
    # seat 0 plays R1 (action 2 + 0): +1, draws the fifth card (R1) into its last slot
    obs, rew, term, _, info = play(env, 2)
    s = env.get_state()
    assert rew["agent"].tolist() == [[1.0, 1.0]] and not term["agent"].any() and info["score"].tolist() == [1]
    assert s["fireworks"].tolist() == [[1, 0]] and s["player_hands"][0, 0].tolist() == [3, 0]
    assert s["card_knowledge"][0, 0].tolist() == [[1, 1, 1, 1], [1, 1, 1, 1]]
    assert s["cur_player_idx"].tolist() == [1] and s["num_cards_dealt"].tolist() == [5]
    # seat 1 plays R2: +1; it draws the last card: the last round starts (count 1)
    _, rew, term, _, _ = play(env, 2)
    s = env.get_state()
    assert rew["agent"].tolist() == [[1.0, 1.0]] and s["fireworks"].tolist() == [[2, 0]]
    assert s["num_cards_dealt"].tolist() == [6] and s["last_round_count"].tolist() == [1] and not term["agent"].any()
    # seat 0 plays Y2 onto an empty yellow firework: a misplay (life lost, card discarded, 0 points);
    # the deck is empty: no card drawn, the slot stays empty
    _, rew, term, _, _ = play(env, 2)
    s = env.get_state()
    assert rew["agent"].tolist() == [[0.0, 0.0]] and s["life_tokens"].tolist() == [2]
    assert s["discard_pile"][0, :2].tolist() == [3, -1] and s["num_cards_discarded"].tolist() == [1]
    assert s["player_hands"][0, 0].tolist() == [0, -1] and s["card_knowledge"][0, 0, 1].tolist() == [0, 0, 0, 0]
    assert s["last_round_count"].tolist() == [2] and not term["agent"].any()
    # seat 1 (num_agents + 1 = 3 turns counted from the draw of the last card): the game ends
    obs, rew, term, trunc, info = play(env, 6)   # hint rank 1 to seat 0 (it holds R1)
    assert term["agent"].all() and not trunc["agent"].any() and info["score"].tolist() == [2]
    assert env.get_state()["terminal"].tolist() == [1]
    # seat 1 sees seat 0 missing a card (relative position 1); seat 0 sees itself missing one
    assert block(env, obs["agent"][0, 1], "hands")[-2:] == [0.0, 1.0]
    assert block(env, obs["agent"][0, 0], "hands")[-2:] == [1.0, 0.0]


def test_losing_the_last_life_takes_back_the_score():
    env = game([Y2, R1, R1, Y1, R2, Y1])
    env.set_state({"life_tokens": torch.tensor([1]), "fireworks": torch.tensor([[1, 0]]),
                   "score": torch.tensor([1])})
    _, rew, term, _, info = play(env, 2)                 # Y2 on an empty yellow firework
    s = env.get_state()
    assert rew["agent"].tolist() == [[-1.0, -1.0]] and term["agent"].all()
    assert s["out_of_lives"].tolist() == [1] and s["bombed"].tolist() == [1] and s["score"].tolist() == [0]
    assert info["score"].tolist() == [0] and s["life_tokens"].tolist() == [0]


def test_a_perfect_score_ends_the_game_and_completing_a_colour_regains_a_token():
    env = game([Y2, R1, R1, Y1, R2, Y1])
    env.set_state({"fireworks": torch.tensor([[2, 1]]), "score": torch.tensor([3]), "info_tokens": torch.tensor([1])})
    _, rew, term, _, info = play(env, 2)                 # Y2: the last card
    s = env.get_state()
    assert rew["agent"].tolist() == [[1.0, 1.0]] and term["agent"].all() and info["score"].tolist() == [4]
    assert s["info_tokens"].tolist() == [2] and s["terminal"].tolist() == [1] and s["out_of_lives"].tolist() == [0]


def test_hints_reveal_and_narrow_knowledge_and_cost_a_token():
    env = game([R1, Y2, R2, Y1, R1, Y1])
    # seat 0 hints colour R (2 · hand + 0) to seat 1, whose hand is R2, Y1
    obs, rew, _, _, _ = play(env, 4)
    s = env.get_state()
    assert rew["agent"].tolist() == [[0.0, 0.0]] and s["info_tokens"].tolist() == [2]
    assert s["colors_revealed"][0, 1].tolist() == [[1, 0], [0, 0]]
    # knowledge over (colour, rank) = R1 R2 Y1 Y2: card 0 is red, card 1 is not
    assert s["card_knowledge"][0, 1].tolist() == [[1, 1, 0, 0], [0, 0, 1, 1]]
    # seat 1 answers with rank 2 (2 · hand + colours + 1) to seat 0 (R1, Y2)
    play(env, 7)
    s = env.get_state()
    assert s["ranks_revealed"][0, 0].tolist() == [[0, 0], [0, 1]]
    assert s["card_knowledge"][0, 0].tolist() == [[1, 0, 1, 0], [0, 1, 0, 1]]
    assert s["info_tokens"].tolist() == [1]
    # seat 0's last-action block after seat 1's hint: actor one seat on, a rank hint to seat 0
    # (relative 0), rank 2, its second card touched
    obs = env.observations()["agent"][0]
    last = block(env, obs[0], "last_action")
    assert last == ([0, 1] + [0, 0, 0, 1] + [1, 0] + [0, 0] + [0, 1] + [0, 1] + [0, 0] + [0] * 4 + [0, 0])
    # seat 0's belief of its own card 1 (R2 or Y2, one copy of each unseen): [0, .5, 0, .5], rank 2 revealed
    belief = block(env, obs[0], "belief")
    per_card = 4 + 2 + 2
    assert belief[per_card:2 * per_card] == [0, 0.5, 0, 0.5, 0, 0, 0, 1]
    # seat 1's belief of its card 0 (red: R1 has 2 copies, R2 1): [2/3, 1/3, 0, 0], red revealed
    assert np.allclose(block(env, obs[1], "belief")[:per_card], [2 / 3, 1 / 3, 0, 0, 1, 0, 0, 0])


def test_discards_regain_tokens_and_the_masks_follow_the_rules():
    env = game([R1, Y2, R2, Y1, R1, Y1])
    mask = env.action_mask()["agent"][0]
    # tokens full: no discard; both plays; hints of what seat 1 holds (R, Y; ranks 1, 2); seat 1: no-op only
    assert mask[0].tolist() == [False, False, True, True, True, True, True, True, False]
    assert mask[1].tolist() == [False] * 8 + [True]
    play(env, 4)                                       # a hint: 2 tokens left
    play(env, 6)                                       # seat 1 hints rank 1: 1 token left
    play(env, 0)                                       # seat 0 discards R1: back to 2
    s = env.get_state()
    assert s["info_tokens"].tolist() == [2] and s["discard_pile"][0, 0].tolist() == 0
    assert s["colors_revealed"][0, 0].tolist() == [[0, 0], [0, 0]]   # the new card knows nothing
    env.set_state({"info_tokens": torch.tensor([0])})
    mask = env.action_mask()["agent"][0]
    assert mask[1].tolist() == [True, True, True, True, False, False, False, False, False]  # no token: no hint
    with pytest.raises(ValueError, match="illegal"):
        env.step({"agent": torch.tensor([[NOOP, 4]])})         # a hint without tokens
    with pytest.raises(ValueError, match="illegal"):
        env.step({"agent": torch.tensor([[0, 0]])})            # seat 0 is not to move


def test_observation_layout_and_action_names_are_jaxmarls():
    layout = observation_layout(2, 5, 5, 5, 8, 3, [3, 2, 2, 2, 1])
    assert {k: n for k, (_, n) in layout.items()} == {"hands": 127, "board": 76, "discards": 50,
                                                      "last_action": 55, "belief": 350}
    with war_envs.make("Hanabi-v0", num_envs=2, seed=0, num_agents=5) as env:
        assert env.hand_size == 4 and env.num_moves == 2 * 4 + 4 * 10 + 1 and env.obs_size == 405 + 66 + 50 + 59 + 700
        assert env.observations is not None and env.groups["agent"].obs_dim == env.obs_size
    names = action_names(3, 2, 2, 1, ["R", "Y"])
    assert names == ("D0", "P0", "HR to P1 relative", "HY to P1 relative", "HR to P2 relative", "HY to P2 relative",
                     "H1 to P1 relative", "H2 to P1 relative", "H1 to P2 relative", "H2 to P2 relative", "N")


def test_shuffled_seats_give_agents_their_seat_s_view():
    env = war_envs.make("Hanabi-v0", num_envs=1, seed=0, autoreset_mode="disabled", shuffle_player_order=True,
                        **{k: v for k, v in TINY.items()})
    env.inject_draws(deck=[[R1, Y2, R2, Y1, R1, Y1]], seat_order=[[1, 0]])
    obs = env.reset()
    mask = env.action_mask()["agent"][0]
    # agent 1 sits in seat 0 and moves first; it sees seat 1's hand (agent 0's: R2, Y1)
    assert mask[1, :8].any() and mask[0].tolist() == [False] * 8 + [True]
    hands = block(env, obs["agent"][0, 1], "hands")
    assert hands[:8] == [0, 1, 0, 0, 0, 0, 1, 0]
    _, rew, _, _, _ = env.step({"agent": torch.tensor([[NOOP, 2]])})   # agent 1 plays R1
    assert rew["agent"].tolist() == [[1.0, 1.0]]


@pytest.mark.parametrize("kwargs,error,match", [
    ({"num_agents": 6}, ValueError, "num_agents"),
    ({"num_agents": 1}, ValueError, "num_agents"),
    ({"num_ranks": 4}, ValueError, "num_cards_of_rank"),
    ({"num_cards_of_rank": [3, 2, 0, 2, 1]}, ValueError, "num_cards_of_rank"),
    ({"num_colors": 7}, ValueError, "color_map"),
    ({"color_map": ["R", "Y"]}, ValueError, "color_map"),
    ({"num_colors": 1, "num_ranks": 1, "num_cards_of_rank": [2]}, ValueError, "hand_size"),
    ({"hand_size": 0}, ValueError, "hand_size"),
    ({"max_info_tokens": 0}, ValueError, "max_info_tokens"),
    ({"agents": ["a", "b"]}, ValueError, "agents"),
    ({"num_moves": 21}, ValueError, "num_moves"),
    ({"shuffle_player_order": 1}, TypeError, "shuffle_player_order"),
    ({"max_steps": 0}, ValueError, "max_steps"),
])
def test_bad_arguments_are_refused_by_name(kwargs, error, match):
    with pytest.raises(error, match=match):
        war_envs.make("Hanabi-v0", **kwargs)


def test_bad_decks_states_and_seats_are_refused_and_leave_the_world():
    env = game([R1, Y2, R2, Y1, R1, Y1])
    before = env.get_state()
    with pytest.raises(ValueError, match="deck"):
        env.inject_draws(deck=[[R1, R1, R1, Y1, R2, Y2]])                     # three R1s
    with pytest.raises(ValueError, match="deck"):
        env.inject_draws(deck=[[R1, Y2, R2, Y1, R1, (2, 0)]])                 # no colour 2
    with pytest.raises(ValueError, match="deck"):
        env.inject_draws(deck=[[R1, Y2, R2, Y1, R1]])
    with pytest.raises(ValueError, match="seat_order"):
        env.inject_draws(deck=[[R1, Y2, R2, Y1, R1, Y1]], seat_order=[[1, 0]])  # seats are not shuffled
    with pytest.raises(ValueError, match="deck"):
        env.set_state({"deck": torch.tensor([[0, 0, 0, 2, 1, 3]], dtype=torch.int32)})
    with pytest.raises(ValueError, match="seat_order"):
        env.set_state({"seat_order": torch.tensor([[1, 1]], dtype=torch.int32)})
    with pytest.raises(ValueError, match="player_hands"):
        env.set_state({"player_hands": torch.tensor([[[0, 4], [1, 2]]], dtype=torch.int32)})
    with pytest.raises(ValueError, match="info_tokens"):
        env.set_state({"info_tokens": torch.tensor([4])})
    after = env.get_state()
    assert all(torch.equal(before[k], after[k]) for k in before)


def test_our_deal_the_autoreset_and_clone_worlds():
    with war_envs.make("Hanabi-v0", num_envs=16, seed=3, num_agents=3) as env:
        env.reset()
        s = env.get_state()
        want = torch.tensor([3, 2, 2, 2, 1]).repeat(5)
        for e in range(16):
            assert torch.equal(torch.bincount(s["deck"][e].long(), minlength=25), want)
            assert torch.equal(s["player_hands"][e].reshape(-1), s["deck"][e, :15])
        assert len({tuple(d.tolist()) for d in s["deck"]}) == 16
        gen = torch.Generator().manual_seed(0)
        done_any = False
        for _ in range(60):
            _, _, term, _, info = env.step(random_actions(env, gen))
            if term["agent"].any():
                done_any = True
                e = int(term["agent"][:, 0].nonzero()[0])
                assert info["final_action_mask"]["agent"][e].any(-1).all()
                assert env.get_state()["t"][e] == 0        # SAME_STEP: a fresh deal
        assert done_any
        env.clone_worlds([0], [5])
        a, b = env.observations()["agent"][0].clone(), env.observations()["agent"][5].clone()
        assert torch.equal(a, b)
        acts = random_actions(env, gen)
        acts["agent"][5] = acts["agent"][0]
        obs, _, _, _, _ = env.step(acts)
        assert torch.equal(obs["agent"][0], obs["agent"][5])


def test_float64_worlds_step_as_float32_ones_and_render():
    a = war_envs.make("Hanabi-v0", num_envs=32, seed=4)
    b = war_envs.make("Hanabi-v0", num_envs=32, seed=4, precision="float64")
    a.reset(), b.reset()
    gen = torch.Generator().manual_seed(0)
    for _ in range(40):
        act = random_actions(a, gen)
        oa, ra, ta, _, _ = a.step(act)
        ob, rb, tb, _, _ = b.step(act)
        assert torch.equal(oa["agent"], ob["agent"]) and torch.equal(ra["agent"].double(), rb["agent"])
        assert torch.equal(ta["agent"], tb["agent"])
    frame = a.render_frame(3, width=320, height=240)
    assert frame.shape == (240, 320, 3) and frame.dtype == np.uint8 and len(np.unique(frame.reshape(-1, 3), axis=0)) > 5
    assert a.render_frame(0).shape == (700, 700, 3)


def test_the_time_limit_truncates():
    env = game([R1, Y2, R2, Y1, R1, Y1], max_steps=2)
    assert env.max_cycles == 2
    _, _, term, trunc, _ = play(env, 4)
    assert not trunc["agent"].any()
    _, _, term, trunc, _ = play(env, 6)
    assert trunc["agent"].all() and not term["agent"].any()


@pytest.mark.parametrize("kwargs", [{}, {"num_agents": 4, "shuffle_player_order": True}])
def test_check_all(kwargs):
    check_all("Hanabi-v0", **kwargs)


def test_redraw_private_future_reshuffles_only_the_undealt_cards():
    with war_envs.make("Hanabi-v0", num_envs=4, seed=2) as env:
        obs = env.reset()["agent"].clone()
        before = env.get_state()
        env.redraw_private_future([1, 2], torch.Generator().manual_seed(0))
        after = env.get_state()
        assert torch.equal(env.observations()["agent"], obs)
        assert torch.equal(after["player_hands"], before["player_hands"])
        assert torch.equal(after["deck"][[0, 3]], before["deck"][[0, 3]])
        for e in (1, 2):
            assert torch.equal(after["deck"][e, :10], before["deck"][e, :10])
            assert torch.equal(after["deck"][e, 10:].sort().values, before["deck"][e, 10:].sort().values)
            assert not torch.equal(after["deck"][e], before["deck"][e])


def test_the_trusted_step_plays_illegal_moves_by_jaxmarls_arithmetic_and_passes_on_the_no_op():
    env = game([R1, Y2, R2, Y1, R1, Y1])
    env.step({"agent": torch.tensor([[0, NOOP]])}, trusted=True)   # a discard at full tokens: none regained
    s = env.get_state()
    assert s["info_tokens"].tolist() == [3] and s["discard_pile"][0, 0].tolist() == 0
    assert s["cur_player_idx"].tolist() == [1]
    before = env.get_state()
    for a in (NOOP, 99, -3):   # the mover's no-op, and values outside the space: the turn passes
        env.step({"agent": torch.tensor([[NOOP, a]])}, trusted=True)
        after = env.get_state()
        assert after["player_hands"].tolist() == before["player_hands"].tolist()
        assert after["info_tokens"].tolist() == before["info_tokens"].tolist()
        assert after["cur_player_idx"].tolist() != before["cur_player_idx"].tolist()
        env.set_state({"cur_player_idx": before["cur_player_idx"]})
