"""The logit lens: read the residual stream after every layer as if it were the last.

The model predicts from its final stream: p = softmax(W_U LN(x_last)). Nothing stops us from applying the same
unembedding (and final LayerNorm) to an earlier state x0, x1, ...: every component adds to one stream, so each
state is a partial sum of what the final one will be. The lens shows when a prediction forms — x0 alone is the
direct path (a zero-layer model, notebook 02), and each layer's add moves it. Introduced by nostalgebraist's
"interpreting GPT: the logit lens" (2020); it reads real models less well in their first layers, whose streams the
unembedding was not trained to read, which is why "tuned lenses" exist. Here it needs only what 02 and 08 teach.
"""

from __future__ import annotations

import torch

from helpers.interp.validate import batch_of_tokens, check_position
from helpers.model import names
from helpers.model.hooks import Cache, caching
from helpers.model.transformer import Transformer
from helpers.softmax import softmax


def _states(model: Transformer, t: torch.Tensor) -> Cache:
    """One forward pass of the whole batch (so an enclosing intervention sees the batch it was given), keeping only the
    residual stream's states x0, x1, ...: (batch, d_model, n) each. It stops before the unembedding: the lens reads
    the states itself, so the model's own logits for every position (batch, n_vocab, n) are never made."""
    with caching(model, Cache(), model.resid_names()) as cache:
        model(t, read_out=False)
    return cache


@torch.no_grad()
def logit_lens(model: Transformer, tokens, position: int = -1) -> torch.Tensor:
    """p after each residual-stream state at ``position``: (number of states, n_vocab) for tokens (n,), or
    (batch, number of states, n_vocab) for (batch, n). Row i = softmax(W_U LN(x_i)); the last row is the
    model's own prediction."""
    t, single = batch_of_tokens(model, tokens)
    pos = check_position(t.shape[-1], position)
    cache = _states(model, t)
    states = torch.stack([cache[k][..., pos] for k in model.resid_names()], dim=1)  # (batch, states, d_model)
    x = states.mT                     # (batch, d_model, states): LayerNorm normalises each column, each state alone
    p = softmax(model.read_out(x), dim=-2).mT                                     # (batch, states, n_vocab)
    return p[0] if single else p


@torch.no_grad()
def lens_loss(model: Transformer, tokens) -> torch.Tensor:
    """How well each state of the stream predicts the next token, read through the lens: (number of states,) mean
    cross-entropy in nats over every position that has a next token (n - 1 of them) and every text, for tokens (n,) or
    (batch, n). Entry i = mean over j of -ln softmax(W_U LN(x_i[:, j]))[t_(j+1)]; the last entry is the model's own
    loss (notebook 08 reads its models this way; notebook 11's Exercise 11.3 asks for it)."""
    t, _ = batch_of_tokens(model, tokens)
    if t.shape[-1] < 2:
        raise ValueError("the lens loss needs at least 2 tokens: each position is scored on the token after it")
    cache = _states(model, t)
    states = torch.stack([cache[k][..., :-1] for k in model.resid_names()], dim=1)   # (batch, states, d_model, n - 1)
    logp = torch.log_softmax(model.read_out(states).double(), dim=-2)             # (batch, states, n_vocab, n - 1)
    target = t[:, None, None, 1:].expand(-1, logp.shape[1], 1, -1)                 # t_(j+1) for column j
    return -logp.gather(-2, target).squeeze(-2).mean(dim=(0, 2))


def lens_table(model: Transformer, tokens, vocab, position: int = -1, top: int = 3) -> list[tuple[str, list]]:
    """The lens as rows: [(state name, [(token, p), ...] its ``top`` most likely next tokens)], x0 first."""
    p = logit_lens(model, tokens, position)
    if p.dim() != 2:
        raise ValueError("lens_table reads one text: give tokens of shape (n,)")
    rows = []
    for i, row in enumerate(p):
        best = row.topk(top)
        rows.append((names.resid(i), [(vocab[int(j)], float(v)) for v, j in zip(best.values, best.indices)]))
    return rows
