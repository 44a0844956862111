"""Exercises of notebook 05: a whole multi-head attention layer without a loop over its heads, a head
switched off by hand (a zero ablation), and one head's output patched from a clean run into a corrupted one
(activation patching), each measured against the model on texts the notebook never shows."""

from __future__ import annotations

import functools
import math

import torch
from torch.overrides import TorchFunctionMode

from helpers.checks.attention import python_loop
from helpers.checks.base import (ExerciseError, as_tensor, call, close, exercise, named, expect_real, expect_shape,
                                 number_result, passed)
from helpers.model import attention as att
from helpers.model import names
from helpers.softmax import softmax


def _layer(x, W_Q, W_K, W_V, W_O, *, scale=None, mask=True, transpose_A=False):
    """o^h for every head (H, d_model, n), or one of the usual mistakes."""
    return W_O @ _results(x, W_Q, W_K, W_V, scale=scale, mask=mask, transpose_A=transpose_A)


def _results(x, W_Q, W_K, W_V, *, scale=None, mask=True, transpose_A=False, over_queries=False):
    """r^h for every head (H, d_head, n)."""
    q, k, v = W_Q @ x, W_K @ x, W_V @ x
    S = q.mT @ k / (math.sqrt(W_Q.shape[-2]) if scale is None else scale)
    if over_queries:                                   # the softmax down each column (dim -2) instead of each row
        A = softmax(S.masked_fill(att.causal_mask(S.shape[-1]), -math.inf), dim=-2)
    else:
        A = att.softmax_star(S, mask=mask)
    return v @ (A if transpose_A else A.mT)


_T_ON_3D = "On (H, d_head, n) tensors .T reverses every axis; to swap the last two (q^T per head) use .mT or " \
          "transpose(-2, -1)."
LAYER_HINTS = {"must match the size": _T_ON_3D, "cannot be multiplied": _T_ON_3D}   # torch's two wordings
LAYER_CASES = ((0, 4, 4, 16, 6), (1, 3, 5, 12, 7), (2, 1, 8, 8, 5), (3, 2, 3, 10, 1))  # seed, H, d_head, d_model, n


