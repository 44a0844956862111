"""The exercise checks of notebooks 03-05 accept right answers, name the usual wrong ones, explain bad
input in one sentence, and refuse a function that hands the work to the helper the exercise hides."""

import math

import pytest
import torch

from helpers import checks
from helpers.checks import attention as att_checks
from helpers.checks.base import ExerciseError
from helpers.interp.ablation import ablated
from helpers.model import attention as att
from helpers.model import checkpoint
from helpers.model import names
from helpers.model.hooks import hooked


def todo(*args):
    raise NotImplementedError


# ----------------------------------------------------------------- single query (nb03, 3.1)
def sq_right(x, W_Q, W_K, W_V, W_O):
    d_head = W_Q.shape[0]
    q_n, k, v = W_Q @ x[:, -1:], W_K @ x, W_V @ x
    return W_O @ (v @ torch.softmax((q_n.T @ k)[0] / math.sqrt(d_head), 0)[:, None])


def sq_scaled(scale):
    def fn(x, W_Q, W_K, W_V, W_O):
        q_n, k, v = W_Q @ x[:, -1:], W_K @ x, W_V @ x
        a = torch.softmax((q_n.T @ k)[0] / scale(W_Q), 0)
        return W_O @ (v @ a[:, None])
    return fn


def sq_first_query(x, W_Q, W_K, W_V, W_O):
    q, k, v = W_Q @ x[:, :1], W_K @ x, W_V @ x
    return W_O @ (v @ torch.softmax((q.T @ k)[0] / math.sqrt(W_Q.shape[0]), 0)[:, None])


def test_single_query_right_answers_pass(capsys):
    assert checks.check_single_query(sq_right)
    assert checks.check_single_query(lambda *a: sq_right(*a)[:, 0])          # a flat (d_model,) vector is fine
    assert "✔" in capsys.readouterr().out


@pytest.mark.parametrize("fn, message", [
    (sq_scaled(lambda W: math.sqrt(W.shape[1])), r"sqrt\(d_model\) instead of sqrt\(d_head\)"),
    (sq_scaled(lambda W: 1.0), "forget to divide"),
    (sq_scaled(lambda W: W.shape[0]), "instead of its square root"),
    (lambda x, W_Q, W_K, W_V, W_O: att.single_query(x, W_Q, W_K, W_V, W_O).o_n.clone(), "calls .*single_query"),
    (lambda x, W_Q, W_K, W_V, W_O: x[:, -1:] + sq_right(x, W_Q, W_K, W_V, W_O), "x1_n = x0_n \\+ o_n"),
    (lambda x, W_Q, W_K, W_V, W_O: W_O @ (W_V @ x).mean(1, keepdim=True), "same weight 1/n"),
    (sq_first_query, "first"),
    (lambda x, W_Q, W_K, W_V, W_O: W_O @ (W_V @ x) @ ((W_Q @ x[:, -1:]).T @ (W_K @ x) / math.sqrt(W_Q.shape[0])).T,
     "uses the raw scores"),
    (sq_scaled(lambda W: 8.0), "fixed number 8"),                         # sqrt(64), written in
    (sq_scaled(lambda W: 4.0), "fixed number 4"),
    (lambda x, W_Q, W_K, W_V, W_O: W_O @ (W_V @ x) @ torch.softmax((W_Q @ x[:, -1:]).T @ (W_K @ x)
                                                                   / math.sqrt(W_Q.shape[0]), 0).T,
     "every weight came out as 1"),                                        # softmax over the (1, n) scores' dim 0
    (lambda x, W_Q, W_K, W_V, W_O: sq_right(x, W_Q, W_K, W_K, W_O), "values come from W_K"),
    (lambda *a: torch.zeros(3, 3), "shape"),
    (lambda x, *a: torch.zeros(x.shape[0], 1), "wrong numbers"),
    (lambda x, *a: torch.full((x.shape[0], 1), float("nan")), "NaN"),
    (lambda x, *a: torch.zeros(x.shape[0], 1, dtype=torch.long), "dtype"),
    (lambda *a: None, "None"),
    (todo, "not written yet"),
    (lambda *a: 1 / 0, "ZeroDivisionError"),
])
def test_single_query_mistakes_are_named(fn, message):
    with pytest.raises(ExerciseError, match=message):
        checks.check_single_query(fn)


