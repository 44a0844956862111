"""Notebook 07: scale the input, set gamma and beta, watch the entries of one vector before and after."""

from __future__ import annotations

import ipywidgets as W
import torch

from helpers.model.layernorm import layer_norm
from helpers.plots import svg
from helpers.widgets.base import Explorer, chosen


class LayerNormExplorer(Explorer):
    """Sliders: input scale, input shift, gamma, beta (the same value in every entry of gamma / beta).

    x is one fixed random column with d_model entries; the picture shows the histogram of x and of
    LayerNorm(x). Whatever the scale and shift, the right-hand picture only moves with gamma, beta.
    """

    def __init__(self, d_model: int = 64, seed: int = 0):
        if d_model < 2:
            raise ValueError(f"d_model must be at least 2 to have a spread, got {d_model}")
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(d_model, generator=g) + 0.5 * torch.rand(d_model, generator=g)
        self.scale = W.FloatLogSlider(value=1.0, base=10, min=-2, max=2, step=0.1, description="input scale")
        self.shift = W.FloatSlider(value=0.0, min=-5, max=5, step=0.5, description="input shift")
        self.gamma = W.FloatSlider(value=1.0, min=-2, max=3, step=0.1, description="γ (gamma)")
        self.beta = W.FloatSlider(value=0.0, min=-3, max=3, step=0.1, description="β (beta)")
        super().__init__([self.scale, self.shift, self.gamma, self.beta])

    def values(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(x, LayerNorm(x)) for the current slider values."""
        d = len(self.x)
        x = chosen(self.scale) * self.x + chosen(self.shift)
        y = layer_norm(x, torch.full((d,), chosen(self.gamma)), torch.full((d,), chosen(self.beta)))
        return x, y

    def render(self):
        x, y = self.values()
        view = svg.row(*(svg.histogram(v.numpy(), title=f"{name}   mean {svg.signed(float(v.mean()))}, "
                                       f"std {float(v.std(unbiased=False)):.2f}", color=colour,
                                       ylabel="how many of the d_model entries")
                         for v, name, colour in ((x, "before: x", svg.GREY), (y, "after: LayerNorm(x)", svg.BLUE))))
        state = {"scale": chosen(self.scale), "shift": chosen(self.shift), "gamma": chosen(self.gamma),
                 "beta": chosen(self.beta)}
        x_std, y_std, g = float(x.std(unbiased=False)), float(y.std(unbiased=False)), abs(chosen(self.gamma))
        if g > 0 and y_std < 0.98 * g:  # variance not far above eps: the eps in sqrt(var + eps) shows
            after = (f"std {y_std:.2f}, a little below |γ| = {g:.2f}: the input's variance "
                     f"({x_std ** 2:.1e}) is no longer large next to ε = 1e-5")
        else:
            after = f"std {y_std:.2f} (= |γ|) — the input's scale and shift are gone"
        text = (f"x (d_model = {len(x)} entries) has mean {svg.signed(float(x.mean()))} and std {x_std:.2f}. "
                f"After LayerNorm: mean {svg.signed(float(y.mean()))} (= β), {after}.")
        return text, state, view
