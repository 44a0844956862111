"""Notebook 10, section 10: Exercise 10.4's check, the induction circuit written by hand (the answer passes; every
wrong answer below gets the stage that fails named). helpers/lessons/by_hand.py itself:
tests/unit/lessons/test_by_hand.py."""

import pytest
import torch

from helpers import checks

from helpers.lessons import by_hand
from helpers.checks.base import ExerciseError

L = by_hand.Layout()
D = L.d_model


# --- Exercise 10.4's check ---------------------------------------------------------------------------------

def _right(L, score=80.0, copy=10.0) -> list:
    """The answer as a learner might write it without loops (the check refuses by_hand.induction_circuits)."""
    M = [torch.zeros(L.d_model, L.d_model) for _ in range(4)]
    i, t = torch.arange(1, L.n_ctx), torch.arange(L.n_vocab)
    M[0][L.POS.start + i, L.POS.start + i - 1] = score
    M[1][L.PREV.start + t, L.TOK.start + t] = 1.0
    M[2][L.TOK.start + t, L.PREV.start + t] = score
    M[3][L.OUT.start + t, L.TOK.start + t] = copy
    return M


def answer(score=80.0, copy=10.0, qk0=None, ov0=None, qk1=None, ov1=None, order=None):
    """The right circuits, with any of them replaced by fill(M, L) of a zero matrix (a wrong answer)."""
    def fn(L):
        right = _right(L, score=score, copy=copy)
        for k, fill in enumerate((qk0, ov0, qk1, ov1)):
            if fill is not None:
                right[k] = torch.zeros(L.d_model, L.d_model)
                fill(right[k], L)
        return tuple(right[k] for k in order) if order else tuple(right)
    return fn


def each(pairs):
    """fill for M[row(k), col(k)] = value over k."""
    def fill(M, L):
        for r, c, v in pairs(L):
            M[r, c] = v
    return fill


