"""One Transformer block — the post's "The full one-layer Transformer":

    x_mid = x + sum_h o^h(LN(x))          attention, added to the residual stream
    x_out = x_mid + m(LN(x_mid))          MLP (only when d_mlp > 0), added again

LayerNorm (when ``cfg.layernorm``) is applied to the *input* of attention and of the MLP, as in
GPT-2 ("pre-LN"). After each residual add the block calls ``cache.add_resid(x)``, so a cache holds
x1, x2, ... in order; attention activations are stored as "L{layer}.q", ".k", ".v", ".S", ".A",
".r", ".o" (and ".o_heads", each head's own output).
"""

from __future__ import annotations

import torch
from torch import nn

from helpers.model.attention import Attention
from helpers.model.config import Config


class Block(nn.Module):
    """forward(x (batch, d_model, n), cache=None) -> x (batch, d_model, n)."""

    def __init__(self, cfg: Config, layer: int = 0):
        super().__init__()
        self.layer = layer
        self.ln_attn = self.ln_mlp = self.mlp = None
        if cfg.layernorm:
            from helpers.model.layernorm import LayerNorm  # the LayerNorm notebook's part

            self.ln_attn = LayerNorm(cfg.d_model)
        self.attn = Attention(cfg, layer)
        if cfg.d_mlp > 0:
            from helpers.model.mlp import MLP  # the MLP notebook's part

            self.mlp = MLP(cfg, layer)
            if cfg.layernorm:
                from helpers.model.layernorm import LayerNorm

                self.ln_mlp = LayerNorm(cfg.d_model)

    def forward(self, x: torch.Tensor, cache=None) -> torch.Tensor:
        h = self.ln_attn(x) if self.ln_attn is not None else x
        x = x + self.attn(h, cache)  # x_{l+1} = x_l + sum_h o^h
        if cache is not None:
            cache.add_resid(x)
        if self.mlp is not None:
            h = self.ln_mlp(x) if self.ln_mlp is not None else x
            x = x + self.mlp(h, cache)  # x_{l+2} = x_{l+1} + m
            if cache is not None:
                cache.add_resid(x)
        return x