class _Counting(TorchFunctionMode):
    """Counts the torch operations run inside the block (every torch function and tensor method, once each)."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls += 1
        return func(*args, **(kwargs or {}))


def _operations(fn, what: str, forbid: tuple[str, ...], H: int, n: int) -> int:
    """How many torch operations fn runs on a random layer of H heads and n tokens (d_head 3, d_model 10)."""
    g = torch.Generator().manual_seed(50)
    W_Q, W_K, W_V = (torch.randn(H, 3, 10, generator=g) / 2 for _ in range(3))
    W_O, x = torch.randn(H, 10, 3, generator=g), torch.randn(10, n, generator=g)
    counting = _Counting()

    @functools.wraps(fn)
    def counted(*args):      # the learner's function alone: not the check's own bookkeeping around the call
        with counting:
            return fn(*args)
    call(counted, x, W_Q, W_K, W_V, W_O, what=what, forbid=forbid, hints=LAYER_HINTS)
    return counting.calls


def _grows(fn, what: str, forbid: tuple[str, ...]) -> str | None:
    """The usual slip of a right answer that the source does not show (a loop over a zip of its own tensors, or in a
    function it calls): its work grows with the number of heads, or of tokens. A layer computed in one pass runs
    the same operations whatever H and n are; a loop runs its body once per head (or token)."""
    base = _operations(fn, what, forbid, H=1, n=4)
    more_heads, more_tokens = _operations(fn, what, forbid, H=4, n=4), _operations(fn, what, forbid, H=1, n=8)
    if more_heads > base:
        return (f"{what} gives the right numbers, but its work grows with the number of heads: it runs {base} torch "
                f"operations for a layer of 1 head and {more_heads} for 4 heads (the same 4 tokens) — a Python loop "
                "over the heads, perhaps in a comprehension, a zip, or a function it calls. Carry the head dimension "
                "with broadcasting (W_Q @ x0 is (H, d_head, n)) or torch.einsum instead, so one pass computes every "
                "head.")
    if more_tokens > base:
        return (f"{what} gives the right numbers, but its work grows with the number of tokens: it runs {base} torch "
                f"operations for 4 tokens and {more_tokens} for 8 — a Python loop over the positions. Compute every "
                "query's scores at once (one (n, n) matrix per head) and mask them with softmax*, as in exercise 4.2.")
    return None


@exercise(answered_by=("helpers.model.attention.attention",))
def check_attention_layer(fn) -> bool:
    """fn(x0 (d_model, n), W_Q, W_K, W_V (H, d_head, d_model), W_O (H, d_model, d_head)) -> o (d_model, n),
    the sum of the heads' outputs with the causal mask on."""
    what = named(fn, "attention_layer", "(x0, W_Q, W_K, W_V, W_O)")
    forbid = ("helpers.model.attention.attention", "helpers.model.attention.concat_output",
                       "helpers.model.attention.single_query", "torch.nn.functional.scaled_dot_product_attention")
    for seed, H, d_head, d_model, n in LAYER_CASES:
        g = torch.Generator().manual_seed(seed)
        W_Q, W_K, W_V = (torch.randn(H, d_head, d_model, generator=g) / 2 for _ in range(3))
        W_O = torch.randn(H, d_model, d_head, generator=g)
        x = torch.randn(d_model, n, generator=g)
        o_heads = _layer(x, W_Q, W_K, W_V, W_O)
        right = o_heads.sum(0)
        out = as_tensor(call(fn, x.clone(), W_Q, W_K, W_V, W_O, what=what, forbid=forbid, hints=LAYER_HINTS), what)
        if out.shape == (H, d_model, n) and H > 1:
            raise ExerciseError(f"{what} returned one output per head (H, d_model, n); the layer's output is "
                                "their sum, o = sum_h W_O^h r^h (d_model, n).")
        expect_shape(out, (d_model, n), what, "o lives in the residual stream: (d_model, n).")
        if out.is_floating_point() and bool(torch.isnan(out).any()) and n > 1:
            raise ExerciseError(f"{what} contains NaN: a softmax over entries that are all -inf (0/0). Either the "
                                "mask also hides the diagonal, so the first query has no key left (every token may "
                                "look at itself: hide only j > i, triu(..., diagonal=1), as in exercise 4.2), or "
                                "the softmax runs over the wrong axis; it runs over the keys, dim -1.")
        out = expect_real(out, what)
        if close(out, right):
            loop = python_loop(fn)
            if loop:
                raise ExerciseError(f"{what} gives the right numbers, but with a Python loop (`{loop}`). Carry "
                                    "the head dimension with broadcasting (W_Q @ x0 is (H, d_head, n)) or "
                                    "torch.einsum instead, so one pass computes every head.")
            continue
        guesses = [
            (H > 1, "you averaged the heads; each head writes into the residual stream and their outputs are "
                    "added: o = sum_h o^h.", right / H),
            (True, "this is x1 = x0 + o; the exercise asks for the layer's output o alone.", x + right),
            (n > 1, "the causal mask is missing: query i sees keys j > i. Use softmax* (−inf above the "
                    "diagonal) for every head.", _layer(x, W_Q, W_K, W_V, W_O, mask=False).sum(0)),
            (True, "did you forget to divide the scores by sqrt(d_head)?",
             _layer(x, W_Q, W_K, W_V, W_O, scale=1.0).sum(0)),
            (True, "did you divide by sqrt(d_model)" + (" (= sqrt(H d_head) here)" if H * d_head == d_model else "")
             + " instead of sqrt(d_head)? Each head's dot products have d_head terms.",
             _layer(x, W_Q, W_K, W_V, W_O, scale=math.sqrt(d_model)).sum(0)),
            (True, "the patterns are right, but the values come from W_K: what a head moves is v^h = W_V^h x0.",
             _layer(x, W_Q, W_K, W_K, W_O).sum(0)),
            (H > 1, "W_O was reshaped to (d_model, H * d_head) without moving the head axis first: "
                    "W_O.reshape(...) on an (H, d_model, d_head) tensor mixes heads and rows. The big W_O puts "
                    "the heads' blocks side by side: W_O.permute(1, 0, 2).reshape(d_model, H * d_head), or sum "
                    "W_O^h r^h over h.",
             W_O.reshape(d_model, H * d_head) @ _results(x, W_Q, W_K, W_V).reshape(H * d_head, n)),
            (n > 1, "the softmax runs down each column (over the queries, dim -2); each *row* — one query's "
                    "weights over the keys — must sum to 1: softmax over dim -1.",
             (W_O @ _results(x, W_Q, W_K, W_V, over_queries=True)).sum(0)),
            (n > 1, "rows and columns of A are swapped: r^h = v^h (A^h)^T, because token i's result uses row i "
                    "of A (in einsum: A's *first* index is the query, the same index as r's column).",
             _layer(x, W_Q, W_K, W_V, W_O, transpose_A=True).sum(0)),
        ]
        for applies, msg, wrong in guesses:
            if applies and close(out, wrong):
                raise ExerciseError(f"{what}: {msg}")
        raise ExerciseError(f"{what} has the right shape but the wrong numbers (random weights, H = {H}, "
                            f"d_head = {d_head}, d_model = {d_model}, n = {n}). Per head: q, k, v = W x0, "
                            "A = softmax*(q^T k / sqrt(d_head)), r = v A^T, o^h = W_O r; then sum over h.")
    grows = _grows(fn, what, forbid)
    if grows:
        raise ExerciseError(grows)
    return passed(f"the layer is right on {len(LAYER_CASES)} random layers (1 to 4 heads, d_head 3 to 8, "
                  "1 to 7 tokens).")


