"""Notebook 10: the exercise checks (right answers pass, typical mistakes are named, unwritten answers say
so) and the circuit explorer. The notebook's live-training claims: tests/test_seeds.py and tools/margins.py."""

import pytest
import torch

from helpers import checks
from helpers.checks.base import ExerciseError
from helpers.induction import ALPHABET, config
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
    from helpers import cost

    with pytest.raises(ExerciseError, match="calls helpers.cost.usual_mults"):
        checks.check_causal_mults(lambda d, h, n: cost.usual_mults(d, h, n) - h * n * (n - 1))


def test_a_slow_answer_is_stopped(monkeypatch):
    import time

    from helpers.checks import base

    monkeypatch.setitem(base.call.__kwdefaults__, "limit", 0.2)
    with pytest.raises(ExerciseError, match="was stopped"):
        checks.check_causal_mults(lambda d, h, n: time.sleep(2))


# --- the explorer ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def copying_model():
    """A 2-layer model of notebook 09's shape whose layer-1 head 0 copies the first d_head tokens exactly,
    made by hand (W_U W_OV W_E = diag(1, ..., 1, 0, ..., 0)), so the explorer's answer is known without training."""
    model = fresh_model(config(n_layers=2), seed=0)
    with torch.no_grad():
        attn = model.blocks[1].attn
        d_head, d_model = attn.W_V.shape[1:]
        E = torch.linalg.qr(torch.randn(d_model, d_model, generator=torch.Generator().manual_seed(0)))[0]
        model.embed.W_E.copy_(E)                       # 64 orthonormal token directions
        model.unembed.W_U.copy_(E.T)                   # W_U W_E = I
        attn.W_V[0].copy_(E.T[:d_head])                # reads the first d_head token directions
        attn.W_O[0].copy_(E[:, :d_head])               # and writes them back
    return model


def test_explorer_shows_qk_row_and_ov_column():
    from helpers.interp.circuits import token_ov_table, token_qk_table
    from helpers.widgets.circuits import CircuitExplorer

    model = fresh_model(config(n_layers=2), seed=1)
    ex = CircuitExplorer(model, layer=1, head=1, token="q")
    qk, ov = token_qk_table(model, 1, 1), token_ov_table(model, 1, 1)
    a = ALPHABET.index("q")
    assert ex.last_state["layer"] == 1 and ex.last_state["head"] == 1 and ex.last_state["token"] == "q"
    assert ex.last_state["top_key"] == ALPHABET[int(qk[a].argmax())]
    assert ex.last_state["top_written"] == ALPHABET[int(ov[:, a].argmax())]
    assert 'class="gt-caption"' in ex.caption.value and "data-state=" in ex.caption.value
    assert "layer=1;head=1;text=q;token=q" in ex.caption.value
    ex.layer.value = 0
    ex.head.value = 0
    ex.token.value = "Z"
    assert ex.last_state["layer"] == 0 and ex.last_state["token"] == "Z"
    assert ex.last_state["top_written"] == ALPHABET[int(token_ov_table(model, 0, 0)[:, ALPHABET.index("Z")].argmax())]
    assert ex.seconds  # each redraw timed for the bench, which prints the figures


def test_explorer_sees_a_copying_head(copying_model):
    from helpers.widgets.circuits import CircuitExplorer

    ex = CircuitExplorer(copying_model, layer=1, head=0, token="a")
    assert ex.last_state["top_written"] == "a"
    assert "itself" in ex.caption.value


@pytest.mark.parametrize("text, message", [("", "empty"), ("é", "is not a token"), ("the ü", "is not a token")])
def test_explorer_bad_token_goes_to_the_caption(text, message):
    from helpers.widgets.circuits import CircuitExplorer

    ex = CircuitExplorer(fresh_model(config(n_layers=2), seed=1), token="a")
    ex.token.value = text
    assert message in ex.last_error
    assert "gt-error" in ex.caption.value and ex.token.value == text   # the text is kept
    ex.token.value = "b"
    assert not ex.last_error and ex.last_state["token"] == "b"


def test_explorer_reads_the_last_character_of_a_longer_text():
    from helpers.widgets.circuits import CircuitExplorer

    ex = CircuitExplorer(fresh_model(config(n_layers=2), seed=1), token="the")
    assert not ex.last_error and ex.last_state["text"] == "the" and ex.last_state["token"] == "e"
    assert "3 tokens" in ex.caption.value and "the last one" in ex.caption.value


def test_explorer_rejects_bad_heads_and_models():
    from helpers.model.config import Config
    from helpers.widgets.circuits import CircuitExplorer

    model = fresh_model(config(n_layers=2), seed=1)
    with pytest.raises(ValueError):
        CircuitExplorer(model, layer=2, head=0)
    with pytest.raises(ValueError):
        CircuitExplorer(model, layer=0, head=5)
    with pytest.raises(ValueError, match="n_vocab"):
        CircuitExplorer(fresh_model(Config(n_vocab=10, d_model=8, n_ctx=4, n_layers=1, n_heads=1)), layer=0, head=0)


def test_the_circuits_agree_with_the_model_on_a_two_token_context():
    """With only two tokens visible, the model's scores and head outputs are the token tables' entries:
    S[1, j] = (W_E^T W_QK W_E)[t_1, t_j] / sqrt(d_head), and W_U o^h = sum_j A[1, j] (W_U W_OV W_E)[:, t_j]."""
    import math

    from helpers.interp.circuits import token_ov_table, token_qk_table
    from helpers.model import names
    from helpers.model.config import Config

    model = fresh_model(Config(n_vocab=10, d_model=16, n_ctx=4, n_layers=1, n_heads=2, positional=False), seed=3)
    g = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for param in model.parameters():
            param.copy_(torch.randn(param.shape, generator=g) * 0.5)  # large enough that patterns are not flat
    tokens = torch.tensor([7, 2])
    _, cache = model.run_with_cache(tokens)
    d_head = model.cfg.d_head
    for h in range(2):
        T = token_qk_table(model, 0, h)
        S = cache[names.key(0, "S")][h]
        assert torch.allclose(S[1, :2], T[2, tokens] / math.sqrt(d_head), atol=1e-5)
        A = cache[names.key(0, "A")][h]
        written = model.unembed.W_U @ cache[names.key(0, "o_heads")][h][:, 1]
        expected = token_ov_table(model, 0, h)[:, tokens] @ A[1, :2]
        assert torch.allclose(written, expected, atol=1e-4)
