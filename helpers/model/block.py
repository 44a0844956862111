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
        # None, or functions set (and restored) only by helpers.interp.paths' context manager, for path-specific
        # ablation: edit_attn_inputs(x) -> (x_q, x_k, x_v), the streams this block's queries, keys and values read
        # (each (batch, d_model, n), or (batch, n_heads, d_model, n) for one per head), and edit_mlp_input(x) -> x,
        # the stream its MLP reads. Both act on the residual stream before the LayerNorm.
        self.edit_attn_inputs = None
        self.edit_mlp_input = None
        # None, or a function (x, after) -> x set (and restored) only by helpers.interp.patching: the residual
        # stream right after this block's attention (after="attn") or MLP (after="mlp") add, replaced in part
        self.edit_resid = None
        if cfg.d_mlp > 0:
            from helpers.model.mlp import MLP  # the MLP notebook's part

            self.mlp = MLP(cfg, layer)
            if cfg.layernorm:
                from helpers.model.layernorm import LayerNorm

                self.ln_mlp = LayerNorm(cfg.d_model)

    def forward(self, x: torch.Tensor, cache=None) -> torch.Tensor:
        ln_attn = self.ln_attn if self.ln_attn is not None else (lambda t: t)
        inputs = None
        if self.edit_attn_inputs is not None:  # a path-specific ablation: q, k, v read edited streams
            inputs = tuple(ln_attn(t) for t in self.edit_attn_inputs(x))
        x = x + self.attn(ln_attn(x), cache, inputs=inputs)  # x_{l+1} = x_l + sum_h o^h
        if self.edit_resid is not None:  # activation patching of the stream itself
            x = self.edit_resid(x, "attn")
        if cache is not None:
            cache.add_resid(x)
        if self.mlp is not None:
            read = self.edit_mlp_input(x) if self.edit_mlp_input is not None else x
            h = self.ln_mlp(read) if self.ln_mlp is not None else read
            x = x + self.mlp(h, cache)  # x_{l+2} = x_{l+1} + m
            if self.edit_resid is not None:
                x = self.edit_resid(x, "mlp")
            if cache is not None:
                cache.add_resid(x)
        return x
