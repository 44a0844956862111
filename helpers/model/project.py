"""W x for a whole stream at once: the post's column form (a weight times every column of x), computed fast.

Every weight of the model multiplies the residual stream column by column: q = W_Q x, z = ReLU(W_1 x + b_1), ... With a
batch, ``W @ x`` broadcasts W over the texts (and, for per-head weights, x over the heads): torch copies both into
one small product per text (and head). The same numbers come from ONE product of every position of every text, as
rows, with W's rows side by side: (batch n, d_in) @ (d_in, n_heads d_out) — the form GPT-2's own code and
transformers use, and the one that keeps GPT-2 Small's forward pass close to theirs.

The one-product form is used for frozen weights (``requires_grad`` off: GPT-2, loaded for reading). For the
series' own models the broadcast form is kept: in training its gradient sums over the texts in the order every
shipped checkpoint was trained with, so their numbers stay exactly as the notebooks show them.
"""

from __future__ import annotations

import torch


def project(W: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """W x for every column of x: the one place the model multiplies a weight into the stream.

    W (d_out, d_in), x (..., d_in, n) -> (..., d_out, n);
    per head, W (n_heads, d_out, d_in), x (..., 1 or n_heads, d_in, n) -> (..., n_heads, d_out, n): with 1, every
    head reads the same stream; with n_heads, head h reads its own (a path-specific ablation's edit).
    """
    one_stream = W.dim() == 2 or x.shape[-3] == 1
    if W.requires_grad or not one_stream or x.dim() < 3 + (W.dim() == 3):
        return W @ x  # the broadcast form (see the module's text)
    if W.dim() == 2:
        return (x.mT @ W.mT).mT  # rows (..., n, d_in) @ W^T -> (..., n, d_out), seen as (..., d_out, n)
    H, d_out, d_in = W.shape
    out = x.squeeze(-3).mT @ W.reshape(H * d_out, d_in).mT  # (..., n, n_heads d_out): every head's rows side by side
    return out.unflatten(-1, (H, d_out)).movedim(-3, -1)  # (..., n_heads, d_out, n)


def per_head(W_O: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    """o^h = W_O^h r^h for every head: W_O (n_heads, d_model, d_head), r (..., n_heads, d_head, n) -> (..., n_heads,
    d_model, n). For a frozen W_O one product per head over every position of every text, without copying W_O for
    each text; otherwise the broadcast form (see the module's text)."""
    if W_O.requires_grad or r.dim() != 4:
        return W_O @ r
    return torch.einsum("hdk,bhkn->bhdn", W_O, r)
