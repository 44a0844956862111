"""Attention, in the post's notation — "A simplified one-layer Transformer", "The attention
*matrix*" and "Multiple heads" sections of "A Gentle Introduction to Transformers".

Column vectors, multiplied from the left; a leading batch dimension broadcasts everywhere:

    x                                      (d_model, n)          the residual stream
    W_Q, W_K, W_V                          (n_heads, d_head, d_model)
    W_O                                    (n_heads, d_model, d_head)
    q = W_Q x,  k = W_K x,  v = W_V x      (n_heads, d_head, n)
    S = q^T k / sqrt(d_head), -inf for j>i (n_heads, n, n)      row i = query i, column j = key j (the post's S)
    A = softmax(S) row by row = softmax*   (n_heads, n, n)      rows sum to 1
    r = v A^T                              (n_heads, d_head, n)
    o = sum_h W_O^h r^h                    (d_model, n)

Three ways of computing the same thing, each tested against the others:

* ``single_query``      the post's first tour: only the last token asks (notebook 03);
* ``attention``         every token asks at once: the attention matrix (notebooks 04, 05);
* ``concat_output``     the usual implementation: stack the heads' results into R, one big W_O.

``row_convention`` translates to PyTorch's / the lecture slides' row vectors (Q = X W_Q^T), which
is what ``torch.nn.functional.scaled_dot_product_attention`` expects. ``Attention`` is the
``nn.Module`` holding the weights; it only calls ``attention``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from helpers.model import names
from helpers.model.config import Config
from helpers.model.hooks import HookPoint, as_is
from helpers.model.project import per_head, project
from helpers.softmax import softmax


# --------------------------------------------------------------------------- input checks
def check_weights(W_Q: torch.Tensor, W_K: torch.Tensor, W_V: torch.Tensor, W_O: torch.Tensor) -> tuple[int, int]:
    """Check the four weights fit together; return (d_head, d_model). One head may drop the
    head dimension: W_Q (d_head, d_model), W_O (d_model, d_head)."""
    for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V), ("W_O", W_O)):
        if not isinstance(W, torch.Tensor):
            raise TypeError(f"{name} must be a torch tensor, got {type(W).__name__}")
        if W.dim() not in (2, 3):
            raise ValueError(f"{name} must have shape (d_head, d_model) for one head or "
                             f"(n_heads, d_head, d_model) for several; got {tuple(W.shape)}")
    d_head, d_model = W_Q.shape[-2:]
    for name, W in (("W_K", W_K), ("W_V", W_V)):
        if W.shape != W_Q.shape:
            raise ValueError(f"{name} has shape {tuple(W.shape)} but W_Q has {tuple(W_Q.shape)}: "
                             f"queries, keys and values all use (d_head, d_model) = ({d_head}, {d_model})")
    if W_O.shape[-2:] != (d_model, d_head) or W_O.shape[:-2] != W_Q.shape[:-2]:
        raise ValueError(f"W_O has shape {tuple(W_O.shape)}, expected {tuple(W_Q.shape[:-2]) + (d_model, d_head)}: "
                         f"it maps a result r (d_head = {d_head}) back to the residual stream (d_model = {d_model})")
    return d_head, d_model


def check_stream(x: torch.Tensor, d_model: int) -> None:
    """x must be the residual stream (d_model, n) or (batch, d_model, n) with n >= 1."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch tensor (d_model, n), got {type(x).__name__}")
    if x.dim() not in (2, 3):
        raise ValueError(f"x must have shape (d_model, n) or (batch, d_model, n), got {tuple(x.shape)}")
    if x.shape[-2] != d_model:
        hint = " (is it transposed? the post's tokens are columns)" if x.shape[-1] == d_model else ""
        raise ValueError(f"x has {x.shape[-2]} rows but the weights expect d_model = {d_model}: "
                         f"x must be (d_model, n), got {tuple(x.shape)}{hint}")
    if x.shape[-1] == 0:
        raise ValueError("the context is empty (n = 0): attention needs at least one token")


# --------------------------------------------------------------------------- the causal mask
def causal_mask(n: int, device=None) -> torch.Tensor:
    """(n, n) bool, True above the diagonal: where key j comes after query i (j > i)."""
    return torch.ones(n, n, dtype=torch.bool, device=device).triu(1)


