"""Notebook 09: induction heads, trained from scratch in seconds.

An induction head completes a pattern it has seen earlier in the context: after [A][B] ... [A] it
predicts [B]. One layer cannot do this (a key only knows its own token, so "the token *after* an
earlier A" is not something a query can ask for); two layers can: a previous-token head in layer 0
writes "my predecessor was A" into each position's residual stream, and a layer-1 head whose *keys*
read that (K-composition) attends from the current A to the position after the earlier A, and copies
its token. ("A Mathematical Framework for Transformer Circuits", Elhage et al. 2021; "In-context
Learning and Induction Heads", Olsson et al. 2022; the post's earlier draft builds up to them.)

The training data are random token sequences in which copying pays, with the earlier copy anywhere in the context
(``copy_batch``): half of them repeat a segment of random length P (2 to 16) after a random prefix, half are random
with three pairs [A][B] planted again later, each at random places. The loss counts only the tokens that copying
predicts (the rest are random and teach nothing). An earlier layout, a segment repeated from position 0 with period
4 to 16 (``periodic_batch``), trains a model that copies only when the earlier copy sits in the first 16 positions,
because there the first copy always does; ``copy_by_position`` measures it. (With one fixed period, say n_ctx / 2,
a model can cheat by position alone and forms no induction head.)

Tokens are the 64 characters of ``ALPHABET`` so that a learner can type a sequence: "abcabc" is the
token ids of a, b, c, a, b, c.
"""

from __future__ import annotations

import string
import time
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from helpers.interp.scores import head_scores
from helpers.interp.sequences import repeated_tokens
from helpers.model.config import Config
from helpers.optim import AdamW
from helpers.progress import tqdm  # ends green, not red, when the heads form before the step budget
from helpers.runtime import release_memory
from helpers.softmax import softmax
from helpers.model.transformer import Transformer

ALPHABET = string.ascii_lowercase + string.ascii_uppercase + string.digits + " ."  # 64 tokens, one character each
N_VOCAB = len(ALPHABET)


def config(n_layers: int = 2) -> Config:
    """The notebook's model: attention only, n_vocab 64, d_model 64, 2 heads (d_head 32), n_ctx 32.

    W_pos starts at a spread of 0.5 (the other weights 0.02): the previous-token head has to learn its step back
    at every one of the 32 positions, and from columns that start near zero a run can leave a position out (its head
    looks elsewhere there, and copying fails at that position)."""
    return Config(n_vocab=N_VOCAB, d_model=64, n_ctx=32, n_layers=n_layers, n_heads=2, pos_init_std=0.5)


def encode(text: str, n_ctx: int | None = None) -> torch.Tensor:
    """Characters -> token ids (n,). Says which characters are not tokens, and when the text is too long."""
    if not text:
        raise ValueError("the sequence is empty: type some characters (letters, digits, space or '.')")
    unknown = list(dict.fromkeys(c for c in text if c not in ALPHABET))  # in the order typed
    if unknown:
        raise ValueError(f"{''.join(unknown)!r} {'is not a token' if len(unknown) == 1 else 'are not tokens'}: "
                         f"this model's 64 tokens are a-z, A-Z, 0-9, space and '.'")
    if n_ctx is not None and len(text) > n_ctx:
        raise ValueError(f"the sequence has n = {len(text)} tokens but the model's n_ctx is {n_ctx}: "
                         f"keep it to {n_ctx} characters")
    return torch.tensor([ALPHABET.index(c) for c in text])


def decode(ids) -> str:
    return "".join(ALPHABET[int(i)] for i in torch.as_tensor(ids).reshape(-1))


def periodic_batch(batch: int, n: int, g: torch.Generator, n_vocab: int = N_VOCAB,
                   periods: tuple[int, int] = (4, 16)) -> torch.Tensor:
    """(batch, n) token ids: each row repeats a random segment of random length P in ``periods`` (inclusive) from
    position 0 on, so the first copy of every token lies in positions 0 ... P - 1 (the layout of an earlier version)."""
    lo, hi = periods
    P = torch.randint(lo, hi + 1, (batch,), generator=g)  # (batch,)
    segment = torch.randint(n_vocab, (batch, hi), generator=g)  # (batch, hi): the first P entries are used
    position = torch.arange(n)[None] % P[:, None]  # (batch, n): t_i = segment[i mod P]
    return torch.gather(segment, 1, position)


