"""Exercises of notebook 10: a head's two circuits (before the notebook computes them), a K-composition
score (before the notebook says which side reads), and the cost of a causal head that skips the masked
pairs (which the notebook never counts). Each check calls the learner's function first, on cases the
notebook does not show, and names the usual mistake."""

from __future__ import annotations

import torch

from helpers.checks.base import ExerciseError, call, close, exercise, number_result, passed, tensor_result
from helpers.cost import usual_terms


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return close(a, b, atol=1e-4, rtol=1e-4)


def _head(seed: int, d_model: int = 7, d_head: int = 3):
    """One random head in the post's shapes: W_Q, W_K, W_V (d_head, d_model), W_O (d_model, d_head)."""
    g = torch.Generator().manual_seed(seed)
    W_Q, W_K, W_V = (torch.randn(d_head, d_model, generator=g) for _ in range(3))
    return W_Q, W_K, W_V, torch.randn(d_model, d_head, generator=g)


CIRCUIT_HELPERS = ("helpers.interp.circuits.qk_circuit", "helpers.interp.circuits.ov_circuit")


@exercise(answered_by=CIRCUIT_HELPERS)
def check_head_circuits(fn) -> bool:
    """fn(W_Q, W_K, W_V (d_head, d_model), W_O (d_model, d_head)) -> (W_QK, W_OV), both (d_model, d_model):
    W_QK = W_Q^T W_K and W_OV = W_O W_V. Tried on heads of odd sizes (d_model 7 and 5, d_head 3 and 2)."""
    what = "head_circuits(W_Q, W_K, W_V, W_O)"
    for seed, (d_model, d_head) in enumerate(((7, 3), (5, 2), (7, 3))):
        W_Q, W_K, W_V, W_O = _head(seed, d_model, d_head)
        QK, OV = W_Q.T @ W_K, W_O @ W_V
        out = call(fn, W_Q, W_K, W_V, W_O, what=what, forbid=CIRCUIT_HELPERS)
        if isinstance(out, torch.Tensor) and tuple(out.shape) == (2, d_model, d_model):
            out = tuple(out)                                   # torch.stack([W_QK, W_OV]): the two, stacked
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise ExerciseError(f"{what} should return two matrices, (W_QK, W_OV); got "
                                f"{'None' if out is None else type(out).__name__}.")
        qk, ov = out
        square = (d_model, d_model)
        if all(isinstance(m, torch.Tensor) and tuple(m.shape) == square for m in out) and \
                _close(qk, OV) and _close(ov, QK):
            raise ExerciseError(f"{what} returns the two circuits in the wrong order: (W_QK, W_OV) is asked for, "
                                "W_QK = W_Q^T W_K first.")
        if isinstance(qk, torch.Tensor) and tuple(qk.shape) == (d_head, d_head):
            raise ExerciseError(f"W_QK from {what} has shape (d_head, d_head) = {(d_head, d_head)}: that is "
                                "W_Q W_K^T (or W_K W_Q^T). The circuit acts on the stream, x_i^T W_QK x_j with "
                                "q_i = W_Q x_i: W_QK = W_Q^T W_K, (d_model, d_model).")
        qk = tensor_result(qk, square, f"W_QK from {what}", "W_QK maps the stream to the stream.")
        if _close(qk, QK.T):
            raise ExerciseError(f"W_QK from {what} is W_K^T W_Q, the transpose: query and key are swapped. "
                                "S_ij = q_i^T k_j = x_i^T (W_Q^T W_K) x_j, the query's x_i on the left.")
        if _close(qk, QK / d_head**0.5):
            raise ExerciseError(f"W_QK from {what} includes 1/sqrt(d_head): that scaling belongs to the scores S, "
                                "not to the circuit. W_QK = W_Q^T W_K.")
        if not _close(qk, QK):
            raise ExerciseError(f"W_QK from {what} differs from W_Q^T W_K on a random head: "
                                "q_i^T k_j = (W_Q x_i)^T (W_K x_j) = x_i^T W_Q^T W_K x_j.")
        if isinstance(ov, torch.Tensor) and tuple(ov.shape) == (d_head, d_head):
            if _close(ov, W_V @ W_O):
                raise ExerciseError(f"W_OV from {what} is W_V W_O, shape (d_head, d_head): the order is reversed. "
                                    "The value W_V x_j comes first, then W_O maps it back to the stream: "
                                    "W_OV = W_O W_V.")
        ov = tensor_result(ov, square, f"W_OV from {what}", "W_OV maps the stream to the stream.")
        if _close(ov, OV.T):
            raise ExerciseError(f"W_OV from {what} is (W_O W_V)^T = W_V^T W_O^T: transposed. Column vectors: "
                                "attending to x_j writes W_O (W_V x_j), so W_OV = W_O W_V with no transposes.")
        if not _close(ov, OV):
            raise ExerciseError(f"W_OV from {what} differs from W_O W_V on a random head. Attending to x_j writes "
                                "W_O (W_V x_j): the circuit is the product W_O W_V.")
    return passed(f"{what} = (W_Q^T W_K, W_O W_V) on 3 random heads of odd sizes (each of rank <= d_head).")


