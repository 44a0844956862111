"""The exercise checks of notebooks 03-05 accept right answers and name the typical wrong ones."""

import math

import pytest
import torch

from helpers.checks import attention as checks
from helpers.checks.base import ExerciseError
from helpers.model import attention as att


# ----------------------------------------------------------------- single query (nb03)
def sq_right(x, W_Q, W_K, W_V, W_O):
    return att.single_query(x, W_Q, W_K, W_V, W_O).o_n


def sq_scaled(scale):
    def fn(x, W_Q, W_K, W_V, W_O):
        q_n, k, v = W_Q @ x[:, -1:], W_K @ x, W_V @ x
        a = torch.softmax((q_n.T @ k)[0] / scale(W_Q), 0)
        return W_O @ (v @ a[:, None])
    return fn


def sq_no_WO(x, W_Q, W_K, W_V, W_O):
    return att.single_query(x, W_Q, W_K, W_V, W_O).r_n


def sq_first_query(x, W_Q, W_K, W_V, W_O):
    q, k, v = W_Q @ x[:, :1], W_K @ x, W_V @ x
    return W_O @ (v @ torch.softmax((q.T @ k)[0] / math.sqrt(W_Q.shape[0]), 0)[:, None])


def sq_todo(*args):
    raise NotImplementedError


def test_single_query_right_answer_passes(capsys):
    assert checks.check_single_query(sq_right)
    assert "✔" in capsys.readouterr().out


@pytest.mark.parametrize("fn, message", [
    (sq_scaled(lambda W: math.sqrt(W.shape[1])), "sqrt\\(d_model\\) instead of sqrt\\(d_head\\)"),
    (sq_scaled(lambda W: 1.0), "forget to divide"),
    (sq_scaled(lambda W: W.shape[0]), "instead of its square root"),
    (sq_no_WO, "W_O r_n"),
    (sq_first_query, "first"),
    (lambda *a: torch.zeros(3, 3), "shape"),
    (lambda *a: torch.zeros(36, 1), "wrong numbers"),
    (sq_todo, "not written yet"),
    (lambda *a: 1 / 0, "ZeroDivisionError"),
])
def test_single_query_mistakes_are_named(fn, message):
    with pytest.raises(ExerciseError, match=message):
        checks.check_single_query(fn)


# ----------------------------------------------------------------- causal softmax (nb04)
def cs(mask_fn, fill=float("-inf"), dim=-1, after=False):
    def fn(S):
        n = S.shape[-1]
        m = mask_fn(n)
        if after:
            return torch.softmax(S, -1).masked_fill(m, 0.0)
        return torch.softmax(S.masked_fill(m, fill), dim)
    return fn


def test_causal_softmax_right_answer_passes():
    assert checks.check_causal_softmax(att.softmax_star)
    assert checks.check_causal_softmax(cs(lambda n: torch.ones(n, n, dtype=torch.bool).triu(1)))


@pytest.mark.parametrize("fn, message", [
    (cs(lambda n: torch.ones(n, n, dtype=torch.bool).triu(0)), "a row sums to 0 .* the whole row was masked"),
    (cs(lambda n: torch.zeros(n, n, dtype=torch.bool)), "nothing was masked"),
    (cs(lambda n: torch.ones(n, n, dtype=torch.bool).tril(-1)), "wrong way"),
    (cs(lambda n: torch.ones(n, n, dtype=torch.bool).triu(1), dim=0), "columns"),
    (cs(lambda n: torch.ones(n, n, dtype=torch.bool).triu(1), fill=0.0), "exp\\(0\\) = 1"),
    (cs(lambda n: torch.ones(n, n, dtype=torch.bool).triu(1), after=True), "after\\* the softmax"),
    (lambda S: S, "wrong weights"),
])
def test_causal_softmax_mistakes_are_named(fn, message):
    with pytest.raises(ExerciseError, match=message):
        checks.check_causal_softmax(fn)


# ----------------------------------------------------------------- multi-head output (nb05)
def test_multi_head_right_answers_pass():
    assert checks.check_multi_head_output(lambda r, W_O: sum(W_O[h] @ r[h] for h in range(len(r))))
    assert checks.check_multi_head_output(att.concat_output)
    assert checks.check_multi_head_output(lambda r, W_O: (W_O @ r).sum(0))


@pytest.mark.parametrize("fn, message", [
    (lambda r, W_O: W_O @ r, "one output per head"),
    (lambda r, W_O: (W_O @ r).mean(0), "averaged"),
    (lambda r, W_O: W_O.reshape(W_O.shape[1], -1) @ r.reshape(-1, r.shape[-1]), "mixes up the heads"),
    (lambda r, W_O: (W_O @ r).sum(0) * 2, "wrong numbers"),
])
def test_multi_head_mistakes_are_named(fn, message):
    with pytest.raises(ExerciseError, match=message):
        checks.check_multi_head_output(fn)
