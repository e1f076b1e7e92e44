"""Warp kernels of ``Hanabi-v0`` (JaxMARL's ``hanabi``), written once for float32 and float64
worlds (only the rewards differ: the observations are float32, as JaxMARL's).  Arrays are indexed
``[world, ...]``.  Every kernel takes the world struct ``w`` (``world_struct``) and runs ``chunk``
consecutive worlds a thread (``BatchedEnv._launch_chunked``: every world in one thread on the
CPU, one world a thread on a GPU).  One launch per step does everything: the move, the end rules,
the reward, the episode protocol, every agent's observation and legal-move mask.

Cards are int32 codes ``colour * num_ranks + rank`` (-1: no card).  Seats are JaxMARL's player
indices (``cur_player_idx``); agent ``seat_order[s]`` sits in seat ``s``.  Token counts stand for
JaxMARL's thermometer arrays (``info_tokens``, ``life_tokens``), fireworks heights per colour for
its ``fireworks`` thermometer.

No float atomics and no races: each world is its owner thread's, so results are bitwise
reproducible on any device and shard split.
"""

from typing import Any

import warp as wp

from war_envs.core.episode import AUTORESET_DISABLED, AUTORESET_NEXT_STEP  # noqa: F401  (this module's API)
from war_envs.core.episode import AUTORESET_SAME_STEP, KERNEL_MODULE_OPTIONS  # noqa: F401
from war_envs.core.episode import begin_pending_reset, end_step, start_episode
from war_envs.core.fields import clock_fields, flag_fields, module_kernels, struct_type

wp.set_module_options(KERNEL_MODULE_OPTIONS)


def struct_fields(F) -> dict:
    """The fields of a Hanabi world struct whose rewards have float type ``F``."""
    return {
        # Params
        "mode": int, "max_steps": int, "num_agents": int, "num_colors": int, "num_ranks": int,
        "hand_size": int, "max_info": int, "max_life": int, "deck_size": int, "num_moves": int,
        "shuffle_seats": int, "off_board": int, "off_discards": int, "off_last": int, "off_belief": int,
        "rank_copies": wp.array(dtype=wp.int32), "rank_offset": wp.array(dtype=wp.int32), "copies_total": int,
        # State
        **clock_fields(),
        "deck": wp.array2d(dtype=wp.int32), "seat_order": wp.array2d(dtype=wp.int32),
        "discard_pile": wp.array2d(dtype=wp.int32), "num_cards_discarded": wp.array(dtype=wp.int32),
        "fireworks": wp.array2d(dtype=wp.int32), "player_hands": wp.array3d(dtype=wp.int32),
        "info_tokens": wp.array(dtype=wp.int32), "life_tokens": wp.array(dtype=wp.int32),
        "card_knowledge": wp.array4d(dtype=wp.int32), "colors_revealed": wp.array4d(dtype=wp.int32),
        "ranks_revealed": wp.array4d(dtype=wp.int32), "num_cards_dealt": wp.array(dtype=wp.int32),
        "cur_player_idx": wp.array(dtype=wp.int32), "terminal": wp.array(dtype=wp.int32),
        "out_of_lives": wp.array(dtype=wp.int32), "bombed": wp.array(dtype=wp.int32),
        "last_round_count": wp.array(dtype=wp.int32), "score": wp.array(dtype=wp.int32),
        "last_move": wp.array(dtype=wp.int32), "last_actor": wp.array(dtype=wp.int32),
        "last_card": wp.array(dtype=wp.int32), "last_scored": wp.array(dtype=wp.int32),
        "last_added_info": wp.array(dtype=wp.int32),
        # Injected draws (tests): the next deal's deck and seat order, used once where draw_injected is set
        "draw": wp.array2d(dtype=wp.int32), "draw_injected": wp.array(dtype=wp.int32),
        # Scratch: cards of each (colour, rank) discarded, and unseen (neither discarded nor played)
        "discarded": wp.array2d(dtype=wp.int32), "unseen": wp.array2d(dtype=wp.int32),
        # Actions
        "action": wp.array2d(dtype=wp.int32),
        # Outputs
        **flag_fields(F),
        "points": wp.array(dtype=wp.int32),
        "obs": wp.array3d(dtype=wp.float32), "final_obs": wp.array3d(dtype=wp.float32),
        "mask": wp.array3d(dtype=wp.bool), "final_mask": wp.array3d(dtype=wp.bool),
    }