def _frobenius_ratio(M: torch.Tensor, W: torch.Tensor) -> float:
    return float(torch.linalg.matrix_norm(M @ W) / (torch.linalg.matrix_norm(M) * torch.linalg.matrix_norm(W)))


COMPOSITION_HELPERS = ("helpers.interp.circuits.composition_score", "helpers.interp.circuits.composition_scores")


@exercise(answered_by=COMPOSITION_HELPERS)
def check_k_composition(fn) -> bool:
    """fn(W_QK (d_model, d_model) of the later head, W_OV (d_model, d_model) of the earlier) -> a number in [0, 1]:
    ||W_QK W_OV||_F / (||W_QK||_F ||W_OV||_F). The helpers that compute it are refused."""
    what = "k_composition(W_QK, W_OV)"
    for seed in range(3):
        g = torch.Generator().manual_seed(100 + seed)
        d, r = 8 + seed, 2
        W_QK = torch.randn(d, r, generator=g) @ torch.randn(r, d, generator=g) * 3
        W_OV = torch.randn(d, r, generator=g) @ torch.randn(r, d, generator=g) * 0.5
        right = _frobenius_ratio(W_QK, W_OV)
        out = number_result(call(fn, W_QK, W_OV, what=what, forbid=COMPOSITION_HELPERS), what)
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
        norm = torch.linalg.matrix_norm
        if abs(out - float(norm(W_QK @ W_OV) ** 2 / (norm(W_QK) ** 2 * norm(W_OV) ** 2))) < 1e-4:
            raise ExerciseError(f"{what} squares the norms; the score is the plain ratio "
                                "||W_QK W_OV||_F / (||W_QK||_F ||W_OV||_F).")
        if abs(out - float(norm(W_QK * W_OV) / (norm(W_QK) * norm(W_OV)))) < 1e-4:
            raise ExerciseError(f"{what} multiplies entry by entry (W_QK * W_OV); the composition is the matrix "
                                "product, W_QK @ W_OV: what the earlier head writes, read by the later head's keys.")
        spectral = float(torch.linalg.matrix_norm(W_QK @ W_OV, ord=2)
                         / (torch.linalg.matrix_norm(W_QK, ord=2) * torch.linalg.matrix_norm(W_OV, ord=2)))
        if abs(out - spectral) < 1e-4:
            raise ExerciseError(f"{what} uses the spectral norm (ord=2, the largest singular value); the score uses "
                                "the Frobenius norm, torch.linalg.matrix_norm's default.")
        raise ExerciseError(f"{what} gives {out:.4f} on a random pair where the score is {right:.4f}: "
                            "||W_QK W_OV||_F / (||W_QK||_F ||W_OV||_F), torch.linalg.matrix_norm is Frobenius.")
    return passed(f"{what} matches the Frobenius ratio on 3 random pairs of rank-2 circuits.")


