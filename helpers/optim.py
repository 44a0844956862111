"""AdamW, the optimizer every model of the series is trained with (the post's training loop: loss, backward, step).

For each parameter θ with gradient g, at step t (counting from 1), with learning rate lr, betas (β1, β2), eps and
weight decay λ:

    θ ← θ (1 − lr λ)                                  (decoupled weight decay: shrink first)
    m ← β1 m + (1 − β1) g                              (running mean of the gradient)
    v ← β2 v + (1 − β2) g²                             (running mean of its square)
    θ ← θ − lr / (1 − β1ᵗ) · m / (√v / √(1 − β2ᵗ) + eps)

Why not ``torch.optim.AdamW``: building any ``torch.optim`` optimizer imports ``torch._dynamo`` and sympy, about
65 MB in every kernel that trains (notebooks 02, 06, 08, 09, 10; docs/speed.md), for these few
lines. This class does exactly the arithmetic of torch's single-tensor AdamW, the one torch runs on the CPU, in the
same order, so a training run is bit for bit the one ``torch.optim.AdamW`` gives (tests/unit/test_optim.py).
"""

from __future__ import annotations

from collections.abc import Iterable

import torch


class AdamW:
    """``AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2)``, with ``step()`` and
    ``zero_grad()`` as in torch (the same defaults). ``weight_decay=0`` is plain Adam."""

    def __init__(self, params: Iterable[torch.nn.Parameter], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8, weight_decay: float = 1e-2):
        self.params = list(params)
        if not self.params:
            raise ValueError("AdamW got no parameters to train (model.parameters() was empty)")
        if not all(isinstance(p, torch.Tensor) for p in self.params):
            raise TypeError("AdamW trains tensors: pass model.parameters()")
        if lr < 0 or eps < 0 or weight_decay < 0 or not all(0 <= b < 1 for b in betas):
            raise ValueError(f"AdamW needs lr, eps, weight_decay >= 0 and 0 <= betas < 1; got lr={lr}, betas={betas}, "
                             f"eps={eps}, weight_decay={weight_decay}")
        self.lr, self.betas, self.eps, self.weight_decay = lr, tuple(betas), eps, weight_decay
        self.state: dict[torch.Tensor, dict] = {}

    @torch.no_grad()
    def step(self) -> None:
        beta1, beta2 = self.betas
        lr, eps, wd = self.lr, self.eps, self.weight_decay
        for theta in self.params:
            g = theta.grad
            if g is None:  # (a parameter the loss did not reach is left alone, as torch does)
                continue
            s = self.state.get(theta)
            if s is None:
                s = self.state[theta] = {"t": 0.0, "m": torch.zeros_like(theta, memory_format=torch.preserve_format),
                                         "v": torch.zeros_like(theta, memory_format=torch.preserve_format)}
            s["t"] += 1.0
            t, m, v = s["t"], s["m"], s["v"]
            if wd != 0:
                theta.mul_(1 - lr * wd)
            m.lerp_(g, 1 - beta1)
            v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
            step_size = lr / (1 - beta1**t)
            denom = (v.sqrt() / (1 - beta2**t) ** 0.5).add_(eps)
            theta.addcdiv_(m, denom, value=-step_size)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for theta in self.params:
            if theta.grad is None:
                continue
            if set_to_none:
                theta.grad = None
            else:
                theta.grad.detach_().zero_()