def world_struct(F):
    """The ``wp.struct`` type of Hanabi worlds with rewards in ``F`` (made once per process)."""
    return struct_type(f"Hanabi_{F.__name__}", __name__, lambda: struct_fields(F))


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


@wp.func(inline=True)
def one(flag: bool):
    return wp.where(flag, wp.float32(1.0), wp.float32(0.0))


@wp.func(inline=True)
def uniform_below(key: int, k: int, n: int):
    """Draw k of stream ``key``: exactly uniform on {0, ..., n - 1} (32-bit draws below 2^32 mod
    n are redrawn)."""
    state = wp.rand_init(key, k)
    nu = wp.uint32(n)
    low = (wp.uint32(0) - nu) % nu
    u = wp.randu(state)
    while u < low:
        u = wp.randu(state)
    return int(u % nu)


@wp.func
def shuffle(w: Any, e: int, key: int):
    """A uniformly shuffled deck (Fisher-Yates from the cards in order, draws 1 .. deck_size - 1
    of stream ``key``) and, with ``shuffle_seats``, a uniform seat order (draws deck_size + 1 ..),
    or the injected ones (used once)."""
    D = w.deck_size
    N = w.num_agents
    if w.draw_injected[e] != 0:
        w.draw_injected[e] = 0
        for i in range(D):
            w.deck[e, i] = w.draw[e, i]
        for s in range(N):
            w.seat_order[e, s] = w.draw[e, D + s]
        return
    n = int(0)
    for c in range(w.num_colors):
        for r in range(w.num_ranks):
            for k in range(w.rank_copies[r]):
                w.deck[e, n] = c * w.num_ranks + r
                n += 1
    for i in range(D - 1, 0, -1):
        j = uniform_below(key, i, i + 1)
        card = w.deck[e, i]
        w.deck[e, i] = w.deck[e, j]
        w.deck[e, j] = card
    for s in range(N):
        w.seat_order[e, s] = s
    if w.shuffle_seats != 0:
        for s in range(N - 1, 0, -1):
            j = uniform_below(key, D + s, s + 1)
            a = w.seat_order[e, s]
            w.seat_order[e, s] = w.seat_order[e, j]
            w.seat_order[e, j] = a


@wp.func
def deal(w: Any, e: int, key: int):
    """A new game (JaxMARL's ``reset_game``): the deck and seat order (``shuffle``), hands dealt
    from the top of the deck, seat after seat; full tokens, empty fireworks and discards, nothing
    known of any card; seat 0 to move."""
    shuffle(w, e, key)
    N = w.num_agents
    D = w.deck_size
    cr = w.num_colors * w.num_ranks
    for s in range(N):
        for h in range(w.hand_size):
            w.player_hands[e, s, h] = w.deck[e, s * w.hand_size + h]
            for k in range(cr):
                w.card_knowledge[e, s, h, k] = 1
            for c in range(w.num_colors):
                w.colors_revealed[e, s, h, c] = 0
            for r in range(w.num_ranks):
                w.ranks_revealed[e, s, h, r] = 0
    for i in range(D):
        w.discard_pile[e, i] = -1
    for c in range(w.num_colors):
        w.fireworks[e, c] = 0
    w.num_cards_discarded[e] = 0
    w.num_cards_dealt[e] = N * w.hand_size
    w.info_tokens[e] = w.max_info
    w.life_tokens[e] = w.max_life
    w.cur_player_idx[e] = 0
    w.terminal[e] = 0
    w.out_of_lives[e] = 0
    w.bombed[e] = 0
    w.last_round_count[e] = 0
    w.score[e] = 0
    w.last_move[e] = -1
    w.last_actor[e] = 0
    w.last_card[e] = -1
    w.last_scored[e] = 0
    w.last_added_info[e] = 0


@wp.func
def remove_card(w: Any, e: int, s: int, h: int, new_card: int):
    """Card ``h`` of seat ``s`` leaves the hand: the cards after it move one place down with what
    is known of them, and ``new_card`` (-1: none) comes in last, nothing known of it (JaxMARL's
    ``jnp.delete`` + ``jnp.append``)."""
    last = w.hand_size - 1
    for j in range(h, last):
        w.player_hands[e, s, j] = w.player_hands[e, s, j + 1]
        for k in range(w.num_colors * w.num_ranks):
            w.card_knowledge[e, s, j, k] = w.card_knowledge[e, s, j + 1, k]
        for c in range(w.num_colors):
            w.colors_revealed[e, s, j, c] = w.colors_revealed[e, s, j + 1, c]
        for r in range(w.num_ranks):
            w.ranks_revealed[e, s, j, r] = w.ranks_revealed[e, s, j + 1, r]
    w.player_hands[e, s, last] = new_card
    known = wp.where(new_card >= 0, 1, 0)
    for k in range(w.num_colors * w.num_ranks):
        w.card_knowledge[e, s, last, k] = known
    for c in range(w.num_colors):
        w.colors_revealed[e, s, last, c] = 0
    for r in range(w.num_ranks):
        w.ranks_revealed[e, s, last, r] = 0


