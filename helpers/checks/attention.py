"""Exercises of notebooks 03-05: one attention step for the last token, the causal softmax*, and a
layer's output from its heads' pieces. Each check tries the learner's function on small random
inputs and, when the answer is wrong, compares it with the usual mistakes to say which one it is.
"""

from __future__ import annotations

import math

import torch

from helpers.checks.base import ExerciseError, as_tensor, call, exercise, expect_shape, passed
from helpers.model import attention as att
from helpers.softmax import softmax


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and bool(torch.allclose(a.double(), b.double(), atol=1e-5, rtol=1e-4))


def _inputs(seed: int, n_heads: int | None, d_head: int = 4, d_model: int = 36, n: int = 6):
    g = torch.Generator().manual_seed(seed)
    head = () if n_heads is None else (n_heads,)
    W_Q, W_K, W_V = (torch.randn(*head, d_head, d_model, generator=g) for _ in range(3))
    W_O = torch.randn(*head, d_model, d_head, generator=g)
    x = torch.randn(d_model, n, generator=g)
    return x, W_Q, W_K, W_V, W_O


# --------------------------------------------------------------------------- notebook 03
@exercise(answered_by=("helpers.model.attention.single_query", "helpers.model.attention.attention"))
def check_single_query(fn) -> bool:
    """fn(x (d_model, n), W_Q, W_K, W_V (d_head, d_model), W_O (d_model, d_head)) -> o_n (d_model, 1)."""
    what = "single_query_attention(x, W_Q, W_K, W_V, W_O)"
    for seed in range(3):
        x, W_Q, W_K, W_V, W_O = _inputs(seed, None)
        d_head, d_model = W_Q.shape
        right = att.single_query(x, W_Q, W_K, W_V, W_O)
        out = as_tensor(call(fn, x, W_Q, W_K, W_V, W_O, what=what), what)
        if out.shape == (d_head, 1) and _close(out, right.r_n):
            raise ExerciseError(f"{what} returned the result r_n (d_head x 1) — the last step is missing: "
                                "o_n = W_O r_n maps it back to the residual stream (d_model x 1).")
        if out.shape == (d_model,):
            out = out[:, None]
        expect_shape(out, (d_model, 1), what, "o_n is one column of the residual stream: (d_model, 1).")
        if _close(out, right.o_n):
            continue
        k, v, q_n = W_K @ x, W_V @ x, W_Q @ x[:, -1:]
        guesses = {
            "did you divide by sqrt(d_model) instead of sqrt(d_head)? The scores are dot products of "
            "d_head-dimensional vectors, so their spread grows with d_head.": q_n.T @ k / math.sqrt(d_model),
            "did you forget to divide the scores by sqrt(d_head)?": q_n.T @ k,
            "did you divide by d_head instead of its square root?": q_n.T @ k / d_head,
        }
        for msg, s in guesses.items():
            if _close(out, W_O @ (v @ softmax(s[0], dim=0)[:, None])):
                raise ExerciseError(f"{what}: the weights are off — {msg}")
        q_1 = W_Q @ x[:, :1]
        if _close(out, W_O @ (v @ softmax((q_1.T @ k)[0] / math.sqrt(d_head), dim=0)[:, None])):
            raise ExerciseError(f"{what}: you used the query of the *first* token; the post asks with the last "
                                "one, q_n = W_Q x_n (x[:, -1:]).")
        if _close(out, W_O @ (v @ ((q_n.T @ k)[0] / math.sqrt(d_head))[:, None])):
            raise ExerciseError(f"{what}: the result uses the raw scores; turn them into weights that sum to 1 "
                                "first, a = softmax(s).")
        if _close(out, W_O @ v.mean(1, keepdim=True)):
            raise ExerciseError(f"{what}: every token got the same weight 1/n — the weights must come from the "
                                "scores, a = softmax(q_n^T k / sqrt(d_head)).")
        raise ExerciseError(f"{what} returns the right shape but the wrong numbers (checked on random x and "
                            "weights). Go through the table: q_n, k, v, s, a = softmax(s), r_n = sum_i a_i v_i, "
                            "o_n = W_O r_n.")
    return passed("single-query attention matches the post's table on 3 random contexts.")


