"""Exercises of notebook 10: a head's OV circuit, a K-composition score, the cost of one head. Each check
calls the learner's function first, on cases the notebook does not show, and names the usual mistake."""

from __future__ import annotations

import torch

from helpers.checks.base import ExerciseError, as_tensor, call, exercise, expect_shape, passed
from helpers.cost import in_loop_mults, usual_mults, usual_terms


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and bool(torch.allclose(a.double(), b.double(), atol=1e-4, rtol=1e-4))


def _head(seed: int, d_model: int = 6, d_head: int = 3):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(d_model, d_head, generator=g),   # W_O (d_model, d_head)
            torch.randn(d_head, d_model, generator=g))   # W_V (d_head, d_model)


@exercise(answered_by=("helpers.interp.circuits.ov_circuit",))
def check_ov_circuit(fn) -> bool:
    """fn(W_O (d_model, d_head), W_V (d_head, d_model)) -> W_OV = W_O W_V (d_model, d_model)."""
    what = "ov_circuit(W_O, W_V)"
    for seed in range(3):
        W_O, W_V = _head(seed)
        right = W_O @ W_V
        out = as_tensor(call(fn, W_O, W_V, what=what), what)
        if out.shape == (W_V.shape[0], W_V.shape[0]) and _close(out, W_V @ W_O):
            raise ExerciseError(f"{what} is W_V W_O, shape (d_head, d_head): the order is reversed. The value "
                                "W_V x_j comes first, then W_O maps it back to the stream: W_OV = W_O W_V.")
        expect_shape(out, tuple(right.shape), what, "W_OV maps the stream to the stream: (d_model, d_model).")
        if _close(out, right.T):
            raise ExerciseError(f"{what} is (W_O W_V)^T = W_V^T W_O^T: transposed. Column vectors: attending to "
                                "x_j writes W_O (W_V x_j), so W_OV = W_O W_V with no transposes.")
        if not _close(out, right):
            raise ExerciseError(f"{what} differs from W_O @ W_V on a random head. Attending to x_j writes "
                                "W_O (W_V x_j): the circuit is the product W_O W_V.")
    rank = int(torch.linalg.matrix_rank(right))
    return passed(f"{what} = W_O W_V on 3 random heads (rank {rank} = d_head: no more than d_head).")


def _frobenius_ratio(M: torch.Tensor, W: torch.Tensor) -> float:
    return float(torch.linalg.matrix_norm(M @ W) / (torch.linalg.matrix_norm(M) * torch.linalg.matrix_norm(W)))


@exercise(answered_by=("helpers.interp.circuits.composition_score",
                       "helpers.interp.circuits.composition_scores"))
def check_k_composition(fn) -> bool:
    """fn(W_QK (d_model, d_model) of the later head, W_OV (d_model, d_model) of the earlier) -> a number in [0, 1]:
    ||W_QK W_OV||_F / (||W_QK||_F ||W_OV||_F)."""
    what = "k_composition(W_QK, W_OV)"
    for seed in range(3):
        g = torch.Generator().manual_seed(100 + seed)
        d, r = 8, 2
        W_QK = torch.randn(d, r, generator=g) @ torch.randn(r, d, generator=g) * 3
        W_OV = torch.randn(d, r, generator=g) @ torch.randn(r, d, generator=g) * 0.5
        right = _frobenius_ratio(W_QK, W_OV)
        out = call(fn, W_QK, W_OV, what=what)
        try:
            out = float(out)
        except (TypeError, ValueError):
            raise ExerciseError(f"{what} should return one number, got {type(out).__name__}") from None
        if abs(out - right) < 1e-4:
            continue
        if abs(out - float(torch.linalg.matrix_norm(W_QK @ W_OV))) < 1e-3 * max(1.0, abs(out)):
            raise ExerciseError(f"{what} = ||W_QK W_OV||_F without normalisation: it grows with the size of the "
                                "weights. Divide by ||W_QK||_F ||W_OV||_F so that the score lies in [0, 1].")
        if abs(out - _frobenius_ratio(W_OV, W_QK)) < 1e-4:
            raise ExerciseError(f"{what} multiplies on the wrong side (W_OV W_QK). The key reads what the earlier "
                                "head wrote: x_i^T W_QK (W_OV x_j), so the product is W_QK W_OV.")
        if abs(out - _frobenius_ratio(W_QK.T, W_OV)) < 1e-4:
            raise ExerciseError(f"{what} uses W_QK^T W_OV: that is Q-composition (the query side reads). For K, the "
                                "earlier head's output enters on the key side: W_QK W_OV.")
        raise ExerciseError(f"{what} gives {out:.4f} on a random pair where the score is {right:.4f}: "
                            "||W_QK W_OV||_F / (||W_QK||_F ||W_OV||_F), torch.linalg.matrix_norm is Frobenius.")
    return passed(f"{what} matches the Frobenius ratio on 3 random pairs of rank-2 circuits.")


@exercise(answered_by=("helpers.cost.usual_mults", "helpers.cost.formula"))
def check_attention_mults(fn) -> bool:
    """fn(d_model, d_head, n_ctx) -> int: the usual head's multiplications, 2 d_head n_ctx (2 d_model + n_ctx)."""
    what = "attention_mults(d_model, d_head, n_ctx)"
    for d_model, d_head, n_ctx in ((10, 3, 7), (768, 64, 1024), (64, 32, 200)):
        right = usual_mults(d_model, d_head, n_ctx)
        out = call(fn, d_model, d_head, n_ctx, what=what)
        try:
            out = int(out)
        except (TypeError, ValueError):
            raise ExerciseError(f"{what} should return a whole number, got {type(out).__name__}") from None
        if out == right:
            continue
        t = usual_terms(d_model, d_head, n_ctx)
        sizes = f"(d_model, d_head, n_ctx) = {(d_model, d_head, n_ctx)}"
        if out == in_loop_mults(d_model, d_head, n_ctx) or out == 4 * d_model * d_head * n_ctx**2:
            raise ExerciseError(f"{what} for {sizes} counts the projections inside the loop over pairs. The usual "
                                "version computes q, k, v and W_O z once per position: 4 d_model d_head n_ctx.")
        if out == t["projections"] // n_ctx + t["pairs"]:
            raise ExerciseError(f"{what} for {sizes}: the projections are 4 d_model d_head *per position*; "
                                "multiply by n_ctx.")
        if out == t["projections"]:
            raise ExerciseError(f"{what} for {sizes} leaves out the pairs: S_ij = q_i . k_j and A_ij v_j cost "
                                "2 d_head for each of the n_ctx^2 pairs.")
        if out == t["projections"] + t["pairs"] // 2:
            raise ExerciseError(f"{what} for {sizes} counts one d_head per pair; there are two: the dot product "
                                "q_i . k_j and the weighted sum A_ij v_j.")
        if out == 3 * d_model * d_head * n_ctx + t["pairs"]:
            raise ExerciseError(f"{what} for {sizes} counts three projections; W_O is the fourth (d_model d_head "
                                "per position).")
        raise ExerciseError(f"{what} for {sizes} gives {out}; expected {right} = 4 d_model d_head n_ctx "
                            f"({t['projections']}) + 2 d_head n_ctx^2 ({t['pairs']}).")
    return passed(f"{what} = 2 d_head n_ctx (2 d_model + n_ctx) for 3 sizes, GPT-2 Small's head among them.")