@wp.func
def discard_or_play(w: Any, e: int, s: int, h: int, is_discard: bool):
    """JaxMARL's ``_discard_play_fn`` for seat ``s``'s card ``h``: a discard regains an info
    token; a play is valid if the card is the next of its colour's firework (completing a colour
    regains a token), else the card is discarded and a life lost; a new card is drawn unless the
    deck is exhausted (the last round).  An empty slot plays as colour 0, rank 0 (JaxMARL's
    ``nonzero(size=1)`` fill)."""
    card = w.player_hands[e, s, h]
    color = int(0)
    rank = int(0)
    if card >= 0:
        color = card / w.num_ranks
        rank = card % w.num_ranks
    if is_discard:
        w.info_tokens[e] = wp.min(w.info_tokens[e] + 1, w.max_info)
    valid = rank == w.fireworks[e, color]
    if valid and not is_discard:
        if rank == w.num_ranks - 1:
            w.info_tokens[e] = wp.min(w.info_tokens[e] + 1, w.max_info)
        w.fireworks[e, color] = w.fireworks[e, color] + 1
    if is_discard or not valid:
        n = w.num_cards_discarded[e]
        if n < w.deck_size:
            w.discard_pile[e, n] = card
        w.num_cards_discarded[e] = n + 1
    if not (valid or is_discard):
        w.life_tokens[e] = wp.max(w.life_tokens[e] - 1, 0)
    dealt = w.num_cards_dealt[e]
    new_card = int(-1)
    if dealt < w.deck_size:
        new_card = w.deck[e, dealt]
    if w.last_round_count[e] == 0:
        w.num_cards_dealt[e] = dealt + 1
    remove_card(w, e, s, h, new_card)
    w.last_card[e] = card


@wp.func
def hint(w: Any, e: int, s: int, a: int):
    """JaxMARL's ``_hint_fn``: seat ``s`` tells a colour or a rank to another seat: the target's
    cards of that colour (rank) lose every other colour (rank) from what is known of them and
    get it revealed; its other cards lose that colour (rank).  It costs an info token."""
    N = w.num_agents
    C = w.num_colors
    R = w.num_ranks
    k = a - 2 * w.hand_size
    is_color = k < (N - 1) * C
    value = int(0)
    target = int(0)
    if is_color:
        value = k % C
        target = (k / C + s + 1) % N
    else:
        k = k - (N - 1) * C
        value = k % R
        target = (k / R + s + 1) % N
    for h in range(w.hand_size):
        card = w.player_hands[e, target, h]
        match = False
        if card >= 0:
            if is_color:
                match = card / R == value
            else:
                match = card % R == value
        for c in range(C):
            for r in range(R):
                told = wp.where(is_color, c, r)
                if match != (told == value):
                    w.card_knowledge[e, target, h, c * R + r] = 0
        if match:
            if is_color:
                w.colors_revealed[e, target, h, value] = 1
            else:
                w.ranks_revealed[e, target, h, value] = 1
    w.info_tokens[e] = wp.max(w.info_tokens[e] - 1, 0)
    w.last_card[e] = -1


@wp.func
def fireworks_total(w: Any, e: int):
    total = int(0)
    for c in range(w.num_colors):
        total += w.fireworks[e, c]
    return total