# --------------------------------------------------------------------------- notebook 04
@exercise(answered_by=("helpers.model.attention.softmax_star",))
def check_causal_softmax(fn) -> bool:
    """fn(scores (n, n)) -> A (n, n): put -inf above the diagonal (the post's S), then softmax each row.

    ``scores`` = q^T k / sqrt(d_head), not yet masked, as in notebook 04's exercise."""
    what = "causal_softmax(scores)"
    g = torch.Generator().manual_seed(0)
    for n in (1, 4, 7):
        S = torch.randn(n, n, generator=g) * 2
        right = att.softmax_star(S)
        out = as_tensor(call(fn, S.clone(), what=what), what)
        expect_shape(out, (n, n), what, "A has one row per query and one column per key.")
        if _close(out, right):
            continue
        if torch.isnan(out).any() or (out.sum(-1).abs() < 1e-6).any():
            raise ExerciseError(f"{what}: a row sums to 0 (or is NaN) — the whole row was masked. Only keys "
                                "*after* the query are hidden (j > i, strictly above the diagonal); every token "
                                "may look at itself, so keep the diagonal. Try torch.triu(..., diagonal=1).")
        if _close(out, softmax(S, dim=-1)):
            raise ExerciseError(f"{what}: nothing was masked — query i can see keys j > i, the future. "
                                "Set scores[i, j] = -inf for j > i before the softmax.")
        if _close(out, att.softmax_star(S.mT).mT) or _close(out, softmax(S.masked_fill(
                torch.ones(n, n, dtype=torch.bool).tril(-1), float("-inf")), dim=-1)):
            raise ExerciseError(f"{what}: the mask points the wrong way — you hid the past (below the "
                                "diagonal) and kept the future. Row i is query i; hide columns j > i.")
        if _close(out, softmax(S.masked_fill(att.causal_mask(n), float("-inf")), dim=0)):
            raise ExerciseError(f"{what}: the softmax runs down the columns; each *row* (one query's "
                                "weights over the keys) must sum to 1: softmax over dim=-1.")
        if _close(out, softmax(S.masked_fill(att.causal_mask(n), 0.0), dim=-1)):
            raise ExerciseError(f"{what}: the masked entries were set to 0, but exp(0) = 1 still gives them "
                                "weight. Pad with -inf (exp(-inf) = 0), as the post's softmax([1, 2, P]) shows.")
        if _close(out, softmax(S, dim=-1).masked_fill(att.causal_mask(n), 0.0)):
            raise ExerciseError(f"{what}: you zeroed the future *after* the softmax, so the rows no longer sum "
                                "to 1. Mask the scores with -inf first, then take the softmax.")
        raise ExerciseError(f"{what} gives the right shape but the wrong weights: put -inf where j > i, then "
                            "softmax each row (dim=-1).")
    return passed("softmax* masks exactly the future and every row sums to 1.")


# --------------------------------------------------------------------------- notebook 05
@exercise(answered_by=("helpers.model.attention.concat_output",))
def check_multi_head_output(fn) -> bool:
    """fn(r (n_heads, d_head, n), W_O (n_heads, d_model, d_head)) -> o (d_model, n) = sum_h W_O^h r^h."""
    what = "multi_head_output(r, W_O)"
    for seed, H in ((0, 4), (1, 2), (2, 1)):
        _, _, _, _, W_O = _inputs(seed, H)
        g = torch.Generator().manual_seed(100 + seed)
        r = torch.randn(H, W_O.shape[-1], 6, generator=g)
        right = att.concat_output(r, W_O)
        out = as_tensor(call(fn, r.clone(), W_O.clone(), what=what), what)
        if out.shape == (H, W_O.shape[1], 6) and H > 1:
            raise ExerciseError(f"{what} returned one output per head (n_heads, d_model, n); the layer's output "
                                "is their sum, o = sum_h W_O^h r^h (d_model, n).")
        expect_shape(out, right.shape, what, "o lives in the residual stream: (d_model, n).")
        if _close(out, right):
            continue
        if H > 1 and _close(out, right / H):
            raise ExerciseError(f"{what}: you averaged the heads; they are added, x1 = x0 + sum_h o^h.")
        wrong_cat = W_O.reshape(W_O.shape[1], -1) @ r.reshape(-1, r.shape[-1])
        if H > 1 and _close(out, wrong_cat):
            raise ExerciseError(f"{what}: W_O.reshape(d_model, n_heads * d_head) mixes up the heads' columns. "
                                "The blocks [W_O^1 | ... | W_O^H] sit side by side: use "
                                "W_O.permute(1, 0, 2).reshape(...), or just sum W_O[h] @ r[h] over h.")
        raise ExerciseError(f"{what} has the right shape but the wrong numbers; compare with "
                            "sum(W_O[h] @ r[h] for h in range(n_heads)).")
    return passed("the heads' outputs add up to the concatenated W_O R.")