def _causal_mults(d_model: int, d_head: int, n_ctx: int) -> int:
    """One causal head that skips the masked pairs: 4 d_model d_head n_ctx + 2 d_head n_ctx (n_ctx + 1) / 2."""
    return 4 * d_model * d_head * n_ctx + d_head * n_ctx * (n_ctx + 1)


COST_HELPERS = ("helpers.cost.usual_mults", "helpers.cost.formula", "helpers.cost.usual_terms",
                "helpers.cost.in_loop_mults")


@exercise(answered_by=())
def check_causal_mults(fn) -> bool:
    """fn(d_model, d_head, n_ctx) -> int: the multiplications of one head that computes only the pairs the
    causal mask keeps (j <= i). No helper counts this; the helpers that count every pair are refused."""
    what = "causal_mults(d_model, d_head, n_ctx)"
    for d_model, d_head, n_ctx in ((10, 3, 7), (768, 64, 1024), (64, 32, 201), (5, 2, 1)):
        right = _causal_mults(d_model, d_head, n_ctx)
        out = number_result(call(fn, d_model, d_head, n_ctx, what=what, forbid=COST_HELPERS), what)
        if out == right:
            continue
        sizes = f"(d_model, d_head, n_ctx) = {(d_model, d_head, n_ctx)}"
        if not out.is_integer():
            raise ExerciseError(f"{what} for {sizes} gives {out}, not a whole number: n_ctx^2 / 2 is not the number "
                                "of pairs j <= i. Count them: 1 + 2 + ... + n_ctx = n_ctx (n_ctx + 1) / 2.")
        t = usual_terms(d_model, d_head, n_ctx)
        projections, n = t["projections"], n_ctx
        if out == projections + t["pairs"]:
            raise ExerciseError(f"{what} for {sizes} is the usual count, {right + d_head * n * (n - 1)}: it computes "
                                "all n_ctx^2 pairs, also the future keys j > i that the mask throws away. Count "
                                "only the pairs j <= i.")
        if out == projections + d_head * n * (n - 1):
            raise ExerciseError(f"{what} for {sizes} leaves out the diagonal: a query also attends to its own "
                                "position (j = i). The pairs j <= i number n_ctx (n_ctx + 1) / 2.")
        if out == projections + d_head * n * n:
            raise ExerciseError(f"{what} for {sizes} takes n_ctx^2 / 2 pairs; the pairs j <= i are "
                                "n_ctx (n_ctx + 1) / 2 (the diagonal is kept whole).")
        if out == projections + d_head * n * (n + 1) // 2:
            raise ExerciseError(f"{what} for {sizes} counts one d_head per pair; there are two: the dot product "
                                "q_i . k_j and the weighted sum A_ij v_j.")
        if out == right - projections:
            raise ExerciseError(f"{what} for {sizes} leaves out the projections: q, k, v and W_O z are still "
                                "computed once per position, 4 d_model d_head n_ctx — the mask does not change them.")
        if out == right - projections // 4:
            raise ExerciseError(f"{what} for {sizes} counts three projections; W_O is the fourth (d_model d_head "
                                "per position).")
        if out == projections // n + d_head * n * (n + 1):
            raise ExerciseError(f"{what} for {sizes}: the projections are 4 d_model d_head *per position*; "
                                "multiply by n_ctx.")
        raise ExerciseError(f"{what} for {sizes} gives {out:.0f}; expected {right}. The projections don't change "
                            "(4 d_model d_head per position); the pair work is 2 d_head for each pair j <= i.")
    return passed(f"{what} = 4 d_model d_head n_ctx + d_head n_ctx (n_ctx + 1) for 4 sizes, GPT-2 Small's head "
                  "among them.")
