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
    """forward(x (batch, d_model, n)) -> x (batch, d_model, n)."""

    def __init__(self, cfg: Config, layer: int = 0):
        super().__init__()
        self.layer = layer
        self.ln_attn = LayerNorm(cfg.d_model) if cfg.layernorm else None
        self.attn = Attention(cfg, layer)
        self.mlp = MLP(cfg, layer) if cfg.d_mlp > 0 else None
        self.ln_mlp = LayerNorm(cfg.d_model) if cfg.layernorm and self.mlp is not None else None
        # the stream as each reader sees it, and the two states this block writes (named by the model: x1, x2, ...)
        self.hooks = {name: HookPoint(names.read(layer, name), cached=False) for name in names.READS}
        self.hooks["resid_mid"] = HookPoint("")
        self.hooks["resid_post"] = HookPoint("")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q_in, k_in, v_in = (self.hooks[r](x) for r in ("x_q", "x_k", "x_v"))  # each is x unless a path is edited
        h = _ln(self.ln_attn, x)
        reads = tuple(h if t is x else _ln(self.ln_attn, t) for t in (q_in, k_in, v_in))
        x = self.hooks["resid_mid"](x + self.attn(h, None if all(t is h for t in reads) else reads))  # x + sum_h o^h
        if self.mlp is not None:
            x = self.hooks["resid_post"](x + self.mlp(_ln(self.ln_mlp, self.hooks["x_mlp"](x))))  # x_mid + m
        return x


def _ln(norm: LayerNorm | None, x: torch.Tensor) -> torch.Tensor:
    return x if norm is None else norm(x)