def masked(S: torch.Tensor) -> torch.Tensor:
    """S with -inf above the diagonal, where key j comes after query i: the one place the causal mask is applied.

    S: (..., n, n), or (..., m, n) when only the last m of n tokens ask (their queries against every key): row i
    is then query n - m + i, and the mask is the last m rows of the square one. Activation patching at the last
    positions reruns only those columns (``helpers.interp.patching``)."""
    m, n = S.shape[-2:]
    return S.masked_fill(causal_mask(n, S.device)[n - m:], float("-inf"))


def scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """The scores of every query against every key, before the mask: q^T k / sqrt(d_head).

    q, k: (..., d_head, n), one column per token -> (..., n, n), row i = query i, column j = key j."""
    if q.shape[-2] != k.shape[-2]:
        raise ValueError(f"q and k must have the same d_head (rows): got {tuple(q.shape)} and {tuple(k.shape)}")
    return q.mT @ k / math.sqrt(q.shape[-2])


def softmax_star(S: torch.Tensor, mask: bool = True) -> torch.Tensor:
    """The post's softmax*: put -inf above the diagonal, then softmax each row.

    S: (..., n, n) scores, row i = query i. The diagonal is never masked (a token may attend to
    itself), so no row is ever all -inf. mask=False: a plain row softmax (the future is visible).
    """
    if S.shape[-1] != S.shape[-2]:
        raise ValueError(f"scores must be square (..., n, n) to be causally masked, got {tuple(S.shape)}")
    return softmax(masked(S) if mask else S, dim=-1)


# --------------------------------------------------------------------------- first tour: one query
@dataclass
class SingleQuery:
    """The post's first activation table, for the last token n (one head; heads broadcast in front)."""

    q_n: torch.Tensor  # (d_head, 1)   query of the last token
    k: torch.Tensor  # (d_head, n)     keys of every token
    v: torch.Tensor  # (d_head, n)     values of every token
    s: torch.Tensor  # (n,)            scores  s_i = q_n^T k_i / sqrt(d_head)
    a: torch.Tensor  # (n,)            weights a = softmax(s)
    r_n: torch.Tensor  # (d_head, 1)   result r_n = sum_i a_i v_i
    o_n: torch.Tensor  # (d_model, 1)  output o_n = W_O r_n


def single_query(x: torch.Tensor, W_Q, W_K, W_V, W_O) -> SingleQuery:
    """Attention of the last token over the context x (d_model, n) — no mask needed, because
    every token in x is at or before the last one."""
    d_head, d_model = check_weights(W_Q, W_K, W_V, W_O)
    check_stream(x, d_model)
    x_n = x[..., -1:]  # (d_model, 1)
    q_n = W_Q @ x_n  # (d_head, 1)
    k = W_K @ x  # (d_head, n)
    v = W_V @ x  # (d_head, n)
    s = (q_n.mT @ k / math.sqrt(d_head))[..., 0, :]  # (1, n) -> (n,)
    a = softmax(s, dim=-1)  # (n,)
    r_n = (v * a[..., None, :]).sum(-1, keepdim=True)  # sum_i a_i v_i: (d_head, 1)
    o_n = W_O @ r_n  # (d_model, 1)
    return SingleQuery(q_n, k, v, s, a, r_n, o_n)


# --------------------------------------------------------------------------- every query at once
@dataclass
class AttentionOut:
    """Every activation of one attention layer (heads in dimension -3)."""

    q: torch.Tensor  # (n_heads, d_head, n)
    k: torch.Tensor  # (n_heads, d_head, n)
    v: torch.Tensor  # (n_heads, d_head, n)
    S: torch.Tensor  # (n_heads, n, n)  scores, -inf above the diagonal when masked
    A: torch.Tensor  # (n_heads, n, n)  pattern, rows sum to 1
    r: torch.Tensor  # (n_heads, d_head, n)
    o_heads: torch.Tensor  # (n_heads, d_model, n)  each head's output o^h = W_O^h r^h
    o: torch.Tensor  # (d_model, n)  sum over heads


