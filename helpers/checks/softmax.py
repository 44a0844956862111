"""Notebook 02 exercise: a numerically stable softmax over the post's column vectors."""

from __future__ import annotations

import torch

from helpers.checks.base import (ExerciseError, as_tensor, call, close, exercise, expect_shape, named, passed,
                                 tensor_result)
# the one-call answers: the series' helper and torch's own functions (base.call's profiler does not see
# the method x.softmax(0): a bound built-in method is a new object at every call)
SOFTMAXES = ("helpers.softmax.softmax", "torch.softmax", "torch.nn.functional.softmax", "torch.special.softmax",
             "torch.Tensor.softmax", "torch.log_softmax", "torch.nn.functional.log_softmax",
             "torch.special.log_softmax", "torch.Tensor.log_softmax")   # log_softmax(x).exp() is softmax too


@exercise(answered_by=("helpers.softmax.softmax",))
def check_softmax(fn) -> bool:
    """``fn(x)`` takes logits x of shape (n_vocab, n) — one column per position, as in the post —
    and must return softmax over each column (dim 0), without overflow for large logits."""
    what = named(fn, "softmax", "(x)")
    x = torch.tensor([[1.0, 0.0], [2.0, 0.0], [3.0, 5.0]])  # (n_vocab=3, n=2)
    out = as_tensor(call(fn, x.clone(), what=what, forbid=SOFTMAXES), what)
    expect_shape(out, (3, 2), what, "softmax keeps the shape of its input.")
    out = out.double()
    want = torch.softmax(x.double(), dim=0)
    if not close(out, want, atol=1e-5, rtol=1e-5):
        if close(out, torch.softmax(x.double(), dim=1), atol=1e-5, rtol=1e-5):
            raise ExerciseError(f"Your {named(fn, 'softmax')} normalises each *row*. In the post each column is one "
                                "position's logits: sum over dim 0 (the n_vocab axis).")
        if close(out, torch.softmax(x.double().flatten(), 0).reshape(3, 2), atol=1e-5, rtol=1e-5):
            raise ExerciseError(f"Your {named(fn, 'softmax')} normalises over the whole matrix; "
                                "each column should sum to 1 on its own.")
        if close(out, x.double().exp(), atol=1e-5, rtol=1e-5):
            raise ExerciseError("You return exp(x) but forgot to divide by the sum: the entries must sum to 1.")
        if (out < 0).any():
            raise ExerciseError(f"{named(fn, 'softmax')} must be positive everywhere (exp is never negative).")
        raise ExerciseError(f"{what} gave {out.tolist()}, expected {want.tolist()}.")
    big = torch.tensor([[1000.0], [1001.0]])
    out_big = as_tensor(call(fn, big, what=what, forbid=SOFTMAXES), what).double()
    if not torch.isfinite(out_big).all():
        raise ExerciseError("For logits [1000, 1001] you get NaN or inf: exp(1000) overflows. Subtract the "
                            "column's maximum before exp — the result is mathematically the same.")
    if not close(out_big.flatten(), torch.tensor([0.2689, 0.7311], dtype=torch.float64), atol=1e-4, rtol=1e-5):
        raise ExerciseError(f"For logits [1000, 1001] expected [0.2689, 0.7311], got {out_big.flatten().tolist()}.")
    # columns on very different scales: subtracting one maximum for the whole matrix is not enough
    mixed = torch.tensor([[1000.0, -1000.0, 3.0], [999.0, -1002.0, 3.0]])
    out_mixed = as_tensor(call(fn, mixed, what=what, forbid=SOFTMAXES), what)
    expect_shape(out_mixed, (2, 3), what, "softmax keeps the shape of its input.")
    out_mixed = out_mixed.double()
    want_mixed = torch.softmax(mixed.double(), 0)
    if not (torch.isfinite(out_mixed).all() and close(out_mixed, want_mixed, atol=1e-4, rtol=1e-5)):
        raise ExerciseError("For a column of logits around 1000 next to one around -1000, your "
                            f"{named(fn, 'softmax')} gives {out_mixed.tolist()}. Subtract each *column's own* maximum "
                            "(x.max(dim=0, keepdim=True)), not one number for the whole matrix.")
    masked = torch.tensor([[1.0], [2.0], [-float("inf")]])
    out_m = as_tensor(call(fn, masked, what=what, forbid=SOFTMAXES), what).double().flatten()
    if not close(out_m, torch.tensor([0.2689, 0.7311, 0.0], dtype=torch.float64), atol=1e-4, rtol=1e-5):
        raise ExerciseError(f"{named(fn, 'softmax')}([1, 2, -inf]) should be [0.269, 0.731, 0]: exp(-inf) = 0. "
                            f"Got {out_m.tolist()}.")
    g = torch.Generator().manual_seed(7)
    for shape in ((7, 5), (1, 4), (13, 1)):  # sizes the notebook never uses, one with a single token
        x = torch.randn(*shape, generator=g) * 5
        out = tensor_result(call(fn, x.clone(), what=what, forbid=SOFTMAXES), shape, what,
                            "softmax keeps the shape of its input.")
        if not close(out, torch.softmax(x.double(), 0), atol=1e-5, rtol=1e-5):
            raise ExerciseError(f"For random logits of shape {shape} your {named(fn, 'softmax')}'s columns are wrong "
                                f"(their sums: {[round(v, 4) for v in out.sum(0).tolist()]}).")
    return passed("Correct: positive, columns sum to 1, and stable for large logits.")
