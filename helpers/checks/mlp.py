"""Notebook 06: write the MLP's two equations."""

from __future__ import annotations

from typing import Callable

import torch

from helpers.checks.base import ExerciseError, as_tensor, call, exercise, expect_shape, passed
from helpers.model.mlp import mlp


@exercise(answered_by=("helpers.model.mlp.mlp",))
def check_mlp(fn: Callable) -> bool:
    """fn(x, W_1, b_1, W_2, b_2) with x (d_model, n) -> m (d_model, n)."""
    g = torch.Generator().manual_seed(6)
    d_model, d_mlp, n = 4, 16, 3
    x = torch.randn(d_model, n, generator=g)
    W_1, b_1 = torch.randn(d_mlp, d_model, generator=g), torch.randn(d_mlp, generator=g)
    W_2, b_2 = torch.randn(d_model, d_mlp, generator=g), torch.randn(d_model, generator=g)
    what = "your mlp(x, W_1, b_1, W_2, b_2)"
    try:
        out = as_tensor(call(fn, x.clone(), W_1, b_1, W_2, b_2, what=what), what)
    except ExerciseError as e:
        if "must match the size" in str(e):
            raise ExerciseError(f"{e}. Hint: a bias is one number per row; add it as a column, b_1[:, None], "
                                "so the same bias is added at every position.") from None
        raise
    if tuple(out.shape) == (d_mlp, n):
        raise ExerciseError(f"{what} returned shape (d_mlp, n) = {(d_mlp, n)}: that is the hidden layer z. "
                            "Project back down with m = W_2 z + b_2.")
    expect_shape(out, (d_model, n), what, "m has one column of d_model numbers per position, like x.")
    z, want = mlp(x, W_1, b_1, W_2, b_2)
    if torch.allclose(out, want, atol=1e-4):
        return passed("mlp is right: z = ReLU(W_1 x + b_1), m = W_2 z + b_2, one position at a time.")
    col = lambda b: b[:, None]  # noqa: E731
    pre = W_1 @ x + col(b_1)
    mistakes = [
        (W_2 @ pre + col(b_2), "There is no nonlinearity: without ReLU, W_2 (W_1 x + b_1) + b_2 is just one "
                               "linear map, and the MLP could do nothing a single matrix could not. Apply ReLU to "
                               "W_1 x + b_1 (torch.relu or .clamp(min=0))."),
        (torch.relu(want), "ReLU is applied to the output m as well; the post applies it only to the hidden "
                           "layer z. m = W_2 z + b_2 can be negative."),
        (x + want, "You returned x + m. The MLP returns m; the residual add x2 = x1 + m happens outside it."),
        (W_2 @ torch.relu(W_1 @ x) + col(b_2), "b_1 is missing: z = ReLU(W_1 x + b_1)."),
        (W_2 @ z, "b_2 is missing: m = W_2 z + b_2."),
        (W_2 @ torch.relu(W_1 @ x), "Both biases are missing: add b_1 before the ReLU and b_2 at the end."),
    ]
    for wrong, message in mistakes:
        if torch.allclose(out, wrong, atol=1e-4):
            raise ExerciseError(message)
    raise ExerciseError("Not the MLP yet. Compute z = ReLU(W_1 @ x + b_1[:, None]) of shape (d_mlp, n), then "
                        "m = W_2 @ z + b_2[:, None]; the [:, None] turns a bias into a column added to every position.")
