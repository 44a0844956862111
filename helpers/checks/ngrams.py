"""Notebook 01 exercise: turn bigram counts into a bigram table (columns that sum to 1)."""

from __future__ import annotations

import torch

from helpers.checks.base import ExerciseError, as_tensor, call, exercise, expect_shape, passed

# counts C[b, a] = how often b follows a; token 3 is never followed by anything
_C = torch.tensor([[0.0, 2.0, 1.0, 0.0],
                   [4.0, 0.0, 1.0, 0.0],
                   [0.0, 6.0, 0.0, 0.0],
                   [4.0, 0.0, 2.0, 0.0]])


@exercise(answered_by=("helpers.ngrams.normalize_columns",))
def check_bigram_table(fn) -> bool:
    """``fn(C)`` takes counts C[b, a] (b follows a), shape (n_vocab, n_vocab), and must return
    P with P[:, a] the probability of each next token after a: every seen column sums to 1."""
    what = "normalize(C)"
    C = _C.clone()
    out = as_tensor(call(fn, C, what=what), what)
    if not torch.equal(C, _C):
        raise ExerciseError(f"{what} changed the counts it was given; compute a new tensor instead of "
                            "dividing C in place (C /= ... changes the caller's table).")
    expect_shape(out, tuple(_C.shape), what, "The table has one row and one column per token.")
    out = out.double()
    if torch.isnan(out).any():
        raise ExerciseError(f"{what} contains NaN. Token 3 is never followed by anything, so its column "
                            "of counts sums to 0 and 0/0 = NaN: leave such a column at zero "
                            "(e.g. divide by sums.clamp(min=1e-12)).")
    if (out < 0).any():
        raise ExerciseError(f"{what} has negative entries; probabilities cannot be negative.")
    col, row = out.sum(0), out.sum(1)
    if torch.allclose(out, _C.double()):
        raise ExerciseError(f"{what} returned the counts unchanged: divide each column by its total.")
    seen = _C.sum(0) > 0
    if not torch.allclose(col[seen], torch.ones(int(seen.sum()), dtype=out.dtype), atol=1e-5):
        if torch.allclose(row[_C.sum(1) > 0], torch.ones(int((_C.sum(1) > 0).sum()), dtype=out.dtype), atol=1e-5):
            raise ExerciseError(f"The rows of {what} sum to 1, but in the post's convention each *column* is a "
                                "distribution: P[:, a] is what comes after token a. Normalise over dim 0.")
        if torch.isclose(out.sum(), torch.tensor(1.0, dtype=out.dtype)):
            raise ExerciseError(f"The whole table of {what} sums to 1 (a joint distribution of pairs). "
                                "We want the next token *given* the previous one: each column on its own sums to 1.")
        raise ExerciseError(f"The columns of {what} sum to {col.tolist()}, not 1.")
    if out[:, ~seen].abs().sum() > 0:
        raise ExerciseError(f"{what}: token 3 was never followed by anything; leave its column at zero "
                            "(there is nothing to count) rather than inventing probabilities.")
    expected = _C.double() / _C.double().sum(0).clamp(min=1e-12)
    if not torch.allclose(out, expected, atol=1e-5):
        raise ExerciseError(f"Each column of {what} sums to 1 but the entries are not counts / column total.")
    return passed("Correct: P[:, a] = C[:, a] / sum_b C[b, a], and an unseen token's column stays zero.")
