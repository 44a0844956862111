"""Embedding, positional embedding and unembedding — the post's "zero-layer Transformer".

Column vectors as in the post: ``W_E`` is (d_model, n_vocab), so the embedding of a one-hot token
t is ``W_E @ t`` — which just picks out column t of W_E. We therefore never build the one-hot
matrix: ``embedding(tokens, W_E.T)`` reads the same columns, faster (notebook 02 shows they agree).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from helpers.model.config import Config


class Embed(nn.Module):
    """x = W_E t: token ids (batch, n) -> embeddings (batch, d_model, n)."""

    def __init__(self, cfg: Config):
        super().__init__()
        self.W_E = nn.Parameter(torch.randn(cfg.d_model, cfg.n_vocab) * cfg.init_std)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return F.embedding(tokens, self.W_E.T).mT  # (batch, n, d_model) -> (batch, d_model, n)


class PosEmbed(nn.Module):
    """W_pos: one learned column per position; the first n columns are added to a context of n."""

    def __init__(self, cfg: Config):
        super().__init__()
        std = cfg.init_std if cfg.pos_init_std is None else cfg.pos_init_std
        self.W_pos = nn.Parameter(torch.randn(cfg.d_model, cfg.n_ctx) * std)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        n = tokens.shape[-1]
        return self.W_pos[:, :n]  # (d_model, n), broadcasts over the batch


class Unembed(nn.Module):
    """logits = W_U x: residual stream (batch, d_model, n) -> logits (batch, n_vocab, n)."""

    def __init__(self, cfg: Config):
        super().__init__()
        self.W_U = nn.Parameter(torch.randn(cfg.n_vocab, cfg.d_model) * cfg.init_std)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() == 2:
            return self.W_U @ x  # (n_vocab, n)
        # A batch: W_U @ x computes this very product, (batch * n, d_model) @ (d_model, n_vocab), then
        # copies it into (batch, n_vocab, n) order, which briefly doubles the largest tensor of the model
        # (200 texts of 32 tokens: 51 MB). Its transposed view has the same numbers without the copy.
        return (x.mT @ self.W_U.mT).mT  # (batch, n, n_vocab) -> (batch, n_vocab, n)


class TiedUnembed(Unembed):
    """GPT-2's unembedding: W_U = W_E^T, the embedding's matrix read the other way. It stores no weight of its own:
    W_U is a view of W_E, so the model has one matrix (n_vocab d_model fewer parameters) and a checkpoint holds it
    once, as the embedding's."""

    def __init__(self, embed: Embed):
        nn.Module.__init__(self)
        self.tied_to = (embed,)  # held in a tuple, not as a submodule: W_E belongs to the embedding alone

    @property
    def W_U(self) -> torch.Tensor:
        return self.tied_to[0].W_E.T  # (n_vocab, d_model): a view, no copy
