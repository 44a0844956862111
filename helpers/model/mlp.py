"""The MLP — the post's "The multilayer perceptron" section.

    z  = ReLU(W_1 x + b_1)      W_1 (d_mlp, d_model), b_1 (d_mlp,)  -> z (d_mlp, n)
    m  = W_2 z + b_2            W_2 (d_model, d_mlp), b_2 (d_model,) -> m (d_model, n)
    x2 = x1 + m                 (the Block adds m to the residual stream)

Every matrix multiplies each column (position) of x on its own and the nonlinearity acts entry
by entry, so the MLP never mixes positions: permuting the columns of x permutes the columns of m
(tests/unit/model/test_mlp.py). By convention d_mlp = 4 * d_model. GPT-2 uses GELU(x) = x * Phi(x) (Phi the
standard normal CDF) instead of ReLU(x) = max(x, 0); ``Config.activation`` picks one.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn

from helpers.model import names
from helpers.model.config import Config
from helpers.model.hooks import HookPoint, as_is
from helpers.model.project import project


def relu(x: torch.Tensor) -> torch.Tensor:
    """ReLU(x) = max(x, 0), entry by entry."""
    return torch.clamp(x, min=0)


def gelu(x: torch.Tensor) -> torch.Tensor:
    """GELU(x) = x * Phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2, entry by entry (the exact form)."""
    return x * 0.5 * (1 + torch.erf(x / math.sqrt(2)))


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    """GPT-2's GELU: x * (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2, the tanh approximation of x * Phi(x)
    (within 5e-4 of the exact form; GPT-2 was trained with this one, so loading its weights needs it)."""
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


ACTIVATIONS = {"relu": relu, "gelu": gelu, "gelu_tanh": gelu_tanh}


def activation(name: str):
    """The nonlinearity called ``name`` ("relu", "gelu" or "gelu_tanh")."""
    if name not in ACTIVATIONS:
        raise ValueError(f"unknown MLP activation {name!r}; choose one of {sorted(ACTIVATIONS)}")
    return ACTIVATIONS[name]


def mlp(x: torch.Tensor, W_1: torch.Tensor, b_1: torch.Tensor, W_2: torch.Tensor, b_2: torch.Tensor,
        act: str = "relu",
        hook: Callable[[str, torch.Tensor], torch.Tensor] = as_is) -> tuple[torch.Tensor, torch.Tensor]:
    """The post's equations as a pure function: returns (z, m).

    x: (d_model, n) or (batch, d_model, n) -> z: (..., d_mlp, n), m: (..., d_model, n).
    hook: hook(name, activation) -> activation, called on z and on m as each is computed (the ``MLP`` module passes
    its hook points, ``helpers.model.hooks``): m is computed from what the hook returns for z.
    """
    d_mlp, d_model = W_1.shape
    if tuple(W_2.shape) != (d_model, d_mlp):
        raise ValueError(f"W_2 should be (d_model, d_mlp) = {(d_model, d_mlp)} to undo W_1 {tuple(W_1.shape)}, "
                         f"got {tuple(W_2.shape)}")
    if tuple(b_1.shape) != (d_mlp,) or tuple(b_2.shape) != (d_model,):
        raise ValueError(f"b_1 should be (d_mlp,) = ({d_mlp},) and b_2 (d_model,) = ({d_model},), "
                         f"got {tuple(b_1.shape)} and {tuple(b_2.shape)}")
    if x.dim() < 2 or x.shape[-2] != d_model:
        raise ValueError(f"the MLP expects x of shape (d_model, n) = ({d_model}, n) (or with a batch in front), "
                         f"got {tuple(x.shape)} — a sequence is one column per position")
    z = hook("z", activation(act)(project(W_1, x) + b_1[:, None]))  # W_1 x + b_1: (..., d_mlp, n)
    m = hook("m", project(W_2, z) + b_2[:, None])  # W_2 z + b_2: (..., d_model, n)
    return z, m


class MLP(nn.Module):
    """x (batch, d_model, n) -> m (batch, d_model, n); z and m pass the hook points "L{layer}.z" and "L{layer}.m"."""

    def __init__(self, cfg: Config, layer: int = 0):
        super().__init__()
        if cfg.d_mlp < 1:
            raise ValueError(f"an MLP needs d_mlp >= 1 (convention: 4 * d_model = {4 * cfg.d_model}), got {cfg.d_mlp}")
        self.cfg, self.layer = cfg, layer
        self.act = getattr(cfg, "activation", "relu")
        activation(self.act)  # fail early on an unknown name
        self.W_1 = nn.Parameter(torch.randn(cfg.d_mlp, cfg.d_model) * cfg.init_std)
        self.b_1 = nn.Parameter(torch.zeros(cfg.d_mlp))
        self.W_2 = nn.Parameter(torch.randn(cfg.d_model, cfg.d_mlp) * cfg.init_std)
        self.b_2 = nn.Parameter(torch.zeros(cfg.d_model))
        self.hooks = nn.ModuleDict({name: HookPoint(names.key(layer, name)) for name in names.MLP})  # z, m

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return mlp(x, self.W_1, self.b_1, self.W_2, self.b_2, self.act, hook=lambda name, t: self.hooks[name](t))[1]

    def extra_repr(self) -> str:
        return f"d_model={self.cfg.d_model}, d_mlp={self.cfg.d_mlp}, activation={self.act}"