def copy_batch(batch: int, n: int, g: torch.Generator, n_vocab: int = N_VOCAB, periods: tuple[int, int] = (2, 16),
               pairs: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    """(batch, n) token ids and (batch, n) bool ``copied``: the training data, with the earlier copy anywhere.
    ``copied[b, i]`` is True where token i was made a copy, so that copying from the earlier occurrence of token
    i - 1 predicts it (in the repeats from the second token of the segment's second appearance on — the
    first follows a character that never occurred before; in the other rows the planted B's). Elsewhere the tokens are random.

    The first half of the rows: a random prefix of random length r, then a segment of random length P in ``periods``
    repeated to the end (r from 0 to n - 2P, so the segment appears at least twice). The other half: random tokens,
    then ``pairs`` times a pair [A][B] at random positions j - 1, j copied to random later positions t - 1, t."""
    lo, hi = periods
    half = batch // 2
    P = torch.randint(lo, hi + 1, (half,), generator=g)  # (half,)
    r = (torch.rand(half, generator=g) * (n - 2 * P + 1)).long()  # (half,): 0 ... n - 2P
    prefix = torch.randint(n_vocab, (half, n), generator=g)
    segment = torch.randint(n_vocab, (half, hi), generator=g)
    i = torch.arange(n)[None]  # (1, n)
    repeats = torch.where(i < r[:, None], prefix, torch.gather(segment, 1, (i - r[:, None]).clamp(min=0) % P[:, None]))
    copied = [i > (r + P)[:, None]]  # (half, n): from the second token of the segment's second appearance on
    planted = torch.randint(n_vocab, (batch - half, n), generator=g)
    rows = torch.arange(batch - half)
    placed = []
    for _ in range(pairs):
        j = torch.randint(1, n - 2, (batch - half,), generator=g)  # B of the earlier pair at j, A at j - 1
        t = j + 2 + (torch.rand(batch - half, generator=g) * (n - j - 2)).long()  # the later B at t: j + 2 ... n - 1
        planted[rows, t - 1] = planted[rows, j - 1]
        planted[rows, t] = planted[rows, j]
        placed.append((j, t))
    marks = torch.zeros(batch - half, n, dtype=torch.bool)
    for j, t in placed:  # a pair that a later one wrote over no longer repeats: not marked
        marks[rows, t] |= (planted[rows, t - 1] == planted[rows, j - 1]) & (planted[rows, t] == planted[rows, j])
    copied.append(marks)
    return torch.cat([repeats, planted]), torch.cat(copied)


@dataclass
class InductionRun:
    """What happened while training: loss every step, head scores and weights every ``eval_every`` steps."""

    step: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)
    eval_step: list[int] = field(default_factory=list)
    induction: list[float] = field(default_factory=list)  # best induction score among the last layer's heads
    previous: list[float] = field(default_factory=list)  # best previous-token score among layer 0's heads
    snapshots: dict[int, dict[str, torch.Tensor]] = field(default_factory=dict)  # step -> state_dict copy
    formed_at: int | None = None  # first evaluated step at which the induction score passed the threshold
    everywhere_at: int | None = None  # ... and from then on, the first at which copying held at every position
    seconds: float = 0.0