@wp.func
def play_turn(w: Any, e: int):
    """JaxMARL's ``step_game`` for the seat to move (the action of agent ``seat_order[seat]``):
    the move, then the end rules (no lives left, every firework complete, or the last round of
    ``num_agents + 1`` turns counted from the turn that drew the last card), the reward (the
    fireworks' growth; losing the last life takes back every point) and the next seat."""
    s = w.cur_player_idx[e]
    a = w.action[e, w.seat_order[e, s]]
    H = w.hand_size
    before = fireworks_total(w, e)
    info_before = w.info_tokens[e]
    if a >= 0 and a < H:
        discard_or_play(w, e, s, a, True)
    elif a >= H and a < 2 * H:
        discard_or_play(w, e, s, a - H, False)
    elif a >= 2 * H and a < w.num_moves - 1:
        hint(w, e, s, a)
    else:
        w.last_card[e] = -1  # the mover's no-op (unavailable), or (trusted) no action at all: the turn passes
    after = fireworks_total(w, e)
    out = w.life_tokens[e] == 0
    won = after == w.num_colors * w.num_ranks
    if w.num_cards_dealt[e] >= w.deck_size:
        w.last_round_count[e] = w.last_round_count[e] + 1
    terminal = out or won or w.last_round_count[e] == w.num_agents + 1
    reward = int(0)
    if out:
        if w.bombed[e] == 0:
            reward = -after
    else:
        reward = after - before
    w.bombed[e] = wp.where(out or w.bombed[e] != 0, 1, 0)
    w.out_of_lives[e] = wp.where(out, 1, 0)
    w.terminal[e] = wp.where(terminal, 1, 0)
    w.cur_player_idx[e] = (s + 1) % w.num_agents
    w.score[e] = w.score[e] + reward
    w.last_move[e] = a
    w.last_actor[e] = s
    w.last_scored[e] = wp.where(after != before, 1, 0)
    w.last_added_info[e] = wp.where(a >= H and a < 2 * H and w.info_tokens[e] > info_before, 1, 0)
    return reward


# ---------------------------------------------------------------------------------------------
# Observations (JaxMARL's ``get_obs``) and legal moves (its ``get_legal_moves``)
# ---------------------------------------------------------------------------------------------


@wp.func
def count_discards(w: Any, e: int):
    """Scratch ``discarded[e, colour * R + rank]``: cards of each kind in the discard pile, then
    ``unseen[e, colour * R + rank]``: the copies neither discarded nor on a firework (JaxMARL's
    belief count)."""
    R = w.num_ranks
    for k in range(w.num_colors * R):
        w.discarded[e, k] = 0
    for i in range(wp.min(w.num_cards_discarded[e], w.deck_size)):
        card = w.discard_pile[e, i]
        if card >= 0:
            w.discarded[e, card] = w.discarded[e, card] + 1
    for c in range(w.num_colors):
        height = w.fireworks[e, c]
        for r in range(R):
            w.unseen[e, c * R + r] = w.rank_copies[r] - w.discarded[e, c * R + r] - wp.where(height > r, 1, 0)


@wp.func(inline=True)
def relative(q: int, o: int, n: int):
    """Seat ``q`` counted from seat ``o`` (``(q - o) mod n``, without a division)."""
    d = q - o
    if d < 0:
        d += n
    return d


@wp.func
def observe_hands(w: Any, e: int, out: wp.array3d(dtype=wp.float32)):
    """Every seat's hands block: the other seats' hands (from the next seat on), one-hot
    ``colour * R + rank`` per card (zeros for an empty slot), then per seat from the observer
    whether it misses a card."""
    N = w.num_agents
    cr = w.num_colors * w.num_ranks
    missing_at = (N - 1) * w.hand_size * cr
    for q in range(N):
        missing = int(0)
        for h in range(w.hand_size):
            card = w.player_hands[e, q, h]
            if card < 0:
                missing = int(1)
            for o in range(N):
                if o != q:
                    row = w.seat_order[e, o]
                    base = ((relative(q, o, N) - 1) * w.hand_size + h) * cr
                    for k in range(cr):
                        out[e, row, base + k] = one(k == card)
        for o in range(N):
            out[e, w.seat_order[e, o], missing_at + relative(q, o, N)] = one(missing != 0)


@wp.func
def observe_board(w: Any, e: int, out: wp.array3d(dtype=wp.float32), o: int):
    """Seat ``o``'s board and discard blocks (the same for every seat): the cards left in the
    deck (thermometer), each firework's top rank (one-hot), info and life tokens (thermometers),
    then per colour and rank the discarded copies (thermometer over the rank's copies)."""
    row = w.seat_order[e, o]
    left = w.deck_size - w.num_cards_dealt[e]
    i = w.off_board
    for j in range(w.deck_size - w.num_agents * w.hand_size):
        out[e, row, i + j] = one(j < left)
    i += w.deck_size - w.num_agents * w.hand_size
    for c in range(w.num_colors):
        for r in range(w.num_ranks):
            out[e, row, i + c * w.num_ranks + r] = one(r == w.fireworks[e, c] - 1)
    i += w.num_colors * w.num_ranks
    for j in range(w.max_info):
        out[e, row, i + j] = one(j < w.info_tokens[e])
    i += w.max_info
    for j in range(w.max_life):
        out[e, row, i + j] = one(j < w.life_tokens[e])
    i = w.off_discards
    for c in range(w.num_colors):
        for r in range(w.num_ranks):
            n = w.discarded[e, c * w.num_ranks + r]
            for j in range(w.rank_copies[r]):
                out[e, row, i + c * w.copies_total + w.rank_offset[r] + j] = one(j < n)


