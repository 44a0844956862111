"""Notebook 09: induction heads, trained from scratch in seconds.

An induction head completes a pattern it has seen earlier in the context: after [A][B] ... [A] it
predicts [B]. One layer cannot do this (a key only knows its own token, so "the token *after* an
earlier A" is not something a query can ask for); two layers can: a previous-token head in layer 0
writes "my predecessor was A" into each position's residual stream, and a layer-1 head whose *keys*
read that (K-composition) attends from the current A to the position after the earlier A, and copies
its token. ("A Mathematical Framework for Transformer Circuits", Elhage et al. 2021; "In-context
Learning and Induction Heads", Olsson et al. 2022; the post's earlier draft builds up to them.)

The training data are random token sequences that repeat a random segment with a random period
(4 to 16 tokens): the only way to predict them is to look back one period. (With one fixed period,
say n_ctx / 2, a model can cheat by position alone and forms no induction head.)

Tokens are the 64 characters of ``ALPHABET`` so that a learner can type a sequence: "abcabc" is the
token ids of a, b, c, a, b, c.
"""

from __future__ import annotations

import string
import time
from dataclasses import dataclass, field

import torch

from helpers.interp.scores import head_scores
from helpers.interp.sequences import repeated_tokens
from helpers.model.config import Config
from helpers.optim import AdamW
from helpers.progress import tqdm  # ends green, not red, when the heads form before the step budget
from helpers.runtime import release_memory
from helpers.model.transformer import Transformer

ALPHABET = string.ascii_lowercase + string.ascii_uppercase + string.digits + " ."  # 64 tokens, one character each
N_VOCAB = len(ALPHABET)


def config(n_layers: int = 2) -> Config:
    """The notebook's model: attention only, n_vocab 64, d_model 64, 2 heads (d_head 32), n_ctx 32."""
    return Config(n_vocab=N_VOCAB, d_model=64, n_ctx=32, n_layers=n_layers, n_heads=2)


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


def repeating_batch(batch: int, n: int, g: torch.Generator, n_vocab: int = N_VOCAB,
                    periods: tuple[int, int] = (4, 16)) -> torch.Tensor:
    """(batch, n) token ids: each row repeats a random segment of random length P in ``periods`` (inclusive)."""
    lo, hi = periods
    P = torch.randint(lo, hi + 1, (batch,), generator=g)  # (batch,)
    segment = torch.randint(n_vocab, (batch, hi), generator=g)  # (batch, hi): the first P entries are used
    position = torch.arange(n)[None] % P[:, None]  # (batch, n): t_i = segment[i mod P]
    return torch.gather(segment, 1, position)


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
    seconds: float = 0.0


def probe_tokens(n_ctx: int = 32, batch: int = 16, seed: int = 1234) -> torch.Tensor:
    """(batch, n_ctx) [random half][the same half again], the fixed probe the scores are measured on."""
    return repeated_tokens(N_VOCAB, n_ctx // 2, batch=batch, seed=seed)


def train_induction(model: Transformer, max_steps: int = 1500, *, threshold: float | None = 0.85,
                    extra_steps: int = 100, lr: float = 1e-2, batch_size: int = 32, seed: int = 0,
                    eval_every: int = 25, progress: bool = True) -> InductionRun:
    """AdamW on ``repeating_batch`` data until the induction score passes ``threshold`` (checked every
    ``eval_every`` steps), then ``extra_steps`` more to settle; at most ``max_steps`` in all
    (threshold None: train all ``max_steps``). Keeps a copy of the weights at every evaluation."""
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
    stop_at = max_steps
    for step in bar:
        loss = model.loss(repeating_batch(batch_size, n + 1, g))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        run.step.append(step)
        run.loss.append(loss.item())
        if step % eval_every == 0 or step == max_steps or step == stop_at:
            model.eval()
            scores = head_scores(model, probe, which=("previous", "induction"))
            model.train()
            run.eval_step.append(step)
            run.induction.append(float(scores["induction"][-1].max()))
            run.previous.append(float(scores["previous"][0].max()))
            run.snapshots[step] = {k: v.detach().clone() for k, v in model.state_dict().items()}
            bar.set_postfix(loss=f"{run.loss[-1]:.2f}", induction=f"{run.induction[-1]:.2f}", refresh=False)
            if threshold is not None and run.formed_at is None and run.induction[-1] > threshold:
                run.formed_at = step
                stop_at = min(max_steps, step + extra_steps)
        if step >= stop_at:
            break
    bar.close()
    model.eval()
    run.seconds = time.perf_counter() - start
    release_memory()  # (the training steps' freed memory back to the system)
    return run


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
