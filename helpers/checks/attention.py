"""Exercises of notebooks 03-04: one attention step for the last token (written before the notebook shows
the table), the last token's prediction with one earlier token hidden from it (an intervention the
notebook never makes), the scores of every query against every key, and causal attention from those
scores to the layer's output. Each check tries the learner's function on small random inputs the
notebook never shows and, when the answer is wrong, compares it with the usual mistakes to say which.
"""

from __future__ import annotations

import ast
import inspect
import math
import textwrap

import torch

from helpers.checks.base import (ExerciseError, as_tensor, call, close, exercise, expect_real, expect_shape, named,
                                 passed)
from helpers.model import attention as att
from helpers.softmax import softmax

NEG_INF = float("-inf")
FUSED = "torch.nn.functional.scaled_dot_product_attention"


def python_loop(fn) -> str | None:
    """The source of the first loop in ``fn`` that walks over positions or heads one by one (a ``for`` or a
    comprehension over ``range(...)``, or over one of its own arguments), or None. Loops over a fixed
    tuple, such as ``for W in (W_Q, W_K, W_V)``, are fine. None too when the source cannot be read."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    args = {a.arg for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.Lambda))
            for a in node.args.args}
    for node in ast.walk(tree):
        loops = [node] if isinstance(node, ast.For) else getattr(node, "generators", [])
        for loop in loops:
            it = loop.iter
            names = {n.id for n in ast.walk(it) if isinstance(n, ast.Name)}
            if "range" in names or (names & args and not isinstance(it, (ast.Tuple, ast.List))):
                return f"for {ast.unparse(loop.target)} in {ast.unparse(it)}"
    return None


def _inputs(seed: int, n_heads: int | None, d_head: int = 4, d_model: int = 36, n: int = 6):
    g = torch.Generator().manual_seed(seed)
    head = () if n_heads is None else (n_heads,)
    W_Q, W_K, W_V = (torch.randn(*head, d_head, d_model, generator=g) for _ in range(3))
    W_O = torch.randn(*head, d_model, d_head, generator=g)
    x = torch.randn(d_model, n, generator=g)
    return x, W_Q, W_K, W_V, W_O


def _column(out: torch.Tensor, rows: int) -> torch.Tensor:
    """Accept a column (rows, 1) or a flat vector (rows,); return the column."""
    return out[:, None] if out.shape == (rows,) else out


# --------------------------------------------------------------------------- notebook 03
SQ_CASES = ((1, 3, 7, 5), (0, 4, 36, 6), (2, 8, 16, 1), (3, 5, 11, 9))  # seed, d_head, d_model, n
# (the first case's d_head is 3: a scale written into the code, such as / 4 or / 8, can't pass for sqrt(d_head) or
# d_head there, and is named as a fixed number)
FIXED_SCALES = (2.0, 4.0, 8.0, 16.0, math.sqrt(2.0))


@exercise(answered_by=("helpers.model.attention.single_query", "helpers.model.attention.attention"))
def check_single_query(fn) -> bool:
    """fn(x (d_model, n), W_Q, W_K, W_V (d_head, d_model), W_O (d_model, d_head)) -> o_n (d_model, 1)."""
    what = named(fn, "single_query_attention", "(x0, W_Q, W_K, W_V, W_O)")
    forbid = ("helpers.model.attention.single_query", "helpers.model.attention.attention", FUSED)
    for seed, d_head, d_model, n in SQ_CASES:
        x, W_Q, W_K, W_V, W_O = _inputs(seed, None, d_head, d_model, n)
        right = att.single_query(x, W_Q, W_K, W_V, W_O)
        out = as_tensor(call(fn, x.clone(), W_Q, W_K, W_V, W_O, what=what, forbid=forbid), what)
        if out.shape in ((d_head, 1), (d_head,)) and close(_column(out, d_head), right.r_n):
            raise ExerciseError(f"{what} returned the result r_n (d_head x 1) — the last step is missing: "
                                "o_n = W_O r_n maps it back to the residual stream (d_model x 1).")
        out = _column(out, d_model)
        expect_shape(out, (d_model, 1), what, "o_n is one column of the residual stream: (d_model, 1).")
        out = expect_real(out, what)
        if close(out, right.o_n):
            continue
        k, v, q_n = W_K @ x, W_V @ x, W_Q @ x[:, -1:]
        guesses = {
            "did you divide by sqrt(d_model) instead of sqrt(d_head)? The scores are dot products of "
            "d_head-dimensional vectors, so their spread grows with d_head.": q_n.T @ k / math.sqrt(d_model),
            "did you forget to divide the scores by sqrt(d_head)?": q_n.T @ k,
            "did you divide by d_head instead of its square root?": q_n.T @ k / d_head,
            **{f"the scores are divided by the fixed number {c:g}; here d_head = {d_head}. Take d_head from the "
               "weights (W_Q.shape[0]) and divide by its square root.": q_n.T @ k / c
               for c in FIXED_SCALES if c not in (math.sqrt(d_head), d_head)},
        }
        for msg, s in guesses.items():
            if close(out, W_O @ (v @ softmax(s[0], dim=0)[:, None])):
                raise ExerciseError(f"{what}: the weights are off — {msg}")
        if n > 1 and close(out, W_O @ v.sum(1, keepdim=True)):
            raise ExerciseError(f"{what}: every weight came out as 1 — the softmax ran over a dimension of size 1 "
                                "(the scores q_n^T k are (1, n); softmax over dim 0 of that is all ones). Take the "
                                "row of scores, (q_n.T @ k)[0], or softmax over the last dimension.")
        if n > 1:
            q_1 = W_Q @ x[:, :1]
            if close(out, W_O @ (v @ softmax((q_1.T @ k)[0] / math.sqrt(d_head), dim=0)[:, None])):
                raise ExerciseError(f"{what}: you used the query of the *first* token; the post asks with the "
                                    "last one, q_n = W_Q x_n (x0[:, -1:]).")
            if close(out, W_O @ (v @ ((q_n.T @ k)[0] / math.sqrt(d_head))[:, None])):
                raise ExerciseError(f"{what}: the result uses the raw scores; turn them into weights that sum "
                                    "to 1 first, a = softmax(s).")
            if close(out, W_O @ v.mean(1, keepdim=True)):
                raise ExerciseError(f"{what}: every token got the same weight 1/n — the weights must come "
                                    "from the scores, a = softmax(q_n^T k / sqrt(d_head)).")
        a = right.a[:, None]                                   # the right weights, (n, 1)
        if close(out, W_O @ (k @ a)) or close(out, W_O @ ((W_Q @ x) @ a)):
            raise ExerciseError(f"{what}: the weights are right, but the values come from W_K (or W_Q). What is "
                                "moved is each token's value, v_i = W_V x_i: r_n = sum_i a_i v_i.")
        if close(out, x[:, -1:] + right.o_n):
            raise ExerciseError(f"{what} returned x1_n = x0_n + o_n; the exercise asks for the attention "
                                "output o_n alone (the residual add comes after).")
        raise ExerciseError(f"{what} returns the right shape but the wrong numbers (checked on random x0 and "
                            f"weights, here d_head = {d_head}, d_model = {d_model}, n = {n}). Go step by step: "
                            "q_n, k, v, s, a = softmax(s), r_n = sum_i a_i v_i, o_n = W_O r_n.")
    return passed(f"single-query attention is right on {len(SQ_CASES)} random contexts (1 to 9 tokens, "
                  "d_head 3 to 8).")


def _hide(x, j, W_Q, W_K, W_V, W_O, W_U, *, fill=NEG_INF, after=False, resid=True, zero_vector=False):
    """The last token's next-token probabilities (n_vocab,) with token j (a Python index) hidden from it,
    or one of the usual mistakes (fill 0 instead of -inf, weight zeroed after the softmax without
    renormalising, residual add forgotten, token's vector zeroed)."""
    d_head = W_Q.shape[0]
    if zero_vector:
        x = x.clone()
        x[:, j] = 0.0
    s = (W_Q @ x[:, -1]) @ (W_K @ x) / math.sqrt(d_head)
    if after or zero_vector:
        a = softmax(s, dim=0).clone()
        if after:
            a[j] = 0.0
    else:
        s = s.clone()
        s[j] = fill
        a = softmax(s, dim=0)
    o_n = W_O @ (W_V @ x) @ a
    return softmax(W_U @ (x[:, -1] + o_n if resid else o_n), dim=0)


ROW_OF_SCORES = {"for dimension 0 with size 1": "The last query's scores are a (1, n) row here (q^T k): index "
                                                "token j as s[0, j], or flatten s to (n,) first."}
HIDE_CASES = ((0, 4, 12, 10, 5), (1, 3, 7, 6, 4), (2, 5, 9, 11, 2), (3, 6, 10, 8, 8))
# seed, d_head, d_model, n_vocab, n


@exercise(answered_by=())
def check_hide_token(fn) -> bool:
    """fn(x0 (d_model, n), j, W_Q, W_K, W_V, W_O, W_U (n_vocab, d_model)) -> p (n_vocab,) or (n_vocab, 1):
    the last token's next-token probabilities when it may not attend to token j (Python index, j < n - 1)."""
    what = named(fn, "probs_hiding", "(x0, j, W_Q, W_K, W_V, W_O, W_U)")
    for seed, d_head, d_model, n_vocab, n in HIDE_CASES:
        g = torch.Generator().manual_seed(seed)
        W_Q, W_K, W_V = (torch.randn(d_head, d_model, generator=g) * 1.5 / math.sqrt(d_model) for _ in range(3))
        W_O = torch.randn(d_model, d_head, generator=g)
        W_U = torch.randn(n_vocab, d_model, generator=g)
        x = torch.randn(d_model, n, generator=g)
        a = att.single_query(x, W_Q, W_K, W_V, W_O).a
        j = int(a[:-1].argmax())   # the earlier token the last one reads most: hiding it matters
        args = (x, j, W_Q, W_K, W_V, W_O, W_U)
        out = as_tensor(call(fn, x.clone(), j, W_Q, W_K, W_V, W_O, W_U, what=what, hints=ROW_OF_SCORES), what)
        if out.shape == (n_vocab, 1):
            out = out[:, 0]
        expect_shape(out, (n_vocab,), what, "p is one distribution over the vocabulary: (n_vocab,) or (n_vocab, 1).")
        out = expect_real(out, what, "If the scores are a (1, n) row (q^T k), s[j] = -inf sets the whole row, and "
                                     "softmax(dim=0) takes each score alone (-inf against itself is NaN): write "
                                     "s[0, j] and softmax over dim=1, or flatten s to (n,) first.")
        right = _hide(*args)
        if close(out, right):
            continue
        if abs(float(out.sum()) - 1) > 1e-4 or (out < 0).any():
            raise ExerciseError(f"{what}: the numbers do not sum to 1 over the vocabulary (they sum to "
                                f"{float(out.sum()):.3f}). The last step is p = softmax(W_U x1_n) over the "
                                "n_vocab logits.")
        full = softmax(W_U @ (x[:, -1] + att.single_query(x, W_Q, W_K, W_V, W_O).o_n[:, 0]), dim=0)
        if close(out, full):
            raise ExerciseError(f"{what} gives the model's usual prediction: nothing was hidden. Give token j "
                                "the score -inf before the softmax, so its weight becomes exactly 0.")
        for other in (j - 1, j + 1):
            if 0 <= other < n and close(out, _hide(x, other, W_Q, W_K, W_V, W_O, W_U)):
                raise ExerciseError(f"{what} hid token {other} instead of token {j}: j is a Python index "
                                    "(column j of x0, counting from 0).")
        mistakes = {
            "the score of token j was set to 0, but exp(0) = 1 still gives it weight. Set it to -inf "
            "(exp(-inf) = 0), like the causal mask does.": _hide(*args, fill=0.0),
            "token j's weight was set to 0 after the softmax, so the weights no longer sum to 1 (the other "
            "tokens do not take over its share). Hide it *before* the softmax: score -inf.": _hide(*args, after=True),
            "the residual add is missing: the model predicts from x1_n = x0_n + o_n, not from o_n alone.":
                _hide(*args, resid=False),
            "zeroing token j's vector does not hide it: its key becomes 0, its score 0, and exp(0) = 1 "
            "still gives it weight. Hide it through its score (-inf).": _hide(*args, zero_vector=True),
        }
        for msg, wrong in mistakes.items():
            if close(out, wrong):
                raise ExerciseError(f"{what}: {msg}")
        raise ExerciseError(f"{what} returns a distribution, but not the right one (random x0 and weights, "
                            f"n = {n}, j = {j}). Steps: the scores s of the last query, s_j = -inf, a = softmax(s), "
                            "o_n = W_O v a, x1_n = x0_n + o_n, p = softmax(W_U x1_n).")
    return passed("hiding a token is right on 4 random contexts (2 to 8 tokens, the first token hidden too); "
                  "try it on the verse below.")


# --------------------------------------------------------------------------- notebook 04
@exercise(answered_by=("helpers.model.attention.scores", "helpers.model.attention.attention"))
def check_all_scores(fn) -> bool:
    """fn(x0 (d_model, n), W_Q, W_K (d_head, d_model)) -> scores (n, n) = q^T k / sqrt(d_head), no mask."""
    what = named(fn, "all_scores", "(x0, W_Q, W_K)")
    forbid = ("helpers.model.attention.scores", "helpers.model.attention.attention", FUSED)
    for seed, d_head, d_model, n in ((1, 3, 7, 4), (0, 4, 12, 5), (2, 6, 10, 1), (3, 5, 16, 9)):  # d_head 3 first
        x, W_Q, W_K, _, _ = _inputs(seed, None, d_head, d_model, n)
        q, k = W_Q @ x, W_K @ x
        right = q.T @ k / math.sqrt(d_head)
        out = as_tensor(call(fn, x.clone(), W_Q, W_K, what=what, forbid=forbid), what)
        if out.shape == (d_head, d_head) and d_head != n:
            raise ExerciseError(f"{what} is d_head x d_head: that is q k^T. The scores compare tokens, so they "
                                "are dot products of columns: q^T k, one row per query and one column per key.")
        expect_shape(out, (n, n), what, "one row per query i and one column per key j: (n, n).")
        if out.is_floating_point() and torch.isinf(out).any():
            raise ExerciseError(f"{what} contains -inf: no mask yet. This is every query against every key, "
                                "the future included; the next cells decide which entries may count.")
        out = expect_real(out, what)
        if close(out, right):
            continue
        if n > 1 and close(out, right.T):
            raise ExerciseError(f"{what} is transposed: row i must be query i (scores[i, j] = q_i^T k_j). "
                                "k^T q has the keys in the rows.")
        if n not in (1, d_head) and close(out, q.T @ k / math.sqrt(n)):
            raise ExerciseError(f"{what} divides by sqrt(n), the number of tokens: q.shape[1] is n, one column per "
                                "token. d_head is the number of rows, q.shape[0] (or W_Q.shape[0]).")
        guesses = {
            "did you forget to divide by sqrt(d_head)?": q.T @ k,
            "did you divide by sqrt(d_model) instead of sqrt(d_head)? The dot products are of "
            "d_head-dimensional vectors.": q.T @ k / math.sqrt(d_model),
            "did you divide by d_head instead of its square root?": q.T @ k / d_head,
            "did you use W_Q for the keys too? Keys are k = W_K x0.": q.T @ q / math.sqrt(d_head),
            "these are the weights A, after a softmax; the exercise asks for the scores S = q^T k / sqrt(d_head) "
            "themselves (the softmax comes in the next step, with the mask).": softmax(right, dim=-1),
            **{f"the scores are divided by the fixed number {c:g}, but here d_head = {d_head}: take d_head from "
               "the weights (W_Q.shape[0]) and divide by its square root.": q.T @ k / c
               for c in FIXED_SCALES if c not in (math.sqrt(d_head), d_head)},
        }
        for msg, wrong in guesses.items():
            if close(out, wrong):
                raise ExerciseError(f"{what}: {msg}")
        raise ExerciseError(f"{what} has the right shape but the wrong numbers (random x0, d_head = {d_head}, "
                            f"n = {n}): q = W_Q x0, k = W_K x0, scores = q^T k / sqrt(d_head).")
    return passed("the scores of every query against every key are right on 4 random contexts (1 to 9 tokens).")


def _masked(S: torch.Tensor, mask: torch.Tensor, fill: float = NEG_INF, dim: int = -1) -> torch.Tensor:
    return softmax(S.masked_fill(mask, fill), dim=dim)


@exercise(answered_by=("helpers.model.attention.attention",))  # softmax_star does only its middle step
def check_causal_attention(fn) -> bool:
    """fn(scores (n, n), v (d_head, n), W_O (d_model, d_head)) -> o (d_model, n): mask the future with -inf,
    softmax each row (A), r = v A^T, o = W_O r."""
    what = named(fn, "causal_attention", "(scores, v, W_O)")
    forbid = ("helpers.model.attention.softmax_star", "helpers.model.attention.attention", FUSED)
    for seed, d_head, d_model, n in ((0, 4, 9, 5), (1, 3, 10, 7), (2, 5, 8, 1), (3, 6, 11, 4)):
        g = torch.Generator().manual_seed(seed)
        S = torch.randn(n, n, generator=g) * 2
        v = torch.randn(d_head, n, generator=g)
        W_O = torch.randn(d_model, d_head, generator=g)
        future, past = att.causal_mask(n), torch.ones(n, n, dtype=torch.bool).tril(-1)
        A = att.softmax_star(S)
        out = as_tensor(call(fn, S.clone(), v.clone(), W_O, what=what, forbid=forbid), what)
        if out.shape == (d_head, n):
            raise ExerciseError(f"{what} has shape (d_head, n): that is the result r = v A^T. The output maps it "
                                "back to the residual stream: o = W_O r, (d_model, n).")
        if out.shape == (n, n):
            raise ExerciseError(f"{what} returned an (n, n) matrix — the pattern A? Go on: r = v A^T, o = W_O r.")
        expect_shape(out, (d_model, n), what, "o has one column per token: (d_model, n).")
        if torch.isnan(out).any():
            raise ExerciseError(f"{what} contains NaN: a whole row of scores became -inf (0/0 in the softmax). "
                                "Only keys *after* the query are hidden (j > i, strictly above the diagonal); "
                                "every token may look at itself, so keep the diagonal: triu(..., diagonal=1).")
        out = expect_real(out, what)
        if close(out, W_O @ v @ A.T):
            loop = python_loop(fn)
            if loop:
                raise ExerciseError(f"{what} gives the right numbers, but with a Python loop (`{loop}`). The "
                                    "point is the matrix form: mask, softmax and products on the whole (n, n) "
                                    "matrix at once, with no loop over the tokens.")
            continue
        guesses = {
            "nothing was masked — query i can see keys j > i, the future. Put -inf above the diagonal "
            "before the softmax.": softmax(S, dim=-1),
            "the mask points the wrong way — you hid the past (below the diagonal) and kept the future. Row i "
            "is query i; hide columns j > i.": _masked(S, past),
            "the softmax runs down the columns; each *row* (one query's weights over the keys) must sum to 1: "
            "softmax over dim=-1.": _masked(S, future, dim=0),
            "the masked entries were set to 0, but exp(0) = 1 still gives them weight. Pad with -inf "
            "(exp(-inf) = 0), as softmax([1, 2, P]) showed.": _masked(S, future, fill=0.0),
            "you zeroed the future *after* the softmax, so the rows no longer sum to 1. Mask the scores with "
            "-inf first, then take the softmax.": softmax(S, dim=-1).masked_fill(future, 0.0),
            "the mask also hides the diagonal (j >= i), so a query cannot see itself, and the first query sees "
            "nothing: with a large negative number instead of -inf its row became an even average instead of "
            "NaN. Hide only j > i: triu(..., diagonal=1).": _masked(S, torch.ones(n, n, dtype=torch.bool).triu(0),
                                                                     fill=-1e9),
        }
        for msg, wrong_A in guesses.items():
            if close(out, W_O @ v @ wrong_A.T):
                raise ExerciseError(f"{what}: {msg}")
        if n > 1 and close(out, W_O @ v @ A):
            raise ExerciseError(f"{what}: rows and columns are swapped in r. Token i's result is "
                                "r_i = sum_j a_ij v_j, which uses *row* i of A: r = v A^T, not v A.")
        raise ExerciseError(f"{what} has the right shape but the wrong numbers (random scores, n = {n}): "
                            "scores[i, j] = -inf for j > i, A = softmax of each row, r = v A^T, o = W_O r.")
    return passed("causal attention is right on 4 random score matrices (1 to 7 tokens): the future gets "
                  "weight 0, every row sums to 1.")