def test_single_query_result_without_W_O_is_named():
    def no_WO(x, W_Q, W_K, W_V, W_O):
        return sq_right(x, W_Q, W_K, W_V, torch.eye(W_Q.shape[0]))      # r_n: W_O left out
    with pytest.raises(ExerciseError, match="W_O r_n"):
        checks.check_single_query(no_WO)


# ----------------------------------------------------------------- a token hidden (nb03, 3.2)
def hide(fill=float("-inf"), after=False, resid=True, zero_vector=False, shift=0, flat=True):
    def fn(x0, j, W_Q, W_K, W_V, W_O, W_U):
        p = att_checks._hide(x0, j + shift, W_Q, W_K, W_V, W_O, W_U, fill=fill, after=after, resid=resid,
                             zero_vector=zero_vector)
        return p if flat else p[:, None]
    return fn


def hide_with_a_row_of_scores(index_row=False, dim=1):
    """The scores kept as the (1, n) row q^T k: right only with s[0, j] and a softmax over dim 1."""
    def fn(x0, j, W_Q, W_K, W_V, W_O, W_U):
        s = (W_Q @ x0[:, -1:]).T @ (W_K @ x0) / math.sqrt(W_Q.shape[0])
        if index_row:
            s[j] = float("-inf")
        else:
            s[0, j] = float("-inf")
        o_n = W_O @ (W_V @ x0) @ torch.softmax(s, dim=dim).T
        return torch.softmax(W_U @ (x0[:, -1:] + o_n), dim=0)
    return fn


def hide_by_dropping_the_column(x0, j, W_Q, W_K, W_V, W_O, W_U):
    """Another right answer: leave token j out of the keys and values altogether."""
    keep = [i for i in range(x0.shape[1]) if i != j]
    o_n = att.single_query(x0[:, keep], W_Q, W_K, W_V, W_O).o_n
    return torch.softmax(W_U @ (x0[:, -1:] + o_n), dim=0)


@pytest.mark.parametrize("fn", [hide(), hide(flat=False), hide_by_dropping_the_column, hide_with_a_row_of_scores()])
def test_hide_token_right_answers_pass(fn):
    assert checks.check_hide_token(fn)


@pytest.mark.parametrize("fn, message", [
    (hide(fill=0.0), r"exp\(0\) = 1"),
    (hide(after=True), "no longer sum to 1"),
    (hide(resid=False), "residual add is missing"),
    (hide(zero_vector=True), "zeroing token j's vector"),
    (hide(shift=1), r"hid token \d+ instead of token \d+"),
    (hide_with_a_row_of_scores(index_row=True), r"index token j as s\[0, j\]"),
    (hide_with_a_row_of_scores(dim=0), r"softmax\(dim=0\) takes each score alone"),
    (lambda x0, j, W_Q, W_K, W_V, W_O, W_U: hide()(x0, x0.shape[1] - 1, W_Q, W_K, W_V, W_O, W_U),
     "not the right one"),
    (lambda x0, j, W_Q, W_K, W_V, W_O, W_U: torch.softmax(
        W_U @ (x0[:, -1:] + att.single_query(x0, W_Q, W_K, W_V, W_O).o_n), 0), "nothing was hidden"),
    (lambda x0, j, W_Q, W_K, W_V, W_O, W_U: torch.log(hide()(x0, j, W_Q, W_K, W_V, W_O, W_U)), "sum to 1"),
    (lambda x0, *a: torch.ones(x0.shape[0]), "shape"),
    (lambda *a: "p", "should return a tensor"),
    (todo, "not written yet"),
])
def test_hide_token_mistakes_are_named(fn, message):
    with pytest.raises(ExerciseError, match=message):
        checks.check_hide_token(fn)


# ----------------------------------------------------------------- every score (nb04, 4.1)
def scores(scale=None, transpose=False, keys=None):
    def fn(x0, W_Q, W_K):
        q, k = W_Q @ x0, (W_K if keys is None else keys(W_Q, W_K)) @ x0
        S = q.mT @ k / (math.sqrt(W_Q.shape[0]) if scale is None else scale(W_Q))
        return S.mT if transpose else S
    return fn


def test_all_scores_right_answer_passes():
    assert checks.check_all_scores(scores())


