"""One Transformer block — the post's "The full one-layer Transformer":

    x_mid = x + sum_h o^h(LN(x))          attention, added to the residual stream
    x_out = x_mid + m(LN(x_mid))          MLP (only when d_mlp > 0), added again

LayerNorm (when ``cfg.layernorm``) is applied to the *input* of attention and of the MLP, as in GPT-2 ("pre-LN").
x_mid and x_out are the residual-stream states x1, x2, ... (numbered by the model, ``helpers.model.names``); the
stream each reader sees (queries, keys, values, the MLP) passes a hook point of its own, the identity unless a
path-specific ablation edits it (``helpers.model.hooks``).
"""

from __future__ import annotations

import torch
from torch import nn

from helpers.model import names
from helpers.model.attention import Attention
from helpers.model.config import Config
from helpers.model.hooks import HookPoint
from helpers.model.layernorm import LayerNorm
from helpers.model.mlp import MLP


class Block(nn.Module):
    """forward(x (batch, d_model, n)) -> x (batch, d_model, n): the post's two lines, each a residual add.

    The queries, keys and values each read the stream through a hook point of their own (``hook_x_q`` ...) before
    the LayerNorm, and so does the MLP (``hook_x_mlp``): the identity unless a path-specific ablation edits what one
    reader sees (``helpers.interp.paths``). The states the block writes pass ``hook_x_mid`` and ``hook_x_out``, named
    as the model numbers them (x1, x2, ... : one after every residual add)."""

    def __init__(self, cfg: Config, layer: int = 0):
        super().__init__()
        self.layer = layer
        has_mlp = cfg.d_mlp > 0
        first = layer * (1 + has_mlp)  # this block reads the state x_first and writes the next one or two
        # (modules registered in the order a forward pass reaches them: the model lists its hook points that way)
        self.hook_x_q, self.hook_x_k, self.hook_x_v = (HookPoint(names.read(layer, r), cached=False)
                                                       for r in ("x_q", "x_k", "x_v"))
        self.ln_attn = LayerNorm(cfg.d_model) if cfg.layernorm else nn.Identity()
        self.attn = Attention(cfg, layer)
        self.hook_x_mid = HookPoint(names.resid(first + 1))
        self.mlp = MLP(cfg, layer) if has_mlp else None
        if has_mlp:
            self.hook_x_mlp = HookPoint(names.read(layer, "x_mlp"), cached=False)
            self.ln_mlp = LayerNorm(cfg.d_model) if cfg.layernorm else nn.Identity()
            self.hook_x_out = HookPoint(names.resid(first + 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x_q, x_k, x_v = (self.ln_attn(read(x)) for read in (self.hook_x_q, self.hook_x_k, self.hook_x_v))
        x = self.hook_x_mid(x + self.attn(x_q, x_k, x_v))  # x_mid = x + sum_h o^h(LN(x))
        if self.mlp is not None:
            x = self.hook_x_out(x + self.mlp(self.ln_mlp(self.hook_x_mlp(x))))  # x_out = x_mid + m(LN(x_mid))
        return x
