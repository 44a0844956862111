"""Notebook 10: the exercise checks (right answers pass, typical mistakes are named, unwritten answers say
so). The notebook's live-training claims: tests/notebooks/test_seeds.py and tools/margins.py."""

import pytest
import torch

from helpers import checks
from helpers.checks.base import ExerciseError
from helpers.lessons.induction import config
from helpers.train import fresh_model


def _unwritten(*_):
    raise NotImplementedError


# --- exercise 1: a head's two circuits ------------------------------------------------------------------

def _circuits(W_Q, W_K, W_V, W_O):
    return W_Q.T @ W_K, W_O @ W_V


def test_head_circuits_check_passes_the_products():
    assert checks.check_head_circuits(_circuits)
    assert checks.check_head_circuits(lambda W_Q, W_K, W_V, W_O: [W_Q.mT @ W_K, (W_O @ W_V).double()])
    assert checks.check_head_circuits(lambda W_Q, W_K, W_V, W_O: torch.stack([W_Q.mT @ W_K, W_O @ W_V]))


@pytest.mark.parametrize("wrong, message", [
    (lambda W_Q, W_K, W_V, W_O: (W_Q @ W_K.T, W_O @ W_V), r"W_Q W_K\^T"),
    (lambda W_Q, W_K, W_V, W_O: (W_K.T @ W_Q, W_O @ W_V), "query and key are swapped"),
    (lambda W_Q, W_K, W_V, W_O: (W_Q.T @ W_K / W_Q.shape[0] ** 0.5, W_O @ W_V), "belongs to the scores"),
    (lambda W_Q, W_K, W_V, W_O: (W_Q.T @ W_K * 2, W_O @ W_V), "differs from W_Q\\^T W_K"),
    (lambda W_Q, W_K, W_V, W_O: (W_Q.T @ W_K, W_V @ W_O), "order is reversed"),
    (lambda W_Q, W_K, W_V, W_O: (W_Q.T @ W_K, (W_O @ W_V).T), "transposed"),
    (lambda W_Q, W_K, W_V, W_O: (W_Q.T @ W_K, W_O @ W_V * 2), "differs from W_O W_V"),
    (lambda W_Q, W_K, W_V, W_O: (W_Q.T @ W_K, W_O), "shape"),
    (lambda W_Q, W_K, W_V, W_O: (W_Q.T, W_O @ W_V), "maps the stream to the stream"),
    (lambda W_Q, W_K, W_V, W_O: (W_O @ W_V, W_Q.T @ W_K), "in the wrong order"),
    (lambda W_Q, W_K, W_V, W_O: W_Q.T @ W_K, "two matrices"),
    (lambda W_Q, W_K, W_V, W_O: None, "two matrices.*None"),
    (lambda W_Q, W_K, W_V, W_O: (W_Q.T @ W_K, W_O @ W_V * float("nan")), "NaN"),
    (lambda W_Q, W_K, W_V, W_O: ((W_Q.T @ W_K).long(), W_O @ W_V), "dtype"),
    (lambda W_Q, W_K, W_V, W_O: (None, W_O @ W_V), "returned None"),
    (lambda W_Q, W_K, W_V, W_O: 1 / 0, "raised ZeroDivisionError"),
    (_unwritten, "not written yet"),
])
def test_head_circuits_check_names_the_mistake(wrong, message):
    with pytest.raises(ExerciseError, match=message):
        checks.check_head_circuits(wrong)


def test_head_circuits_check_refuses_the_helpers():
    from helpers.interp import circuits

    model = fresh_model(config(n_layers=2), seed=0)

    def by_helper(W_Q, W_K, W_V, W_O):
        circuits.ov_circuit(model, 0, 0)     # the notebook's model rather than the head it is given: refused
        return _circuits(W_Q, W_K, W_V, W_O)

    with pytest.raises(ExerciseError, match="calls helpers.interp.circuits.ov_circuit"):
        checks.check_head_circuits(by_helper)


# --- exercise 2: K-composition --------------------------------------------------------------------------

def _score(M, W):
    return torch.linalg.matrix_norm(M @ W) / (torch.linalg.matrix_norm(M) * torch.linalg.matrix_norm(W))