def attention(x: torch.Tensor, W_Q, W_K, W_V, W_O, mask: bool = True,
              inputs: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None,
              biases: tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor] | None = None,
              hook: Callable[[str, torch.Tensor], torch.Tensor] = as_is) -> AttentionOut:
    """Multi-head attention in the post's matrix form. x: (d_model, n) or (batch, d_model, n).

    One head may be given without the head dimension; it is added (n_heads = 1).
    inputs: None (queries, keys and values all read x), or the three streams (x_q, x_k, x_v) they read
    instead, each shaped like x or with a head dimension, (..., n_heads, d_model, n), for one stream per
    head: how ``helpers.interp.paths`` takes one head's output out of one path only.
    biases: None (the post's layer), or GPT-2's (b_Q, b_K, b_V (n_heads, d_head), b_O (d_model,)):
    q = W_Q x + b_Q, k = W_K x + b_K, v = W_V x + b_V, o = sum_h W_O^h r^h + b_O. b_O belongs to no head: it is
    in ``o`` but not in ``o_heads``. Two of them fold away exactly: b_K adds q_i . b_K to every score of row i,
    which the softmax ignores; b_V adds W_O^h b_V^h to o^h at every position (the weights of a row sum to 1),
    a constant that could live in b_O (both asserted in tests/unit/gpt2/test_gpt2.py).
    hook: hook(name, activation) -> activation, called on q, k, v, S, A, r, o_heads and o as each is computed (the
    ``Attention`` module passes its hook points, ``helpers.model.hooks``); each later step uses what it returns.
    """
    if W_Q.dim() == 2:
        W_Q, W_K, W_V, W_O = W_Q[None], W_K[None], W_V[None], W_O[None]
    d_head, d_model = check_weights(W_Q, W_K, W_V, W_O)
    check_stream(x, d_model)
    x_q, x_k, x_v = (x, x, x) if inputs is None else inputs

    def heads_read(t: torch.Tensor) -> torch.Tensor:  # (..., 1 or n_heads, d_model, n): one stream, or one per head
        return t if t.dim() > x.dim() else t.unsqueeze(-3)
    q, k, v = project(W_Q, heads_read(x_q)), project(W_K, heads_read(x_k)), project(W_V, heads_read(x_v))  # W_Q x
    b_Q, b_K, b_V, b_O = biases if biases is not None else (None,) * 4
    q = hook("q", q if b_Q is None else q + b_Q[..., None])  # (..., n_heads, d_head, n)
    k = hook("k", k if b_K is None else k + b_K[..., None])  # (one bias column per head)
    v = hook("v", v if b_V is None else v + b_V[..., None])
    S = scores(q, k)  # (..., n_heads, n, n)
    S = hook("S", masked(S) if mask else S)  # -inf where key j > query i: the cache shows softmax*'s input
    A = hook("A", softmax(S, dim=-1))  # softmax* (the mask is already in S); rows sum to 1
    r = hook("r", v @ A.mT)  # (..., n_heads, d_head, n)
    o_heads = hook("o_heads", per_head(W_O, r))  # W_O^h r^h: (..., n_heads, d_model, n)
    o = hook("o", sum_heads(o_heads, b_O))  # (..., d_model, n)
    return AttentionOut(q, k, v, S, A, r, o_heads, o)


def sum_heads(o_heads: torch.Tensor, b_O: torch.Tensor | None = None) -> torch.Tensor:
    """o = sum_h o^h (+ b_O, GPT-2's output bias, which belongs to no head).
    (..., n_heads, d_model, n) -> (..., d_model, n)."""
    o = o_heads.sum(-3)
    return o if b_O is None else o + b_O[:, None]


def concat_output(r: torch.Tensor, W_O: torch.Tensor) -> torch.Tensor:
    """The usual implementation: o = W_O R, with R the heads' results stacked on top of each other
    (n_heads * d_head, n) and W_O the blocks [W_O^1 | ... | W_O^H] side by side (d_model, n_heads * d_head).

    r: (..., n_heads, d_head, n), W_O: (n_heads, d_model, d_head) -> o (..., d_model, n).
    """
    n_heads, d_model, d_head = W_O.shape
    if r.shape[-3:-1] != (n_heads, d_head):
        raise ValueError(f"r has shape {tuple(r.shape)}, expected (..., {n_heads}, {d_head}, n) to match W_O")
    R = r.reshape(*r.shape[:-3], n_heads * d_head, r.shape[-1])  # stack the heads' results
    W_O_cat = W_O.permute(1, 0, 2).reshape(d_model, n_heads * d_head)  # [W_O^1 | ... | W_O^H]
    return W_O_cat @ R