@wp.func
def observe_last_action(w: Any, e: int, out: wp.array3d(dtype=wp.float32), o: int):
    """Seat ``o``'s last-action block (zeros before the first move): who acted (relative),
    the move type [play, discard, colour hint, rank hint], the hint's target (relative), colour,
    rank and the target's cards it touched, the slot played or discarded, that card, whether it
    scored and whether playing it regained an info token."""
    N = w.num_agents
    C = w.num_colors
    R = w.num_ranks
    H = w.hand_size
    row = w.seat_order[e, o]
    i0 = w.off_last
    for j in range(w.off_belief - i0):
        out[e, row, i0 + j] = wp.float32(0.0)
    if w.t[e] == 0:
        return
    a = w.last_move[e]
    actor = w.last_actor[e]
    out[e, row, i0 + (actor - o + N) % N] = wp.float32(1.0)
    i = i0 + N
    if a < 0 or a >= w.num_moves - 1:
        return  # the no-op (or, trusted, an out-of-range action): who acted only
    if a < 2 * H:
        out[e, row, i + wp.where(a < H, 1, 0)] = wp.float32(1.0)
        out[e, row, i + 4 + N + C + R + H + a % H] = wp.float32(1.0)
        if w.last_card[e] >= 0:
            out[e, row, i + 4 + N + C + R + 2 * H + w.last_card[e]] = wp.float32(1.0)
        out[e, row, i + 4 + N + C + R + 2 * H + C * R] = one(w.last_scored[e] != 0)
        out[e, row, i + 4 + N + C + R + 2 * H + C * R + 1] = one(w.last_added_info[e] != 0)
        return
    k = a - 2 * H
    is_color = k < (N - 1) * C
    value = int(0)
    target = int(0)
    if is_color:
        value = k % C
        target = (k / C + actor + 1) % N
    else:
        k = k - (N - 1) * C
        value = k % R
        target = (k / R + actor + 1) % N
    out[e, row, i + wp.where(is_color, 2, 3)] = wp.float32(1.0)
    out[e, row, i + 4 + (target - o + N) % N] = wp.float32(1.0)
    out[e, row, i + 4 + N + wp.where(is_color, value, C + value)] = wp.float32(1.0)
    for h in range(H):
        card = w.player_hands[e, target, h]
        if card >= 0:
            touched = wp.where(is_color, card / R, card % R) == value
            out[e, row, i + 4 + N + C + R + h] = one(touched)
    out[e, row, i + 4 + N + C + R + 2 * H + C * R] = one(w.last_scored[e] != 0)


@wp.func
def observe_beliefs(w: Any, e: int, out: wp.array3d(dtype=wp.float32)):
    """Every seat's belief block (JaxMARL's ``get_v0_belief_feats``): per seat from the observer
    on, per card, what is known of it weighted by the copies unseen and normalised (zeros for
    an empty slot; JaxMARL's XLA divides by the sum as a product with its reciprocal), then the
    colour and rank revealed to it.  Each card's values are worked out once and written into
    every observer's row."""
    N = w.num_agents
    C = w.num_colors
    R = w.num_ranks
    cr = C * R
    per_card = cr + C + R
    for q in range(N):
        for h in range(w.hand_size):
            total = int(0)
            for k in range(cr):
                total += w.card_knowledge[e, q, h, k] * w.unseen[e, k]
            inv = wp.float32(0.0)
            if total != 0:
                inv = wp.float32(1.0) / wp.float32(total)
            for o in range(N):
                row = w.seat_order[e, o]
                base = w.off_belief + (relative(q, o, N) * w.hand_size + h) * per_card
                for k in range(cr):
                    out[e, row, base + k] = wp.float32(w.card_knowledge[e, q, h, k] * w.unseen[e, k]) * inv
                for c in range(C):
                    out[e, row, base + cr + c] = wp.float32(w.colors_revealed[e, q, h, c])
                for r in range(R):
                    out[e, row, base + cr + C + r] = wp.float32(w.ranks_revealed[e, q, h, r])