def test_all_scores_refuses_the_scores_helper():
    """Notebook 04 takes the verse's scores from att.scores (below the exercise): the check must not pass a call."""
    x, W_Q, W_K = torch.randn(7, 4), torch.randn(3, 7), torch.randn(3, 7)
    torch.testing.assert_close(att.scores(W_Q @ x, W_K @ x), (W_Q @ x).T @ (W_K @ x) / math.sqrt(3))
    with pytest.raises(ExerciseError, match="calls helpers.model.attention.scores, which"):
        checks.check_all_scores(lambda x0, W_Q, W_K: att.scores(W_Q @ x0, W_K @ x0))
    with pytest.raises(ValueError, match="same d_head"):
        att.scores(torch.randn(3, 4), torch.randn(2, 4))


@pytest.mark.parametrize("fn, message", [
    (scores(transpose=True), "transposed"),
    (scores(scale=lambda W: 1.0), "forget to divide"),
    (scores(scale=lambda W: math.sqrt(W.shape[1])), r"sqrt\(d_model\)"),
    (scores(scale=lambda W: W.shape[0]), "instead of its square root"),
    (scores(keys=lambda W_Q, W_K: W_Q), "W_Q for the keys"),
    (scores(scale=lambda W: 4.0), "fixed number 4"),                     # sqrt(16), written in
    (lambda x0, W_Q, W_K: torch.softmax(scores()(x0, W_Q, W_K), -1), "weights A, after a softmax"),
    (lambda x0, W_Q, W_K: (W_Q @ x0) @ (W_K @ x0).mT, "q k\\^T"),
    (lambda x0, W_Q, W_K: scores()(x0, W_Q, W_K).masked_fill(att.causal_mask(x0.shape[1]), float("-inf")),
     "no mask yet"),
    (lambda x0, W_Q, W_K: att.attention(x0, W_Q, W_K, W_Q, W_Q.mT, mask=False).S[0], "calls .*attention"),
    (lambda x0, W_Q, W_K: scores()(x0, W_Q, W_K) + 1, "wrong numbers"),
    (lambda x0, W_Q, W_K: scores()(x0, W_Q, W_K)[:, 1:], "one row per query i and one column per key j"),
    (todo, "not written yet"),
])
def test_all_scores_mistakes_are_named(fn, message):
    with pytest.raises(ExerciseError, match=message):
        checks.check_all_scores(fn)


# ----------------------------------------------------------------- causal attention (nb04, 4.2)
def causal(mask=lambda n: torch.ones(n, n, dtype=torch.bool).triu(1), fill=float("-inf"), dim=-1, after=False,
           swap=False, stop_at_r=False):
    def fn(S, v, W_O):
        m = mask(S.shape[-1])
        A = torch.softmax(S, -1).masked_fill(m, 0.0) if after else torch.softmax(S.masked_fill(m, fill), dim)
        r = v @ (A if swap else A.T)
        return r if stop_at_r else W_O @ r
    return fn


def test_causal_attention_right_answer_passes():
    assert checks.check_causal_attention(causal())


@pytest.mark.parametrize("fn, message", [
    (causal(mask=lambda n: torch.ones(n, n, dtype=torch.bool).triu(0)), "keep the diagonal"),
    (causal(mask=lambda n: torch.ones(n, n, dtype=torch.bool).triu(0), fill=-1e9), r"also hides the diagonal"),
    (causal(fill=-1e9), None),                                        # -1e9 with the right mask: right
    (causal(mask=lambda n: torch.zeros(n, n, dtype=torch.bool)), "nothing was masked"),
    (causal(mask=lambda n: torch.ones(n, n, dtype=torch.bool).tril(-1)), "wrong way"),
    (causal(dim=0), "columns"),
    (causal(fill=0.0), r"exp\(0\) = 1"),
    (causal(after=True), r"after\* the softmax"),
    (causal(swap=True), r"r = v A\^T, not v A"),
    (causal(stop_at_r=True), "that is the result r"),
    (lambda S, v, W_O: torch.softmax(S, -1), r"\(n, n\) matrix"),
    (lambda S, v, W_O: W_O @ v @ att.softmax_star(S).T, "calls .*softmax_star"),
    (lambda S, v, W_O: W_O @ v, "wrong numbers"),
    (lambda S, v, W_O: causal()(S, v, W_O).T, "o has one column per token"),
    (todo, "not written yet"),
])
def test_causal_attention_mistakes_are_named(fn, message):
    if message is None:
        assert checks.check_causal_attention(fn)
        return
    with pytest.raises(ExerciseError, match=message):
        checks.check_causal_attention(fn)


