"""Hanabi-v0: JaxMARL's ``hanabi`` (the cooperative card game, 2 to 5 players, turn-based with
legal-move masks)."""

from __future__ import annotations

import numpy as np
import torch
import warp as wp

from war_envs.core import validation as v
from war_envs.core.batched_env import world_bytes
from war_envs.core.scenario import EpisodeMetric
from war_envs.core.small_game import SmallGameEnv
from war_envs.scenarios.hanabi import _kernels as K

__all__ = ["Hanabi", "HANABI_DEFAULTS", "DEFAULT_COLOR_MAP", "action_names", "observation_layout"]

#: JaxMARL 0.2.0 ``HanabiEnv.__init__`` defaults (``hand_size=None``: 5 cards for 2-3 players, 4 for 4-5)
HANABI_DEFAULTS: dict = {"num_agents": 2, "num_colors": 5, "num_ranks": 5, "hand_size": None,
                         "max_info_tokens": 8, "max_life_tokens": 3, "num_cards_of_rank": [3, 2, 2, 2, 1],
                         "color_map": None, "shuffle_player_order": False}
#: JaxMARL's colour labels (R, Y, G, W, B and the sixth suit M)
DEFAULT_COLOR_MAP = ("R", "Y", "G", "W", "B", "M")
#: the colours ``render_frame`` paints the suits with (by colour index, cycling)
SUIT_RGB = ((214, 48, 49), (240, 200, 30), (46, 160, 67), (235, 235, 235), (52, 101, 214), (150, 70, 190),
            (240, 130, 30), (30, 190, 190))


def action_names(num_agents: int, num_colors: int, num_ranks: int, hand_size: int, color_map) -> tuple[str, ...]:
    """JaxMARL's ``action_encoding``: ``D0 …`` discard, ``P0 …`` play, ``HR to P1 relative`` hint a
    colour, ``H1 to P1 relative`` hint a rank (P1 is the next seat), ``N`` the no-op."""
    names = [f"D{h}" for h in range(hand_size)] + [f"P{h}" for h in range(hand_size)]
    names += [f"H{color_map[c]} to P{k + 1} relative" for k in range(num_agents - 1) for c in range(num_colors)]
    names += [f"H{r + 1} to P{k + 1} relative" for k in range(num_agents - 1) for r in range(num_ranks)]
    return tuple(names + ["N"])


def observation_layout(num_agents: int, num_colors: int, num_ranks: int, hand_size: int, max_info_tokens: int,
                       max_life_tokens: int, num_cards_of_rank) -> dict[str, tuple[int, int]]:
    """``{block: (start, length)}`` of an observation (JaxMARL's ``get_obs`` concatenation order)."""
    N, C, R, H = num_agents, num_colors, num_ranks, hand_size
    copies = int(sum(num_cards_of_rank))
    deck = copies * C
    sizes = {"hands": (N - 1) * H * C * R + N,
             "board": deck - N * H + C * R + max_info_tokens + max_life_tokens,
             "discards": C * copies,
             "last_action": N + 4 + N + C + R + H + H + C * R + 1 + 1,
             "belief": N * H * (C * R + C + R)}
    out, start = {}, 0
    for name, size in sizes.items():
        out[name] = (start, size)
        start += size
    return out