def _texts(n_vocab: int, n_ctx: int) -> list[torch.Tensor]:
    """Random texts of a few lengths (not the notebook's sentences)."""
    g = torch.Generator().manual_seed(5)
    return [torch.randint(0, n_vocab, (n,), generator=g) for n in (3, 7, min(12, n_ctx), 2, 9)]


def _near(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-8 + 2e-4 * abs(b)


@exercise(answered_by=("helpers.interp.ablation.ablated",))
def check_prob_without_head(fn, model) -> bool:
    """fn(model, ids (n,), h, target) -> p(target) after the last token with head h of the one-layer model
    switched off (o^h := 0, a zero ablation)."""
    what = named(fn, "prob_without_head", "(model, ids, h, target)")
    forbid = ("helpers.interp.ablation.ablated", "helpers.interp.attribution.direct_logit_attribution")
    # the learner's function first: an unfilled copy says "not written yet" whatever `model` is
    call(fn, model, torch.tensor([1, 2, 3]), 0, 0, what=what, forbid=forbid)
    if model is None or not hasattr(model, "run_with_cache"):
        raise ExerciseError(f"{what}: the check needs the trained one-layer model as its second argument: "
                            f"checks.check_prob_without_head({named(fn, 'prob_without_head')}, model).")
    H, W_U = model.cfg.n_heads, model.unembed.W_U.detach()
    texts = _texts(model.cfg.n_vocab, model.cfg.n_ctx)
    for case, ids in enumerate(texts):
        h = (case + 1) % H
        _, cache = model.run_with_cache(ids)
        x0_n, x1_n, o_heads = cache["x0"][:, -1], cache["x1"][:, -1], cache[names.key(0, "o_heads")][:, :, -1]
        if case % 2:   # a random word, or the model's own favourite
            target = int(torch.randint(0, model.cfg.n_vocab, (1,), generator=torch.Generator().manual_seed(case)))
        else:
            target = int((W_U @ x1_n).argmax())

        def prob(x):
            return float(softmax(W_U @ x, dim=0)[target])

        out = call(fn, model, ids.clone(), h, target, what=what, forbid=forbid)
        if isinstance(out, torch.Tensor) and out.numel() == model.cfg.n_vocab:
            raise ExerciseError(f"{what} returned the whole distribution ({tuple(out.shape)}); return one number, "
                                "the probability of `target`: p[target].")
        p = number_result(out, what)
        right = prob(x1_n - o_heads[h])
        if _near(p, right):
            continue
        if not 0 <= p <= 1:
            if p < 0 and _near(p, math.log(right)):
                raise ExerciseError(f"{what} returned {p:.4g}: that is ln p, a log-probability (log_softmax). "
                                    "Return the probability itself, p = softmax(W_U x1_n)[target].")
            raise ExerciseError(f"{what} returned {p:.4g}, which is not a probability. Did you return a logit? "
                                "p = softmax(W_U x1_n) over the vocabulary, then take entry `target`.")
        wrong = {
            "nothing changed: that is the model's own probability. Remove head h's output o^h from the "
            "residual stream before the unembedding: x1_n - o^h_n.": prob(x1_n),
            "you removed every head (x0_n alone); switch off only head h: x1_n - o^h_n.": prob(x0_n),
            "you kept only head h (x0_n + o^h_n); remove it instead and keep the others.": prob(x0_n + o_heads[h]),
            "that is the prediction at the *first* position; the next token is predicted at the last one, "
            "column n of x1.": prob(cache["x1"][:, 0] - cache[names.key(0, "o_heads")][h, :, 0]),
        }
        for g in range(H):
            if g != h:
                wrong.setdefault(f"you switched off head {g}, not head {h}: o_heads[h] is head h's output "
                                 "(heads count from 0).", prob(x1_n - o_heads[g]))
        for msg, value in wrong.items():
            if _near(p, value):
                raise ExerciseError(f"{what}: {msg}")
        raise ExerciseError(f"{what} returned {p:.4g}, but with head {h} off the model gives {right:.4g} "
                            f"(a random text of {len(ids)} tokens, target id {target}). Set o^h := 0 in "
                            "x1 = x0 + sum_h o^h, then p = softmax(W_U x1_n)[target].")
    return passed(f"your ablation matches the model with one head switched off on {len(texts)} random texts "
                  "this notebook never shows.")


PATCHING_HELPERS = ("helpers.interp.patching.restored", "helpers.interp.patching.patched",
                    "helpers.interp.patching.patch_heads", "helpers.interp.patching.patch_resid")


def _near_fraction(a: float, b: float) -> bool:
    """Fractions restored agree: the helper patches inside a full forward pass, an answer usually from the cache;
    a small clean - corrupted difference magnifies their rounding (measured: up to 6e-4 relative)."""
    return abs(a - b) <= 2e-3 + 2e-3 * abs(b)


def _prompt_pairs(n_vocab: int, n_ctx: int) -> list[tuple[torch.Tensor, torch.Tensor, int]]:
    """(clean, corrupted, changed position): random texts of a few lengths, the corrupted one with one token
    changed (never the notebook's prompts)."""
    g = torch.Generator().manual_seed(11)
    pairs = []
    for n in (6, 3, min(11, n_ctx), 8):
        clean = torch.randint(0, n_vocab, (n,), generator=g)
        at = int(torch.randint(0, n - 1, (1,), generator=g))  # a word before the last, as in the notebook
        corrupted = clean.clone()
        corrupted[at] = (clean[at] + 1 + int(torch.randint(0, n_vocab - 1, (1,), generator=g))) % n_vocab
        pairs.append((clean, corrupted, at))
    return pairs


@exercise(answered_by=PATCHING_HELPERS)
def check_restored_by_head(fn, model) -> bool:
    """fn(model, clean (n,), corrupted (n,), h, right, wrong) -> the fraction of the logit difference
    logit(right) - logit(wrong) at the last position that head h's output, copied from the clean run into the
    corrupted run, brings back: (patched - corrupted) / (clean - corrupted). One-layer model: the unembedding is
    the only reader of a head's output. Compared with helpers.interp.patching.restored on random prompt pairs."""
    from helpers.interp.patching import logit_difference, restored

    what = named(fn, "restored_by_head", "(model, clean, corrupted, h, right, wrong)")
    # the learner's function first: an unfilled copy says "not written yet" whatever `model` is
    call(fn, model, torch.tensor([1, 2, 3]), torch.tensor([1, 4, 3]), 0, 0, 1, what=what, forbid=PATCHING_HELPERS)
    if model is None or not hasattr(model, "run_with_cache") or model.cfg.n_layers != 1:
        raise ExerciseError(f"{what}: the check needs the trained one-layer model (attn1) as its second argument: "
                            f"checks.check_restored_by_head({named(fn, 'restored_by_head')}, model).")
    H, V, W_U = model.cfg.n_heads, model.cfg.n_vocab, model.unembed.W_U.detach()
    cases = 0
    for clean, corrupted, at in _prompt_pairs(V, model.cfg.n_ctx):
        _, K = model.run_with_cache(clean)
        _, C = model.run_with_cache(corrupted)
        xK, xC = K["x1"][:, -1], C["x1"][:, -1]
        oK, oC = K[names.key(0, "o_heads")][:, :, -1], C[names.key(0, "o_heads")][:, :, -1]   # (H, d_model)
        # the two words whose logits the changed token moves most apart: a clear clean - corrupted difference
        moved = W_U @ (xK - xC)  # (n_vocab,)
        right, wrong = int(moved.argmax()), int(moved.argmin())

        def diff(x, log=True):
            s = W_U @ x if log else softmax(W_U @ x, dim=0)
            return float(s[right] - s[wrong])

        def frac(patched_x, log=True):
            return (diff(patched_x, log) - diff(xC, log)) / (diff(xK, log) - diff(xC, log))

        # the head whose share is farthest from 0, 1/2 and 1: then no usual mistake gives the right number by chance
        shares = [restored(model, clean, corrupted, names.head(0, g), logit_difference(right, wrong)) for g in range(H)]
        h = max(range(H), key=lambda g: min(abs(shares[g]), abs(1 - shares[g]), abs(0.5 - shares[g])))
        answer = shares[h]
        out = call(fn, model, clean.clone(), corrupted.clone(), h, right, wrong, what=what, forbid=PATCHING_HELPERS)
        if isinstance(out, torch.Tensor) and out.numel() > 1:
            raise ExerciseError(f"{what} returned a tensor of shape {tuple(out.shape)}; return one number, the "
                                "fraction restored.")
        got = number_result(out, what)
        if _near_fraction(got, answer):
            cases += 1
            continue
        patched_x = xC - oC[h] + oK[h]
        wrong_answers = {
            "the sign is flipped: restored = (patched - corrupted) / (clean - corrupted), positive when the patch "
            "moves the corrupted run towards the clean one.": -answer,
            "that is 1 minus the fraction: it measures what the patch leaves missing. restored = "
            "(patched - corrupted) / (clean - corrupted).": 1 - answer,
            "that is the change of the logit difference, not yet a fraction: divide it by clean - corrupted.":
                diff(patched_x) - diff(xC),
            "that is the patched run's logit difference itself; the fraction compares it with both runs: "
            "(patched - corrupted) / (clean - corrupted).": diff(patched_x),
            "you added the clean run's o^h on top of the corrupted run's: replace it instead, "
            "x1_n - o^h_n(corrupted) + o^h_n(clean).": frac(xC + oK[h]),
            "you measured with probabilities, p(right) - p(wrong); the metric is the logit difference, "
            "logit(right) - logit(wrong), where the heads' outputs add up.": frac(patched_x, log=False),
            "you copied the clean run's whole stream x1 (or the layer's whole output o), not only head h's output "
            "o^h: that brings back everything (1 for every head).": 1.0,
        }
        for g in range(H):
            if g != h:
                wrong_answers.setdefault(f"you patched head {g}, not head {h} (heads count from 0).",
                                         frac(xC - oC[g] + oK[g]))
        for msg, value in wrong_answers.items():
            if _near_fraction(got, value):
                raise ExerciseError(f"{what} gives {got:.4g}: {msg}")
        raise ExerciseError(f"{what} gives {got:.4g} where patching head {h} restores {answer:.4g} (a random text of "
                            f"{len(clean)} tokens, token {at + 1} changed, right id {right}, wrong id {wrong}). Run "
                            "both prompts with the cache; in the corrupted run's x1 at the last position replace "
                            "o^h by the clean run's; logit(right) - logit(wrong) of W_U x; then "
                            "(patched - corrupted) / (clean - corrupted).")
    return passed(f"your patching matches helpers.interp.patching on {cases} random pairs of prompts this notebook "
                  "never shows (one token changed; each time the head whose share is farthest from 0, 1/2 and 1).")