@wp.func
def observe_world(w: Any, e: int, out: wp.array3d(dtype=wp.float32)):
    """Every agent's observation (JaxMARL's ``get_obs``; agent ``seat_order[s]`` sees seat s's)."""
    count_discards(w, e)
    observe_hands(w, e, out)
    for o in range(w.num_agents):
        observe_board(w, e, out, o)
        observe_last_action(w, e, out, o)
    observe_beliefs(w, e, out)


@wp.func
def write_mask(w: Any, e: int, mask: wp.array3d(dtype=wp.bool)):
    """JaxMARL's ``get_legal_moves``: the seat to move may discard a card it holds (unless the
    info tokens are full), play a card it holds, hint a colour (rank) that another seat holds
    (if an info token is left); every other seat has only the no-op."""
    N = w.num_agents
    C = w.num_colors
    R = w.num_ranks
    H = w.hand_size
    s = w.cur_player_idx[e]
    for o in range(N):
        row = w.seat_order[e, o]
        for a in range(w.num_moves - 1):
            mask[e, row, a] = False
        mask[e, row, w.num_moves - 1] = o != s
    row = w.seat_order[e, s]
    can_discard = w.info_tokens[e] < w.max_info
    can_hint = w.info_tokens[e] > 0
    for h in range(H):
        held = w.player_hands[e, s, h] >= 0
        mask[e, row, h] = held and can_discard
        mask[e, row, H + h] = held
    if can_hint:
        for k in range(N - 1):
            q = (s + 1 + k) % N
            for h in range(H):
                card = w.player_hands[e, q, h]
                if card >= 0:
                    mask[e, row, 2 * H + k * C + card / R] = True
                    mask[e, row, 2 * H + (N - 1) * C + k * R + card % R] = True


@wp.func
def clear_outputs(w: Any, e: int):
    for i in range(w.num_agents):
        w.reward[e, i] = type(w.reward[e, i])(0.0)
    w.points[e] = 0


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------


def step_kernel(World, F):
    def hanabi_step(w: World, chunk: int):
        """One step of world e (JaxMARL's ``step_env``), its episode protocol, observations and
        legal-move masks."""
        first = wp.tid() * chunk
        for e in range(first, wp.min(first + chunk, w.t.shape[0])):
            if w.pending_reset[e] != 0:
                # NEXT_STEP: the step after a done only resets the world (reward 0, flags false)
                w.pending_reset[e] = 0
                clear_outputs(w, e)
                begin_pending_reset(e, w.terminated, w.truncated, w.reset_now)
            else:
                reward = F(play_turn(w, e))
                for i in range(w.num_agents):
                    w.reward[e, i] = reward
                steps = w.t[e] + 1
                w.t[e] = steps
                w.points[e] = w.score[e]
                term = w.terminal[e] != 0
                trunc = w.max_steps > 0 and steps >= w.max_steps and not term
                end_step(e, term, trunc, w.mode, w.terminated, w.truncated, w.reset_now, w.pending_reset)
                if w.reset_now[e] != 0:
                    observe_world(w, e, w.final_obs)
                    write_mask(w, e, w.final_mask)
            if w.reset_now[e] != 0:
                deal(w, e, int(wp.rand_init(w.world_seed[e], w.episode[e])))
                start_episode(e, w.episode, w.t)
            observe_world(w, e, w.obs)
            write_mask(w, e, w.mask)

    return hanabi_step


def observe_kernel(World, F):
    def hanabi_observe(
        w: World,
        # Params
        write_final: int,
        chunk: int,
    ):
        """reset() / set_state() / clone_worlds(): (``write_final``: the final observation and
        mask of the worlds flagged in ``reset_now``), reset those worlds, observe every world."""
        first = wp.tid() * chunk
        for e in range(first, wp.min(first + chunk, w.t.shape[0])):
            if w.reset_now[e] != 0:
                if write_final != 0:
                    observe_world(w, e, w.final_obs)
                    write_mask(w, e, w.final_mask)
                deal(w, e, int(wp.rand_init(w.world_seed[e], w.episode[e])))
                start_episode(e, w.episode, w.t)
            observe_world(w, e, w.obs)
            write_mask(w, e, w.mask)

    return hanabi_observe


_FACTORIES = (step_kernel, observe_kernel)


def kernels(F) -> dict:
    """Hanabi's kernels for reward type ``F`` by name, in one Warp module (made once per process)."""
    World = world_struct(F)
    return module_kernels(f"war_envs_hanabi_{F.__name__}", lambda: [factory(World, F) for factory in _FACTORIES])