def row_convention(x: torch.Tensor, W_Q, W_K, W_V) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Translate to row vectors (PyTorch, the lecture slides): X = x^T has one token per row,
    and Q = X W_Q^T = (W_Q x)^T = q^T. Returns Q, K, V of shape (..., n_heads, n, d_head), ready
    for ``torch.nn.functional.scaled_dot_product_attention``; its output is r^T."""
    X = x.mT.unsqueeze(-3)  # (..., 1, n, d_model)
    return X @ W_Q.mT, X @ W_K.mT, X @ W_V.mT


# --------------------------------------------------------------------------- the module
class Attention(nn.Module):
    """One attention layer's weights; forward(x (batch, d_model, n)) -> o (batch, d_model, n).

    ``masked`` starts as ``cfg.masked`` (True: the causal mask is on); ``mask_switched`` in
    ``helpers.model.transformer`` switches it for a whole model (notebook 04 shows what goes wrong).
    """

    def __init__(self, cfg: Config, layer: int = 0):
        super().__init__()
        self.layer = layer
        H, d, D = cfg.n_heads, cfg.d_head, cfg.d_model
        self.W_Q = nn.Parameter(torch.randn(H, d, D) * cfg.init_std)
        self.W_K = nn.Parameter(torch.randn(H, d, D) * cfg.init_std)
        self.W_V = nn.Parameter(torch.randn(H, d, D) * cfg.init_std)
        self.W_O = nn.Parameter(torch.randn(H, D, d) * cfg.init_std)
        if cfg.attn_biases:  # GPT-2's; absent from the series' own models (their checkpoints hold none)
            self.b_Q, self.b_K, self.b_V = (nn.Parameter(torch.zeros(H, d)) for _ in range(3))
            self.b_O = nn.Parameter(torch.zeros(D))
        self.masked = cfg.masked
        self.hooks = nn.ModuleDict({name: HookPoint(names.key(layer, name)) for name in names.ATTENTION})  # q ... o

    @property
    def biases(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor] | None:
        """(b_Q, b_K, b_V, b_O) when the config has attention biases (GPT-2), else None."""
        return (self.b_Q, self.b_K, self.b_V, self.b_O) if hasattr(self, "b_O") else None

    @property
    def b_O_or_none(self) -> torch.Tensor | None:
        return getattr(self, "b_O", None)

    def forward(self, x_q: torch.Tensor, x_k: torch.Tensor, x_v: torch.Tensor) -> torch.Tensor:
        """o = sum_h W_O^h r^h, the queries reading x_q, the keys x_k, the values x_v: each the stream (batch,
        d_model, n) or one stream per head (batch, n_heads, d_model, n) (a path-specific ablation's edit; without
        one they are the same stream). Every activation passes its hook point."""
        stream = next((t for t in (x_q, x_k, x_v) if t.dim() == 3), x_q[:, 0])  # (batch, d_model, n): the shapes
        return attention(stream, self.W_Q, self.W_K, self.W_V, self.W_O, mask=self.masked, inputs=(x_q, x_k, x_v),
                         biases=self.biases, hook=lambda name, t: self.hooks[name](t)).o


# --------------------------------------------------------------------------- describing patterns
def pattern_stats(A: torch.Tensor) -> dict[str, torch.Tensor]:
    """Summaries of attention patterns A (..., n_heads, n, n), averaged over batch and query rows:

    self      mean weight of token i on itself (a_ii), rows 2..n
    previous  mean weight on the previous token (a_i,i-1), rows 2..n
    first     mean weight on the first token (a_i1), rows 2..n
    entropy   mean entropy of a row in nats (0 = all weight on one token), rows 2..n

    Each value has shape (n_heads,). Row 1 is left out: it can only attend to itself.
    """
    if A.dim() < 3 or A.shape[-1] != A.shape[-2] or A.shape[-1] < 2:
        raise ValueError(f"A must have shape (..., n_heads, n, n) with n >= 2, got {tuple(A.shape)}")
    A = A.reshape(-1, *A.shape[-3:])  # (batch, n_heads, n, n)
    rows = A[..., 1:, :]
    entropy = -(rows * rows.clamp_min(1e-12).log()).sum(-1)
    return {
        "self": A.diagonal(0, -2, -1)[..., 1:].mean((0, 2)),
        "previous": A.diagonal(-1, -2, -1).mean((0, 2)),
        "first": rows[..., 0].mean((0, 2)),
        "entropy": entropy.mean((0, 2)),
    }