class Hanabi(SmallGameEnv):
    """Hanabi-v0 — the cooperative card game Hanabi for 2 to 5 players (JaxMARL's ``hanabi``,
    after the Hanabi Learning Environment's observation encoding): every player sees the others'
    cards but not their own, and the team builds one firework per colour by playing its cards in
    rank order, helped by hints that cost information tokens.

    ``war_envs.make("Hanabi-v0", num_envs=E, ...)``.  Every rule, default and number of JaxMARL
    0.2.0's ``HanabiEnv`` is kept; ``tests/test_hanabi_reference.py`` replays JaxMARL's own
    episodes step by step (observations, rewards, dones and legal-move masks equal at every
    step).  ``docs/hanabi.md`` has the action table and the observation layout.

    **Agents**: one group ``agent``: ``agent_0 … agent_{N-1}`` (JaxMARL's names).  Players sit in
    seats ``0 … N-1`` and move in seat order, seat 0 first; agent ``seat_order[s]`` sits in seat
    ``s`` (``shuffle_player_order=True``: a uniform seat order drawn at every reset; else agent i
    in seat i).

    **Cards**: ``num_colors`` colours × ``num_ranks`` ranks, ``num_cards_of_rank[r]`` copies of
    each card of rank r (default 3, 2, 2, 2, 1: a 50-card deck).  A card is coded
    ``colour · num_ranks + rank`` (-1: none).  The deck is shuffled uniformly at every reset
    (the world's own stream) and ``hand_size`` cards are dealt to each seat in turn from its top.

    **Turns** (JaxMARL's ``step_env``; all agents act every step, only the seat to move counts):
    the seat to move may discard a card (regains an info token, up to ``max_info_tokens``),
    play a card (if it is the next rank of its colour's firework it is added, and completing a
    colour regains a token; else it is discarded and a life is lost), or tell another seat every
    card it holds of one colour or one rank (costs a token: those cards are revealed, and what is
    known of all its cards narrows).  A played or discarded card is replaced from the deck.  The
    game ends when the lives are gone, every firework is complete, or ``num_agents + 1`` turns
    after the turn that drew the last card (JaxMARL's count, that turn's own included).

    **Actions**: ``Discrete(2 · hand_size + (N − 1)(num_colors + num_ranks) + 1)`` per agent
    (JaxMARL's order, ``action_names``): ``0 … H−1`` discard card h, ``H … 2H−1`` play card h,
    then hint colour c to the k-th next seat (``2H + k · C + c``, k = 0 … N−2), then hint rank r
    (``2H + (N−1) C + k · R + r``), last the no-op.  **Masks** (``has_action_mask``):
    ``env.action_mask()`` and every step's ``info["action_mask"]`` — ``{"agent": bool [E, N, n]}``,
    JaxMARL's ``get_legal_moves``: the seat to move may discard a card it holds unless the tokens
    are full, play a card it holds, hint a colour or rank another seat holds while a token is
    left; every other agent has only the no-op.  The validated step refuses an unavailable action
    (``ValueError`` naming the agent and the action); ``step(trusted=True)`` plays it as JaxMARL's
    arithmetic does (a discard at full tokens regains none, a hint without tokens is free, an
    empty slot plays as colour 0 rank 0), except the mover's no-op (and a value outside the
    space), which only passes the turn.

    **Rewards** (every agent the same, JaxMARL's): the fireworks' growth this step (1 per card
    played right); the step that loses the last life instead takes back every point scored
    (``−score``: "bomb-0"), so the episode's return is the final score.

    **Observation** (float32, 0/1 except the beliefs in [0, 1]; ``observation_layout``; 658 values
    for the defaults): JaxMARL's ``get_obs`` for the agent's seat, in its order and length: the
    other seats' hands (next seat first, one-hot per card) and which seats miss a card; the board
    (cards left in the deck, the fireworks' top cards, info and life tokens); the discards per
    colour and rank; the last move (zeros at the start: who, its type, target, colour or rank,
    cards touched, slot, card, scored, regained a token); per seat from the agent on and per card,
    JaxMARL's "v0 belief" (what is known of the card, weighted by the copies still unseen, normalised)
    and the colour and rank revealed to it.

    **Info**: ``score`` ``[E]`` int32 (the episode's score after the step: JaxMARL's ``state.score``,
    0 after the lives are gone), ``action_mask`` (and with SAME_STEP autoreset
    ``final_action_mask``, the finished episode's last mask, valid where ``info["_final_obs"]``),
    ``t``.  Episode metric: ``score`` (the final score, 0 … num_colors · num_ranks).

    **State** (``get_state``/``set_state``; JaxMARL's ``State`` fields, compacted): ``deck`` int32
    ``[E, D]`` (the whole shuffled deck in order: cards before ``num_cards_dealt`` were dealt;
    JaxMARL zeroes those), ``seat_order [E, N]``, ``discard_pile [E, D]`` (cards, -1 past
    ``num_cards_discarded``), ``num_cards_discarded``, ``fireworks [E, C]`` (heights),
    ``player_hands [E, N, H]`` (cards), ``info_tokens``, ``life_tokens`` (counts),
    ``card_knowledge [E, N, H, C·R]``, ``colors_revealed [E, N, H, C]``, ``ranks_revealed
    [E, N, H, R]`` (0/1), ``num_cards_dealt``, ``cur_player_idx`` (the seat to move),
    ``terminal``, ``out_of_lives``, ``bombed`` (0/1), ``last_round_count``, ``score``, then the last
    move (for the observation; JaxMARL passes it along instead): ``last_move`` (-1: none),
    ``last_actor``, ``last_card``, ``last_scored``, ``last_added_info``; then ``t`` (JaxMARL's
    ``step``), ``episode``, ``rng_key``, ``pending_reset``.  ``inject_draws(deck=..., seat_order=...)``
    makes the next deal use the given deck (JaxMARL's ``reset_from_deck_of_pairs``);
    ``redraw_private_future`` reshuffles the cards not yet dealt (``private_future = ("deck",)``).

    **Arguments** (JaxMARL's names and defaults): ``num_agents=2`` (2 … 5), ``num_colors=5``,
    ``num_ranks=5``, ``hand_size=None`` (5 for 2-3 players, 4 for 4-5), ``max_info_tokens=8``,
    ``max_life_tokens=3``, ``num_cards_of_rank=[3, 2, 2, 2, 1]`` (``num_ranks`` ints ≥ 1),
    ``color_map=None`` (colour labels for ``action_names``; JaxMARL's R Y G W B M), ``agents``,
    ``action_spaces``, ``observation_spaces``, ``num_moves`` (None only), ``shuffle_player_order=False``;
    ``max_steps=None`` (JaxMARL has no time limit; an int truncates episodes there, as
    ``gym.make_vec(max_episode_steps=)`` does; ``max_cycles`` is then that, else the longest game
    the rules allow); plus the batch arguments ``num_envs``, ``device``, ``seed``, ``precision``
    (the rewards' float type; observations are float32), ``autoreset_mode``, ``num_threads``.

    **Deviations**: the deck and seat order come from the world's counter-based stream, not from
    ``jax.random.permutation`` (same distribution, other numbers: the tests compare them).  The
    state keeps the whole deck and token counts instead of JaxMARL's zeroed dealt cards and
    thermometers, leaves out ``remaining_deck_size`` and ``done`` (``num_cards_dealt`` and
    ``terminal`` give them) and keeps the last move, which JaxMARL's ``get_obs`` takes as
    arguments.  A deck (``inject_draws``, ``set_state``) must hold exactly the configured cards;
    ``num_cards_of_rank`` entries must be ≥ 1 and the deck at least ``num_agents · hand_size``
    cards.  The trusted step plays the mover's unavailable no-op as a pass (JaxMARL indexes past
    the hand).

    **Version history**: v0 — initial release, JaxMARL 0.2.0 rules.
    """

    env_id = "Hanabi-v0"
    metadata = {"render_modes": ["rgb_array"], "render_fps": 2}
    episode_length_kwarg = "max_steps"
    has_action_mask = True
    private_future = ("deck",)
    progress_metric = "score"
    episode_metrics = (
        EpisodeMetric("score", "the episode's final score (fireworks built; 0 if every life was lost)",
                      lambda info: info["score"], "last"),
    )
    _state_int_minimum = {"discard_pile": -1, "player_hands": -1, "last_move": -1, "last_card": -1}

    def __init__(self, *, num_agents: int = 2, num_colors: int = 5, num_ranks: int = 5, hand_size: int | None = None,
                 max_info_tokens: int = 8, max_life_tokens: int = 3, num_cards_of_rank=(3, 2, 2, 2, 1),
                 color_map=None, agents=None, action_spaces=None, observation_spaces=None, num_moves=None,
                 shuffle_player_order: bool = False, max_steps: int | None = None, **kwargs) -> None:
        n = v.check_int("num_agents", num_agents, minimum=2)
        if n > 5:
            raise ValueError(f"num_agents: expected an int in [2, 5] (JaxMARL's range), got {n}")
        self.num_colors = v.check_int("num_colors", num_colors, minimum=1)
        self.num_ranks = v.check_int("num_ranks", num_ranks, minimum=1)
        hand_size = v.check_int("hand_size", hand_size, minimum=1, allow_none=True)
        self.hand_size = (5 if n < 4 else 4) if hand_size is None else hand_size
        self.max_info_tokens = v.check_int("max_info_tokens", max_info_tokens, minimum=1)
        self.max_life_tokens = v.check_int("max_life_tokens", max_life_tokens, minimum=1)
        self.num_cards_of_rank = _check_copies(num_cards_of_rank, self.num_ranks)
        self.color_map = _check_color_map(color_map, self.num_colors)
        for name, value in (("agents", agents), ("action_spaces", action_spaces),
                            ("observation_spaces", observation_spaces), ("num_moves", num_moves)):
            if value is not None:
                raise ValueError(f"{name}: expected None (agents are agent_0 … agent_{n - 1}, the spaces and the "
                                 f"number of moves follow from the game's arguments), got {value!r}")
        self.shuffle_player_order = v.check_bool("shuffle_player_order", shuffle_player_order)
        self.deck_size = self.num_colors * sum(self.num_cards_of_rank)
        if self.deck_size < n * self.hand_size:
            raise ValueError(f"hand_size: {n} players x {self.hand_size} cards need a deck of at least "
                             f"{n * self.hand_size} cards; num_colors x sum(num_cards_of_rank) = {self.deck_size}")
        self.n_players = n
        self.num_moves = 2 * self.hand_size + (n - 1) * (self.num_colors + self.num_ranks) + 1
        self.layout = observation_layout(n, self.num_colors, self.num_ranks, self.hand_size, self.max_info_tokens,
                                         self.max_life_tokens, self.num_cards_of_rank)
        self.obs_size = sum(size for _, size in self.layout.values())
        self.action_names = action_names(n, self.num_colors, self.num_ranks, self.hand_size, self.color_map)
        max_steps = v.check_int("max_steps", max_steps, minimum=1, allow_none=True)
        self.max_steps = max_steps
        # without a limit: the longest game (every card but the dealt ones played or discarded, a
        # hint for every token ever held, the last round)
        longest = (2 * (self.deck_size - n * self.hand_size) + self.max_info_tokens + self.num_colors + n + 1)
        self.max_cycles = longest if max_steps is None else max_steps
        super().__init__(**kwargs)
        self._build()

    @property
    def config(self) -> dict:
        """The resolved scenario arguments."""
        return {"num_agents": self.n_players, "num_colors": self.num_colors, "num_ranks": self.num_ranks,
                "hand_size": self.hand_size, "max_info_tokens": self.max_info_tokens,
                "max_life_tokens": self.max_life_tokens, "num_cards_of_rank": list(self.num_cards_of_rank),
                "color_map": list(self.color_map), "shuffle_player_order": self.shuffle_player_order,
                "max_steps": self.max_steps}

    # ------------------------------------------------------------------ building
    def _build(self) -> None:
        F, dev = self.wp_float, self.device
        N, C, R, H, D, M = (self.n_players, self.num_colors, self.num_ranks, self.hand_size, self.deck_size,
                            self.num_moves)
        dim = self.obs_size
        self._add_agents(N, dim, M)
        i32 = wp.int32
        self._check_allocation(self._common_world_bytes(N) + world_bytes(
            ((D,), i32), ((N,), i32), ((D,), i32), ((C,), i32), ((N, H), i32), ((N, H, C * R), i32),
            ((N, H, C), i32), ((N, H, R), i32), *[((), i32)] * 18, ((D + N,), i32), *[((C * R,), i32)] * 2,
            ((N,), i32), *[((N, dim), wp.float32)] * 2, *[((N, M), wp.bool)] * 2), N)
        self._allocate_common(N)
        self._Struct = K.world_struct(F)
        w = self._Struct()
        w.mode, w.max_steps = self._mode_code, 0 if self.max_steps is None else self.max_steps
        w.num_agents, w.num_colors, w.num_ranks, w.hand_size = N, C, R, H
        w.max_info, w.max_life, w.deck_size, w.num_moves = self.max_info_tokens, self.max_life_tokens, D, M
        w.shuffle_seats = int(self.shuffle_player_order)
        w.off_board, w.off_discards = self.layout["board"][0], self.layout["discards"][0]
        w.off_last, w.off_belief = self.layout["last_action"][0], self.layout["belief"][0]
        copies = np.asarray(self.num_cards_of_rank, dtype=np.int32)
        w.rank_copies = wp.array(copies, dtype=wp.int32, device=dev)
        w.rank_offset = wp.array(np.concatenate([[0], np.cumsum(copies)[:-1]]).astype(np.int32), dtype=wp.int32,
                                 device=dev)
        w.copies_total = int(copies.sum())
        self._wire_common(w)
        shapes = {"deck": (D,), "seat_order": (N,), "discard_pile": (D,), "fireworks": (C,), "player_hands": (N, H),
                  "card_knowledge": (N, H, C * R), "colors_revealed": (N, H, C), "ranks_revealed": (N, H, R),
                  "draw": (D + N,), "discarded": (C * R,), "unseen": (C * R,)}
        for name, shape in shapes.items():
            setattr(w, name, self._world_array(shape, i32))
        for name in ("num_cards_discarded", "info_tokens", "life_tokens", "num_cards_dealt", "cur_player_idx",
                     "terminal", "out_of_lives", "bombed", "last_round_count", "score", "last_move", "last_actor",
                     "last_card", "last_scored", "last_added_info", "draw_injected", "points"):
            setattr(w, name, self._world_array((), i32))
        w.mask = self._world_array((N, M), wp.bool)
        w.final_mask = self._world_array((N, M), wp.bool)
        self._finish_build(w, self._Struct, K.kernels(F), "hanabi_step", "hanabi_observe", ())

    def _make_views(self) -> None:
        super()._make_views()
        self._masks = {"agent": wp.to_torch(self._w.mask)}
        self._final_masks = {"agent": wp.to_torch(self._w.final_mask)}
        self._metrics = {"score": wp.to_torch(self._w.points), "action_mask": self._masks}

    def _step_info(self) -> dict:
        info = super()._step_info()
        if self._mode_code == K.AUTORESET_SAME_STEP:
            info["final_action_mask"] = self._final_masks
        return info

    # ------------------------------------------------------------------ masks
    def action_mask(self) -> dict[str, torch.Tensor]:
        """``{"agent": bool [E, N, num_moves]}`` view: JaxMARL's legal moves for the current
        observations (the seat to move's moves; the no-op alone for everyone else)."""
        self._check_open()
        return self._masks

    def _write_actions(self, actions) -> None:
        """The base's checks and copy, then every action must be legal: an illegal one raises
        before any world steps."""
        super()._write_actions(actions)
        chosen = self._action_parts["agent"].long()
        mask = self._masks["agent"]
        ok = mask.gather(-1, chosen.unsqueeze(-1)).squeeze(-1)
        if not bool(ok.all()):
            e, i = (~ok).nonzero()[0].tolist()
            a = int(chosen[e, i])
            legal = mask[e, i].nonzero().flatten().tolist()
            raise ValueError(
                f"actions['agent']: agent_{i} (world {e}) chose action {a} ({self.action_names[a]}), which is "
                f"illegal now; legal: {legal} (env.action_mask() / info['action_mask'] say which)")

    # ------------------------------------------------------------------ draws
    def inject_draws(self, *, deck, seat_order=None) -> None:
        """Make the next deal (a ``reset`` or an autoreset; only that one) use, in every world,
        ``deck`` — int ``[E, deck_size, 2]`` (colour, rank) pairs from the top, JaxMARL's
        ``reset_from_deck_of_pairs`` layout, exactly the configured cards — and ``seat_order``
        (int ``[E, num_agents]``, a permutation of the agents; only with
        ``shuffle_player_order=True``, where it is required).  JaxMARL's reference tests pass the
        decks its own keys drew (``tests/hanabi_reference.py``)."""
        self._check_open()
        E, N, D = self.num_envs, self.n_players, self.deck_size
        pairs = v.as_tensor("deck", deck, self.torch_device)
        v.check_shape("deck", pairs, (E, D, 2))
        if pairs.dtype == torch.bool or pairs.is_floating_point() or pairs.is_complex():
            raise TypeError(f"deck: expected an integer dtype, got {pairs.dtype}")
        pairs = pairs.to(torch.int64)
        if (pairs[..., 0].min() < 0 or pairs[..., 0].max() >= self.num_colors or pairs[..., 1].min() < 0
                or pairs[..., 1].max() >= self.num_ranks):
            raise ValueError(f"deck: expected colours in [0, {self.num_colors - 1}] and ranks in "
                             f"[0, {self.num_ranks - 1}]")
        codes = pairs[..., 0] * self.num_ranks + pairs[..., 1]
        self._check_deck("deck", codes)
        if self.shuffle_player_order:
            if seat_order is None:
                raise ValueError("seat_order: expected an int [E, num_agents] permutation "
                                 "(shuffle_player_order=True draws one at every deal)")
            seats = v.as_tensor("seat_order", seat_order, self.torch_device)
            v.check_shape("seat_order", seats, (E, N))
            v.check_discrete("seat_order", seats, N)
            self._check_permutation("seat_order", seats)
        elif seat_order is not None:
            raise ValueError("seat_order: expected None with shuffle_player_order=False (agent i sits in seat i)")
        else:
            seats = torch.arange(N, device=self.torch_device).expand(E, N)
        self._inject(torch.cat([codes, seats.to(torch.int64)], dim=1).to(torch.int32))

    def _check_deck(self, name: str, codes: torch.Tensor) -> None:
        """Every row of ``codes`` holds exactly the configured cards."""
        cr = self.num_colors * self.num_ranks
        counts = torch.zeros(codes.shape[0], cr, dtype=torch.int64, device=codes.device)
        counts.scatter_add_(1, codes.long().clamp(0, cr - 1), torch.ones_like(codes, dtype=torch.int64))
        want = torch.tensor(self.num_cards_of_rank, dtype=torch.int64, device=codes.device).repeat(self.num_colors)
        if codes.numel() and (codes.min() < 0 or codes.max() >= cr):
            raise ValueError(f"{name}: expected card codes in [0, {cr - 1}] (colour * num_ranks + rank)")
        if not bool((counts == want).all()):
            raise ValueError(f"{name}: expected exactly the configured cards ({self.num_cards_of_rank} copies of "
                             f"each rank per colour); got other counts")

    @staticmethod
    def _check_permutation(name: str, seats: torch.Tensor) -> None:
        n = seats.shape[1]
        if not torch.equal(seats.long().sort(dim=1).values, torch.arange(n, device=seats.device).expand_as(seats)):
            raise ValueError(f"{name}: expected each row to be a permutation of 0 … {n - 1}")

    # ------------------------------------------------------------------ state
    _STATE_KEYS = ("deck", "seat_order", "discard_pile", "num_cards_discarded", "fireworks", "player_hands",
                   "info_tokens", "life_tokens", "card_knowledge", "colors_revealed", "ranks_revealed",
                   "num_cards_dealt", "cur_player_idx", "terminal", "out_of_lives", "bombed", "last_round_count",
                   "score", "last_move", "last_actor", "last_card", "last_scored", "last_added_info")

    def _state_arrays(self) -> dict[str, wp.array]:
        return {**{k: getattr(self._w, k) for k in self._STATE_KEYS}, **self._clock_state()}

    @property
    def _state_maxima(self) -> dict[str, int]:
        N, C, R, D = self.n_players, self.num_colors, self.num_ranks, self.deck_size
        return {"deck": C * R - 1, "seat_order": N - 1, "discard_pile": C * R - 1, "num_cards_discarded": D,
                "fireworks": R, "player_hands": C * R - 1, "info_tokens": self.max_info_tokens,
                "life_tokens": self.max_life_tokens, "card_knowledge": 1, "colors_revealed": 1, "ranks_revealed": 1,
                "num_cards_dealt": D + 1, "cur_player_idx": N - 1, "terminal": 1, "out_of_lives": 1, "bombed": 1,
                "last_round_count": N + 1, "score": C * R, "last_move": self.num_moves - 1, "last_actor": N - 1,
                "last_card": C * R - 1, "last_scored": 1, "last_added_info": 1}

    def _check_state_value(self, key: str, tensor: torch.Tensor) -> None:
        super()._check_state_value(key, tensor)
        if key == "deck":
            self._check_deck("state['deck']", tensor)
        elif key == "seat_order":
            self._check_permutation("state['seat_order']", tensor)

    def _redraw_private_future(self, worlds: torch.Tensor, generator: torch.Generator) -> None:
        """The cards not yet dealt (``deck`` from ``num_cards_dealt`` on) in a new uniform order."""
        deck = wp.to_torch(self._w.deck)
        dealt = wp.to_torch(self._w.num_cards_dealt)
        for e in worlds.tolist():
            start = min(int(dealt[e]), self.deck_size)
            rest = deck[e, start:]
            deck[e, start:] = rest[torch.randperm(rest.numel(), generator=generator, device=deck.device)]

    # ------------------------------------------------------------------ rendering
    def render_frame(self, world: int = 0, *, width: int = 700, height: int = 700,
                     original_cam_range: float | None = None) -> np.ndarray:
        """An RGB ``[H, W, 3]`` uint8 picture of one world's table: one row per seat (the seat to
        move framed) with its cards (suit colour, rank as white pips, revealed colour / rank
        marked by a dot and a bar under the card), the fireworks (a column per colour, its
        height the cards played), info tokens (blue) and lives (red), and the discards.
        ``original_cam_range`` is accepted for the front ends and ignored."""
        world = self._checked_world(world)
        width = v.check_int("width", width, minimum=1)
        height = v.check_int("height", height, minimum=1)
        s = {k: t[0].numpy() for k, t in self.get_state([world]).items()}
        return draw_table(s, self.num_colors, self.num_ranks, self.max_info_tokens, self.max_life_tokens, width,
                          height)