def probe_tokens(n_ctx: int = 32, batch: int = 16, seed: int = 1234) -> torch.Tensor:
    """(batch, n_ctx) [random half][the same half again], the fixed probe the scores are measured on."""
    return repeated_tokens(N_VOCAB, n_ctx // 2, batch=batch, seed=seed)


def copy_loss(model: Transformer, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross-entropy (nats) over the tokens where ``mask`` (batch, n + 1) is True, of a batch of
    windows (batch, n + 1): the loss of the tokens copying can predict."""
    logits = model(tokens[..., :-1])  # (batch, n_vocab, n): column i predicts token i + 1
    per_token = F.cross_entropy(logits, tokens[..., 1:], reduction="none")  # (batch, n)
    return per_token[mask[..., 1:]].mean()


def train_induction(model: Transformer, max_steps: int = 1500, *, threshold: float | None = 0.85,
                    every_position: float | None = None, extra_steps: int = 100, lr: float = 1e-2,
                    batch_size: int = 64, seed: int = 0, eval_every: int = 25, progress: bool = True,
                    data: str = "anywhere") -> InductionRun:
    """AdamW until the induction score passes ``threshold`` (checked every ``eval_every`` steps) and, with
    ``every_position``, until the model gives B more than that probability after [A][B] ... [A] with the earlier pair
    at every position k >= 1 (``copy_by_position``, 16 sequences each); then ``extra_steps`` more to settle; at most
    ``max_steps`` in all (threshold None: train all ``max_steps``). Keeps a copy of the weights at every evaluation.

    data "anywhere": ``copy_batch``, the loss on the tokens copying predicts (``copy_loss``); "periodic": the
    earlier layout, ``periodic_batch``, the loss on every token."""
    if data not in ("anywhere", "periodic"):
        raise ValueError(f'data is "anywhere" (copy_batch) or "periodic" (periodic_batch), got {data!r}')
    if max_steps < 1:
        raise ValueError(f"max_steps must be at least 1, got {max_steps}")
    n = model.cfg.n_ctx
    g = torch.Generator().manual_seed(seed)
    probe = probe_tokens(n)
    opt = AdamW(model.parameters(), lr=lr)
    run = InductionRun()
    start = time.perf_counter()
    bar = tqdm(range(1, max_steps + 1), desc="training", disable=not progress, mininterval=0.3)
    model.train()
    stop_at, settling = max_steps, False
    for step in bar:
        if data == "anywhere":
            loss = copy_loss(model, *copy_batch(batch_size, n + 1, g))
        else:
            loss = model.loss(periodic_batch(batch_size, n + 1, g))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        run.step.append(step)
        run.loss.append(loss.item())
        if step % eval_every == 0 or step == max_steps or step == stop_at:
            model.eval()
            scores = head_scores(model, probe, which=("previous", "induction"))
            run.eval_step.append(step)
            run.induction.append(float(scores["induction"][-1].max()))
            run.previous.append(float(scores["previous"][0].max()))
            run.snapshots[step] = {k: v.detach().clone() for k, v in model.state_dict().items()}
            bar.set_postfix(loss=f"{run.loss[-1]:.2f}", induction=f"{run.induction[-1]:.2f}", refresh=False)
            if threshold is not None and run.formed_at is None and run.induction[-1] > threshold:
                run.formed_at = step
            if run.formed_at is not None and not settling:  # formed: settle now, or once it copies everywhere
                if every_position is not None and float(copy_by_position(model, batch=16)[1:].min()) > every_position:
                    run.everywhere_at = step
                settling = every_position is None or run.everywhere_at is not None
                if settling:
                    stop_at = min(max_steps, step + extra_steps)
            model.train()
        if step >= stop_at:
            break
    bar.close()
    model.eval()
    run.seconds = time.perf_counter() - start
    release_memory()  # (the training steps' freed memory back to the system)
    return run


def pair_at(k: int, n: int = 32, batch: int = 32, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """(batch, n) token ids with one pair [A][B] at positions k, k + 1 among distinct random tokens and A again at
    the last position, and (batch,) the token B that copying predicts after it."""
    if not 0 <= k <= n - 3:
        raise ValueError(f"the pair [A][B] must sit at positions k, k + 1 before the last position: 0 <= k <= {n - 3}, "
                         f"got k = {k}")
    g = torch.Generator().manual_seed(seed * 1000 + k)
    rows = torch.stack([torch.randperm(N_VOCAB, generator=g)[: n - 1] for _ in range(batch)])  # (batch, n - 1)
    return torch.cat([rows, rows[:, k:k + 1]], dim=1), rows[:, k + 1]


@torch.no_grad()
def copy_by_position(model: Transformer, batch: int = 32, seed: int = 0) -> torch.Tensor:
    """(n_ctx - 2,): entry k is the mean probability the model gives B after [A][B] at positions k, k + 1 and A at
    the last position n_ctx - 1 (``pair_at``): how surely it copies when the earlier copy sits at k."""
    n = model.cfg.n_ctx
    probs = []
    for k in range(n - 2):
        tokens, B = pair_at(k, n, batch, seed)
        p = softmax(model(tokens)[..., -1], dim=-1)  # (batch, n_vocab): the prediction after the last A
        probs.append(p[torch.arange(batch), B].mean())
    return torch.stack(probs)


def repeat_loss(model: Transformer, tokens: torch.Tensor) -> tuple[float, float]:
    """Mean next-token loss on [first half][second half] token ids (batch, n) or (n,): (first, repeat).

    first:  the predictions of tokens 2 ... half (nothing to copy yet: about ln n_vocab for random tokens);
    repeat: the predictions made from the second half's positions (tokens half + 2 ... n), which an
            induction head can copy from the first half. (Token half + 1, the repeat's first, can't be
            predicted: its predecessor never occurred before.)
    """
    from helpers.interp.loss import per_position_loss

    tokens = torch.as_tensor(tokens)
    half = tokens.shape[-1] // 2
    loss = per_position_loss(model, tokens)  # (..., n - 1): position i predicts token i + 1
    return float(loss[..., : half - 1].mean()), float(loss[..., half:].mean())