# ----------------------------------------------------------------- a layer in one einsum (nb05, 5.1)
def layer(mask=True, reduce=lambda o: o.sum(0), scale=None, swap=False, add_x=False, diagonal=1, dim=-1):
    def fn(x0, W_Q, W_K, W_V, W_O):
        q = torch.einsum("hdm,mn->hdn", W_Q, x0)
        k = torch.einsum("hdm,mn->hdn", W_K, x0)
        v = torch.einsum("hdm,mn->hdn", W_V, x0)
        S = torch.einsum("hdi,hdj->hij", q, k) / (math.sqrt(W_Q.shape[1]) if scale is None else scale(W_Q))
        if mask:
            S = S.masked_fill(torch.ones(S.shape[-2:], dtype=torch.bool).triu(diagonal), float("-inf"))
        A = torch.softmax(S, dim=dim)
        r = torch.einsum("hdj,hij->hdi", v, A.mT if swap else A)
        o = reduce(torch.einsum("hmd,hdn->hmn", W_O, r))
        return x0 + o if add_x else o
    return fn


def layer_r(x0, W_Q, W_K, W_V):
    q, k, v = W_Q @ x0, W_K @ x0, W_V @ x0
    return v @ att.softmax_star(q.mT @ k / math.sqrt(W_Q.shape[1])).mT


def layer_broadcast(x0, W_Q, W_K, W_V, W_O):
    q, k, v = (W @ x0 for W in (W_Q, W_K, W_V))          # a loop over the three weights, not the heads: fine
    return (W_O @ v @ att.softmax_star(q.mT @ k / math.sqrt(W_Q.shape[1])).mT).sum(0)


def one_head(x0, W_Q, W_K, W_V, W_O):
    """o^h of one head: W_Q (d_head, d_model)."""
    return W_O @ (W_V @ x0) @ att.softmax_star((W_Q @ x0).T @ (W_K @ x0) / math.sqrt(W_Q.shape[0])).T


def layer_loop(x0, W_Q, W_K, W_V, W_O):
    return sum(one_head(x0, W_Q[h], W_K[h], W_V[h], W_O[h]) for h in range(len(W_Q)))


def layer_loop_over_weights(x0, W_Q, W_K, W_V, W_O):
    return sum(one_head(x0, *W) for W in zip(W_Q, W_K, W_V, W_O))


def test_attention_layer_right_answers_pass():
    assert checks.check_attention_layer(layer())
    assert checks.check_attention_layer(layer_broadcast)


@pytest.mark.parametrize("fn", [layer_loop, layer_loop_over_weights])
def test_attention_layer_refuses_a_loop_over_the_heads(fn):
    with pytest.raises(ExerciseError, match="right numbers, but with a Python loop"):
        checks.check_attention_layer(fn)


# Loops the source of the function does not show: both passed the check before it counted the operations run.
def layer_zip_of_projections(x0, W_Q, W_K, W_V, W_O):
    q, k, v = W_Q @ x0, W_K @ x0, W_V @ x0            # every head at once, then one head at a time after all
    heads = zip(q, k, v, W_O)
    return sum(W_o @ v_h @ att.softmax_star(q_h.T @ k_h / math.sqrt(q_h.shape[0])).T for q_h, k_h, v_h, W_o in heads)


def _every_head(x0, W_Q, W_K, W_V, W_O):
    return sum(one_head(x0, W_Q[h], W_K[h], W_V[h], W_O[h]) for h in range(W_Q.shape[0]))


def layer_loop_in_a_helper(x0, W_Q, W_K, W_V, W_O):
    return _every_head(x0, W_Q, W_K, W_V, W_O)


def _softmax_row_by_row(S):
    """softmax* one query at a time: row i over keys 0..i, zeros after."""
    n = S.shape[-1]
    return torch.stack([torch.cat([torch.softmax(S[..., i, : i + 1], -1), S.new_zeros(*S.shape[:-2], n - i - 1)], -1)
                        for i in range(n)], -2)


def layer_loop_over_tokens_in_a_helper(x0, W_Q, W_K, W_V, W_O):
    q, k, v = W_Q @ x0, W_K @ x0, W_V @ x0
    return (W_O @ v @ _softmax_row_by_row(q.mT @ k / math.sqrt(W_Q.shape[1])).mT).sum(0)