def draw_table(s: dict, C: int, R: int, max_info: int, max_life: int, width: int, height: int) -> np.ndarray:
    """The picture ``Hanabi.render_frame`` draws from one world's state ``s`` (numpy arrays)."""
    W, Hh = 700, 700
    img = np.full((Hh, W, 3), (24, 92, 60), dtype=np.uint8)
    hands = s["player_hands"]
    N, H = hands.shape
    pad = 10
    card_w = min(60, (W - 2 * pad) // max(H, 1) - 8)
    row_h = min(110, (Hh - 260) // N)
    card_h = row_h - 30

    def rect(x0, y0, x1, y1, color):
        img[max(y0, 0):max(min(y1, Hh), 0), max(x0, 0):max(min(x1, W), 0)] = color

    def card(x, y, code, w_, h_):
        if code < 0:
            rect(x, y, x + w_, y + h_, (50, 110, 80))
            return
        c, r = divmod(int(code), R)
        rect(x, y, x + w_, y + h_, (20, 20, 20))
        rect(x + 2, y + 2, x + w_ - 2, y + h_ - 2, SUIT_RGB[c % len(SUIT_RGB)])
        pip = max(2, min(w_ // 6, h_ // (2 * R + 1)))
        for k in range(r + 1):
            py = y + 4 + k * (2 * pip)
            rect(x + w_ // 2 - pip // 2 - 1, py - 1, x + w_ // 2 + pip // 2 + 2, py + pip + 1, (20, 20, 20))
            rect(x + w_ // 2 - pip // 2, py, x + w_ // 2 + pip // 2 + 1, py + pip, (255, 255, 255))

    cur = int(s["cur_player_idx"])
    for q in range(N):
        y = pad + q * row_h
        if q == cur:
            rect(pad - 4, y - 4, pad + H * (card_w + 8) + 2, y + card_h + 16, (250, 250, 120))
            rect(pad - 2, y - 2, pad + H * (card_w + 8), y + card_h + 14, (24, 92, 60))
        for h in range(H):
            x = pad + h * (card_w + 8)
            card(x, y, hands[q, h], card_w, card_h)
            col = np.flatnonzero(s["colors_revealed"][q, h])
            rk = np.flatnonzero(s["ranks_revealed"][q, h])
            if col.size:
                rect(x + 2, y + card_h + 3, x + 12, y + card_h + 12, SUIT_RGB[int(col[0]) % len(SUIT_RGB)])
            if rk.size:
                for k in range(int(rk[0]) + 1):
                    rect(x + 16 + 6 * k, y + card_h + 5, x + 20 + 6 * k, y + card_h + 10, (255, 255, 255))
    # fireworks, tokens
    base = pad + N * row_h + 10
    fw_w = min(50, (W // 2 - 2 * pad) // max(C, 1) - 6)
    step = max(4, 120 // max(R, 1))
    for c in range(C):
        x = pad + c * (fw_w + 6)
        rect(x, base, x + fw_w, base + R * step, (40, 60, 50))
        height_c = int(s["fireworks"][c])
        rect(x, base + (R - height_c) * step, x + fw_w, base + R * step, SUIT_RGB[c % len(SUIT_RGB)])
    tx = W // 2 + pad
    for j in range(max_info):
        color = (60, 120, 240) if j < int(s["info_tokens"]) else (40, 60, 50)
        rect(tx + j * 22, base, tx + j * 22 + 16, base + 16, color)
    for j in range(max_life):
        color = (230, 40, 40) if j < int(s["life_tokens"]) else (40, 60, 50)
        rect(tx + j * 22, base + 26, tx + j * 22 + 16, base + 42, color)
    left = max(len(s["deck"]) - int(s["num_cards_dealt"]), 0)
    rect(tx, base + 52, tx + min(left * 6, W // 2 - 2 * pad), base + 64, (230, 230, 230))
    # discards
    dy = base + R * step + 14
    n_disc = min(int(s["num_cards_discarded"]), len(s["discard_pile"]))
    small_w = max(4, min(20, (W - 2 * pad) // max(len(s["discard_pile"]) // 2, 1) - 3))
    per_row = max(1, (W - 2 * pad) // (small_w + 3))
    for i in range(n_disc):
        x = pad + (i % per_row) * (small_w + 3)
        y = dy + (i // per_row) * 40
        card(x, y, s["discard_pile"][i], small_w, 34)
    if (width, height) != (W, Hh):
        ys = (np.arange(height) * Hh // height).clip(0, Hh - 1)
        xs = (np.arange(width) * W // width).clip(0, W - 1)
        img = img[ys][:, xs]
    return np.ascontiguousarray(img)


def _check_copies(value, num_ranks: int) -> tuple[int, ...]:
    """``num_ranks`` ints >= 1 (JaxMARL's ``num_cards_of_rank``)."""
    if isinstance(value, (torch.Tensor, np.ndarray)):
        value = value.tolist()
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)) or len(value) != num_ranks:
        raise ValueError(f"num_cards_of_rank: expected {num_ranks} ints >= 1 (one per rank, num_ranks={num_ranks}), "
                         f"got {value!r}")
    out = []
    for x in value:
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or int(x) < 1:
            raise ValueError(f"num_cards_of_rank: expected ints >= 1, got {x!r} in {value!r}")
        out.append(int(x))
    return tuple(out)


def _check_color_map(value, num_colors: int) -> tuple[str, ...]:
    """None (JaxMARL's labels, up to 6 colours) or ``num_colors`` strings."""
    if value is None:
        if num_colors > len(DEFAULT_COLOR_MAP):
            raise ValueError(f"color_map: no default labels for num_colors={num_colors} (at most "
                             f"{len(DEFAULT_COLOR_MAP)}); pass {num_colors} labels")
        return DEFAULT_COLOR_MAP[:num_colors]
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)) or len(value) != num_colors \
            or not all(isinstance(x, str) for x in value):
        raise ValueError(f"color_map: expected {num_colors} strings (one label per colour), got {value!r}")
    return tuple(value)