def test_k_composition_check_passes_the_frobenius_ratio():
    assert checks.check_k_composition(_score)
    assert checks.check_k_composition(lambda M, W: float(_score(M, W)))


@pytest.mark.parametrize("wrong, message", [
    (lambda M, W: torch.linalg.matrix_norm(M @ W), "without normalisation"),
    (lambda M, W: _score(W, M), "wrong side"),
    (lambda M, W: _score(M.T, W), "Q-composition"),
    (lambda M, W: torch.linalg.matrix_norm(M @ W, ord=2)
     / (torch.linalg.matrix_norm(M, ord=2) * torch.linalg.matrix_norm(W, ord=2)), "spectral"),
    (lambda M, W: 0.5, "Frobenius"),
    (lambda M, W: torch.linalg.matrix_norm(M @ W) ** 2 / (torch.linalg.matrix_norm(M) ** 2
                                                        * torch.linalg.matrix_norm(W) ** 2), "squares the norms"),
    (lambda M, W: torch.linalg.matrix_norm(M * W) / (torch.linalg.matrix_norm(M) * torch.linalg.matrix_norm(W)),
     "entry by entry"),
    (lambda M, W: "high", "should be a number"),
    (lambda M, W: torch.ones(2), "one number"),
    (lambda M, W: None, "should be a number, got NoneType"),
    (lambda M, W: float("nan"), "nan"),
    (_unwritten, "not written yet"),
])
def test_k_composition_check_names_the_mistake(wrong, message):
    with pytest.raises(ExerciseError, match=message):
        checks.check_k_composition(wrong)


def test_k_composition_check_refuses_the_helper():
    from helpers.interp.circuits import composition_score as score

    with pytest.raises(ExerciseError, match="calls helpers.interp.circuits.composition_score"):
        checks.check_k_composition(lambda M, W: score(M, W))


# --- exercise 3: the cost of a causal head --------------------------------------------------------------

def test_causal_mults_check_passes_the_count():
    assert checks.check_causal_mults(lambda d, h, n: 4 * d * h * n + 2 * h * (n * (n + 1) // 2))
    assert checks.check_causal_mults(lambda d, h, n: torch.tensor(4 * d * h * n + h * n * (n + 1)))


@pytest.mark.parametrize("wrong, message", [
    (lambda d, h, n: 2 * h * n * (2 * d + n), "usual count"),
    (lambda d, h, n: 4 * d * h * n + h * n * (n - 1), "leaves out the diagonal"),
    (lambda d, h, n: 4 * d * h * n + h * n * n, "n_ctx\\^2 / 2 pairs"),
    (lambda d, h, n: 4 * d * h * n + 2 * h * (n * n / 2) + 0.5, "not a whole number"),
    (lambda d, h, n: 4 * d * h * n + h * n * (n + 1) // 2, "one d_head per pair"),
    (lambda d, h, n: h * n * (n + 1), "leaves out the projections"),
    (lambda d, h, n: 3 * d * h * n + h * n * (n + 1), "W_O is the fourth"),
    (lambda d, h, n: 4 * d * h + h * n * (n + 1), "per position"),
    (lambda d, h, n: 7, "expected"),
    (lambda d, h, n: None, "should be a number"),
    (lambda d, h, n: "many", "should be a number"),
    (lambda d, h, n: float("inf"), "inf"),
    (_unwritten, "not written yet"),
])
def test_causal_mults_check_names_the_mistake(wrong, message):
    with pytest.raises(ExerciseError, match=message):
        checks.check_causal_mults(wrong)


def test_causal_mults_check_refuses_the_usual_count():
    from helpers.lessons import cost

    with pytest.raises(ExerciseError, match="calls helpers.lessons.cost.usual_mults"):
        checks.check_causal_mults(lambda d, h, n: cost.usual_mults(d, h, n) - h * n * (n - 1))


def test_a_slow_answer_is_stopped(monkeypatch):
    import time

    from helpers.checks import base

    monkeypatch.setitem(base.call.__kwdefaults__, "limit", 0.2)
    with pytest.raises(ExerciseError, match="was stopped"):
        checks.check_causal_mults(lambda d, h, n: time.sleep(2))