@pytest.mark.parametrize("fn, message", [
    (layer_zip_of_projections, r"grows with the number of heads: it runs \d+ torch operations for a layer of 1 head"),
    (layer_loop_in_a_helper, "grows with the number of heads"),
    (layer_loop_over_tokens_in_a_helper, r"grows with the number of tokens: it runs \d+ torch operations for 4 tokens"),
])
def test_attention_layer_refuses_a_loop_its_source_does_not_show(fn, message):
    assert att_checks.python_loop(fn) is None           # the loop is not in the function's own code
    with pytest.raises(ExerciseError, match=message):
        checks.check_attention_layer(fn)


def causal_loop(S, v, W_O):
    n = S.shape[-1]
    return W_O @ torch.stack([v[:, :i + 1] @ torch.softmax(S[i, :i + 1], 0) for i in range(n)], dim=1)


def test_causal_attention_refuses_a_loop_over_the_tokens():
    with pytest.raises(ExerciseError, match=r"right numbers, but with a Python loop \(`for i in range"):
        checks.check_causal_attention(causal_loop)


@pytest.mark.parametrize("fn, message", [
    (layer(reduce=lambda o: o), "one output per head"),
    (layer(reduce=lambda o: o.mean(0)), "averaged"),
    (layer(add_x=True), "x1 = x0 \\+ o"),
    (layer(mask=False), "mask is missing"),
    (layer(scale=lambda W: 1.0), "forget to divide"),
    (layer(scale=lambda W: math.sqrt(W.shape[2])), r"sqrt\(d_model\)"),
    (layer(scale=lambda W: math.sqrt(W.shape[0] * W.shape[1])), r"sqrt\(H d_head\)"),
    (layer(swap=True), "rows and columns of A are swapped"),
    (lambda *a: layer()(*a).T, "o lives in the residual stream"),
    (layer(diagonal=0), "also hides the diagonal"),
    (layer(dim=-2), "runs down each column"),
    (lambda x0, W_Q, W_K, W_V, W_O: layer()(x0, W_Q, W_K, W_K, W_O), "values come from W_K"),
    (lambda x0, W_Q, W_K, W_V, W_O: W_O.reshape(W_O.shape[1], -1) @ layer_r(x0, W_Q, W_K, W_V).reshape(-1, x0.shape[1]),
     "without moving the head axis"),
    (lambda x0, W_Q, W_K, W_V, W_O: att.attention(x0, W_Q, W_K, W_V, W_O).o, "calls .*attention"),
    (lambda x0, W_Q, W_K, W_V, W_O: att.concat_output(layer_r(x0, W_Q, W_K, W_V), W_O), "calls .*concat_output"),
    (lambda x0, *W: x0 * 0, "wrong numbers"),
    (lambda x0, *W: x0 / 0 * 0, "NaN"),
    (todo, "not written yet"),
])
def test_attention_layer_mistakes_are_named(fn, message):
    with pytest.raises(ExerciseError, match=message):
        checks.check_attention_layer(fn)


# ----------------------------------------------------------------- a head switched off (nb05, 5.2)
@pytest.fixture(scope="module")
def attn1():
    return checkpoint.load_named("attn1")[0]


def without(edit):
    """prob_without_head written by editing the cache: edit(cache, h) -> the last column to unembed."""
    def fn(model, ids, h, target):
        _, cache = model.run_with_cache(ids)
        x = edit(cache, h)
        return float(torch.softmax(model.unembed.W_U.detach() @ x, dim=0)[target])
    return fn


def by_hand(cache, h):
    return cache["x1"][:, -1] - cache[names.key(0, "o_heads")][h, :, -1]


def with_the_hook(model, ids, h, target):
    """Another right answer: zero o^h inside the model through its hook point "L0.o_heads"."""
    with hooked(model, {names.key(0, "o_heads"): lambda o: o * (torch.arange(o.shape[-3]) != h)[:, None, None]}):
        return model.next_token_probs(ids)[target]


@pytest.mark.parametrize("fn", [without(by_hand), with_the_hook])
def test_prob_without_head_right_answers_pass(attn1, fn):
    assert checks.check_prob_without_head(fn, attn1)


def with_the_helper(model, ids, h, target):
    with ablated(model, heads=[(0, h)]):
        return model.next_token_probs(ids)[target]