TOKENS = range(64)
POSITIONS = range(1, 32)
WRONG = {
    "layer 0 zero": (dict(qk0=each(lambda L: [])), "W_QK0 is all zeros"),
    "layer 0 reads tokens": (dict(qk0=each(lambda L: [(L.tok(t), L.tok(t), 80.0) for t in TOKENS])),
                             "pair the TOK rows .* with the TOK columns"),
    "layer 0 transposed": (dict(qk0=each(lambda L: [(L.pos(i - 1), L.pos(i), 80.0) for i in POSITIONS])),
                           "W_QK0 is transposed"),
    "layer 0 on itself": (dict(qk0=each(lambda L: [(L.pos(i), L.pos(i), 80.0) for i in range(32)])),
                          "attends to its own position"),
    "layer 0 negative": (dict(qk0=each(lambda L: [(L.pos(i), L.pos(i - 1), -80.0) for i in POSITIONS])),
                         "negative score"),
    "layer 0 weak": (dict(qk0=each(lambda L: [(L.pos(i), L.pos(i - 1), 16.0) for i in POSITIONS])),
                     r"prefers the previous position \(key i - 1\) but gives it only 0.[0-4]"),
    "layer 0 partly": (dict(qk0=each(lambda L: [(L.pos(i), L.pos(i - 1), 80.0) for i in range(1, 8)])),
                       "puts only 0.[0-4]. of its weight on the previous position"),
    "trace zero": (dict(ov0=each(lambda L: [])), "W_OV0 is all zeros"),
    "trace transposed": (dict(ov0=each(lambda L: [(L.tok(t), L.prev(t), 1.0) for t in TOKENS])),
                         "W_OV0 is transposed"),
    "trace from PREV": (dict(ov0=each(lambda L: [(L.prev(t), L.prev(t), 1.0) for t in TOKENS])),
                        "reads the PREV rows, which are empty"),
    "trace from POS": (dict(ov0=each(lambda L: [(L.prev(i), L.pos(i), 1.0) for i in range(32)])),
                       "reads the POS rows of the key"),
    "trace into TOK": (dict(ov0=each(lambda L: [(L.tok(t), L.tok(t), 1.0) for t in TOKENS])),
                       r"writes into the TOK rows \(in the token rows it would look like a second token"),
    "trace into OUT": (dict(ov0=each(lambda L: [(L.out(t), L.tok(t), 1.0) for t in TOKENS])),
                       "writes into the OUT rows. The trace belongs"),
    "trace shuffled": (dict(ov0=each(lambda L: [(L.prev((t + 1) % 64), L.tok(t), 1.0) for t in TOKENS])),
                       "often name another"),
    "trace negative": (dict(ov0=each(lambda L: [(L.prev(t), L.tok(t), -1.0) for t in TOKENS])),
                       "writes the trace with a negative sign"),
    "induction zero": (dict(qk1=each(lambda L: [])), "W_QK1 is all zeros"),
    "induction on the same token": (dict(qk1=each(lambda L: [(L.tok(t), L.tok(t), 80.0) for t in TOKENS])),
                                    "compares the query's token with the key's own token"),
    "induction transposed": (dict(qk1=each(lambda L: [(L.prev(t), L.tok(t), 80.0) for t in TOKENS])),
                             "W_QK1 is transposed"),
    "induction on predecessors": (dict(qk1=each(lambda L: [(L.prev(t), L.prev(t), 80.0) for t in TOKENS])),
                                  "compares the query's predecessor"),
    "induction by position": (dict(qk1=each(lambda L: [(L.pos(i), L.pos(i - 1), 80.0) for i in POSITIONS])),
                              "pairs the POS rows .* with the POS columns"),
    "induction negative": (dict(qk1=each(lambda L: [(L.tok(t), L.prev(t), -80.0) for t in TOKENS])),
                           "gives a matching trace a negative score"),
    "induction weak": (dict(qk1=each(lambda L: [(L.tok(t), L.prev(t), 16.0) for t in TOKENS])),
                       "prefers the token after the earlier copy but gives it only"),
    "induction partly": (dict(qk1=each(lambda L: [(L.tok(t), L.prev(t), 80.0) for t in range(16)])),
                         "puts only 0.[0-4]. of its weight on the token after"),
    "copy zero": (dict(ov1=each(lambda L: [])), "W_OV1 is all zeros"),
    "copy into TOK": (dict(ov1=each(lambda L: [(L.tok(t), L.tok(t), 10.0) for t in TOKENS])),
                      "does not reach the unembedding: W_OV1 writes into the TOK rows"),
    "copy transposed": (dict(ov1=each(lambda L: [(L.tok(t), L.out(t), 10.0) for t in TOKENS])),
                        "W_OV1 is transposed"),
    "trace too faint": (dict(ov0=each(lambda L: [(L.prev(t), L.tok(t), 0.1) for t in TOKENS])),
                        "layer 1's score is your W_QK1 entry times W_OV0's"),
    "copy of the trace": (dict(ov1=each(lambda L: [(L.out(t), L.prev(t), 10.0) for t in TOKENS])),
                          "one step behind"),
    "copy of positions": (dict(ov1=each(lambda L: [(L.out(i), L.pos(i), 10.0) for i in range(32)])),
                          "reads the POS rows of the key; it should copy"),
    "copy negative": (dict(ov1=each(lambda L: [(L.out(t), L.tok(t), -10.0) for t in TOKENS])), "wrong sign"),
    "copy shuffled": (dict(ov1=each(lambda L: [(L.out((t + 1) % 64), L.tok(t), 10.0) for t in TOKENS])),
                      "logit is not the largest"),
    "copy weak": (dict(copy=1.0), "the copy is too weak: .* 70% is needed"),
    "order": (dict(order=(2, 3, 0, 1)), "in another order"),
}


def test_the_written_out_circuits_pass(trained, capsys):
    assert checks.check_induction_circuits(answer(), trained)
    out = capsys.readouterr().out
    assert "neither model has seen" in out and "70% needed" in out
    assert checks.check_induction_circuits(lambda L: [M.double().tolist() for M in _right(L)], trained)
    assert all(torch.equal(a, b) for a, b in zip(_right(L), by_hand.induction_circuits(L)))


@pytest.mark.parametrize("name", list(WRONG))
def test_each_wrong_circuit_gets_its_stage_named(trained, name):
    kwargs, message = WRONG[name]
    with pytest.raises(ExerciseError, match=message):
        checks.check_induction_circuits(answer(**kwargs), trained)


@pytest.mark.parametrize("fn, message", [
    (lambda L: _right(L)[:3], "four matrices.*got list of 3"),
    (lambda L: None, "four matrices.*got None"),
    (lambda L: (torch.zeros(64, 64),) * 4, r"W_QK0 from .* has shape \(64, 64\), expected \(224, 224\)"),
    (lambda L: [torch.randn(L.d_model, L.d_model)] + _right(L)[1:], "rank 224, more than d_head"),
    (lambda L: by_hand.induction_circuits(L), "calls helpers.lessons.by_hand.induction_circuits"),
    (lambda L: L.tok(64), "raised IndexError: token 64 does not exist"),
    (lambda L: (_ for _ in ()).throw(NotImplementedError()), "not written yet"),
])
def test_bad_returns_are_named(trained, fn, message):
    with pytest.raises(ExerciseError, match=message):
        checks.check_induction_circuits(fn, trained)


def test_the_check_needs_the_trained_model():
    with pytest.raises(ExerciseError, match="pass it as the second argument"):
        checks.check_induction_circuits(answer(), None)