@pytest.mark.parametrize("fn, message", [
    (without(lambda c, h: c["x1"][:, -1]), "nothing changed"),
    (without(lambda c, h: c["x0"][:, -1]), "removed every head"),
    (without(lambda c, h: c["x0"][:, -1] + c[names.key(0, "o_heads")][h, :, -1]), "kept only head h"),
    (without(lambda c, h: c["x1"][:, 0] - c[names.key(0, "o_heads")][h, :, 0]), "first\\* position"),
    (without(lambda c, h: by_hand(c, (h + 1) % 4)), "you switched off head"),
    (lambda model, ids, h, target: float((model.unembed.W_U @ by_hand(model.run_with_cache(ids)[1], h))[target]) + 5,
     "not a probability"),
    (lambda model, ids, h, target: torch.softmax(model.unembed.W_U @ by_hand(model.run_with_cache(ids)[1], h), 0),
     "whole distribution"),
    (without(lambda c, h: by_hand(c, h) * 1.5), "model gives"),
    (lambda model, ids, h, target: float(torch.log_softmax(model.unembed.W_U @ by_hand(model.run_with_cache(ids)[1], h),
                                                           0)[target]), "log-probability"),
    (with_the_helper, "calls helpers.interp.ablation.ablated, which"),
    (lambda *a: "0.5", "should be a number"),
    (todo, "not written yet"),
])
def test_prob_without_head_mistakes_are_named(attn1, fn, message):
    with pytest.raises(ExerciseError, match=message):
        checks.check_prob_without_head(fn, attn1)


def test_prob_without_head_needs_the_model():
    with pytest.raises(ExerciseError, match="needs the trained one-layer model"):
        checks.check_prob_without_head(lambda *a: 0.5, None)


# ----------------------------------------------------------------- one head patched (nb05, 5.3)
def patching(fraction=None, prob=False, added=False, head_shift=0):
    """restored_by_head from the cache; fraction(P, C, K) turns the three logit differences (patched, corrupted,
    clean) into the returned number (default: the right one)."""
    def fn(model, clean, corrupted, h, right, wrong):
        _, K = model.run_with_cache(clean)
        _, C = model.run_with_cache(corrupted)
        W_U, g = model.unembed.W_U.detach(), (h + head_shift) % model.cfg.n_heads

        def diff(x):
            s = torch.softmax(W_U @ x, 0) if prob else W_U @ x
            return float(s[right] - s[wrong])

        o = names.key(0, "o_heads")
        x1 = C["x1"][:, -1]
        patched = x1 + K[o][g, :, -1] if added else x1 - C[o][g, :, -1] + K[o][g, :, -1]
        P, Cd, Kd = diff(patched), diff(x1), diff(K["x1"][:, -1])
        return (fraction or (lambda P, C, K: (P - C) / (K - C)))(P, Cd, Kd)
    return fn


def patching_in_the_model(model, clean, corrupted, h, right, wrong):
    """Another right answer: the clean o^h put into the corrupted run through the hook point "L0.o_heads"."""
    _, K = model.run_with_cache(clean)
    clean_o = K[names.key(0, "o_heads")][h]

    def diff(ids):
        logits = model(ids)[:, -1]
        return float(logits[right] - logits[wrong])

    def put(o):                                          # o_heads (..., n_heads, d_model, n)
        o = o.clone()
        o[..., h, :, :] = clean_o
        return o

    with hooked(model, {names.key(0, "o_heads"): put}):
        P = diff(corrupted)
    return (P - diff(corrupted)) / (diff(clean) - diff(corrupted))


@pytest.mark.parametrize("fn", [patching(), patching_in_the_model])
def test_restored_by_head_right_answers_pass(attn1, fn):
    assert checks.check_restored_by_head(fn, attn1)


def with_the_patching_helper(model, clean, corrupted, h, right, wrong):
    from helpers.interp.patching import logit_difference, restored

    return restored(model, clean, corrupted, names.head(0, h), logit_difference(right, wrong))


@pytest.mark.parametrize("fn, message", [
    (patching(lambda P, C, K: (C - P) / (K - C)), "the sign is flipped"),
    (patching(lambda P, C, K: (K - P) / (K - C)), "1 minus the fraction"),
    (patching(lambda P, C, K: P - C), "not yet a fraction"),
    (patching(lambda P, C, K: P), "the patched run's logit difference itself"),
    (patching(added=True), "added the clean run's o\\^h on top"),
    (patching(prob=True), "measured with probabilities"),
    (patching(lambda P, C, K: 1.0), "copied the clean run's whole stream"),
    (patching(head_shift=1), "you patched head"),
    (patching(lambda P, C, K: 1.5 * (P - C) / (K - C)), "where patching head"),
    (lambda *a: torch.ones(3), "returned a tensor of shape \\(3,\\)"),
    (with_the_patching_helper, "calls helpers.interp.patching.restored, which"),
    (todo, "not written yet"),
])
def test_restored_by_head_mistakes_are_named(attn1, fn, message):
    with pytest.raises(ExerciseError, match=message):
        checks.check_restored_by_head(fn, attn1)


def test_restored_by_head_needs_the_one_layer_model():
    with pytest.raises(ExerciseError, match="needs the trained one-layer model"):
        checks.check_restored_by_head(lambda *a: 0.5, checkpoint.load_named("attn2")[0])


def test_a_wrapped_helper_is_forbidden_by_its_own_code_not_its_wrapper(monkeypatch):
    """Under tests/notebooks/test_exercises.py's tracer every answering helper is a functools.wraps wrapper with one
    shared code object; the notebook's softmax is one of them. A right answer that calls softmax must not
    be taken for one that calls single_query; one that calls single_query still is refused."""
    import functools

    from helpers import softmax as softmax_module

    def traced(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(att, "single_query", traced(att.single_query))
    monkeypatch.setattr(softmax_module, "softmax", traced(softmax_module.softmax))

    def with_notebook_softmax(x, W_Q, W_K, W_V, W_O):
        q_n, k, v = W_Q @ x[:, -1:], W_K @ x, W_V @ x
        return W_O @ (v @ softmax_module.softmax((q_n.T @ k)[0] / math.sqrt(W_Q.shape[0]))[:, None])

    assert checks.check_single_query(with_notebook_softmax)
    with pytest.raises(ExerciseError, match="calls helpers.model.attention.single_query, which"):
        checks.check_single_query(lambda x, *W: att.single_query(x, *W).o_n)


@pytest.mark.parametrize("check, args", [
    (checks.check_single_query, ()), (checks.check_hide_token, ()), (checks.check_all_scores, ()),
    (checks.check_causal_attention, ()), (checks.check_attention_layer, ()), (checks.check_prob_without_head, (None,)),
    (checks.check_restored_by_head, (None,)),
])
def test_an_unwritten_exercise_is_reported_as_not_written_yet(check, args):
    from helpers.checks.base import NotWrittenYet

    with pytest.raises(NotWrittenYet, match="not written yet"):
        check(todo, *args)


def test_an_answer_that_damages_the_model_is_refused_and_the_model_restored(attn1):
    """Exercise 5.2 written by switching the head off in the weights and never switching it back."""
    before = {k: v.clone() for k, v in attn1.state_dict().items()}

    def zero_W_O(model, ids, h, target):
        with torch.no_grad():
            model.blocks[0].attn.W_O[h] = 0.0
        return float(model.next_token_probs(ids)[target])

    with pytest.raises(ExerciseError, match="changed the model's weights and did not put them back"):
        checks.check_prob_without_head(zero_W_O, attn1)
    assert all(torch.equal(v, before[k]) for k, v in attn1.state_dict().items())   # the learner's model is intact


@pytest.mark.parametrize("fn, message", [
    (lambda x0, W_Q, W_K: (W_Q @ x0).T @ (W_K @ x0) / math.sqrt(x0.shape[1]), r"divides by sqrt\(n\)"),
])
def test_all_scores_scale_by_the_wrong_axis_is_named(fn, message):
    with pytest.raises(ExerciseError, match=message):
        checks.check_all_scores(fn)


def test_attention_layer_transpose_of_a_3d_tensor_is_explained():
    def with_T(x0, W_Q, W_K, W_V, W_O):                  # .T on (H, d_head, n) reverses every axis
        q, k, v = W_Q @ x0, W_K @ x0, W_V @ x0
        return (W_O @ v @ att.softmax_star(q.T @ k / math.sqrt(W_Q.shape[1])).mT).sum(0)

    with pytest.raises(ExerciseError, match=r"use \.mT or transpose\(-2, -1\)"):
        checks.check_attention_layer(with_T)
