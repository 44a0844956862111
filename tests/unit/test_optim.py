"""helpers.optim.AdamW is torch.optim.AdamW, bit for bit, without importing torch._dynamo (helpers/optim.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from helpers.model.config import Config
from helpers.optim import AdamW
from helpers.train import fresh_model, random_windows

CFG = Config(n_vocab=31, d_model=16, n_ctx=8, n_layers=2, n_heads=2, d_head=8, d_mlp=32, layernorm=True)


def _train(make_opt, steps: int = 40, seed: int = 0):
    model = fresh_model(CFG, seed=seed)
    ids = torch.randint(0, CFG.n_vocab, (500,), generator=torch.Generator().manual_seed(seed))
    g = torch.Generator().manual_seed(seed + 1)
    opt = make_opt(model.parameters())
    losses = []
    for _ in range(steps):
        loss = model.loss(random_windows(ids, CFG.n_ctx, 4, g))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return model, losses


@pytest.mark.parametrize("kw", [dict(lr=1e-2, weight_decay=0.1), dict(lr=3e-3), dict(lr=5e-2, weight_decay=0.0),
                                dict(lr=1e-2, betas=(0.8, 0.95), eps=1e-6)])
def test_same_bits_as_torch_adamw(kw):
    ours, our_losses = _train(lambda p: AdamW(p, **kw))
    ref, ref_losses = _train(lambda p: torch.optim.AdamW(p, **kw))
    assert our_losses == ref_losses
    for (name, a), b in zip(ours.named_parameters(), ref.parameters()):
        assert torch.equal(a, b), f"{name} differs after 40 steps"


def test_weight_decay_zero_is_torch_adam():
    ours, _ = _train(lambda p: AdamW(p, lr=5e-2, weight_decay=0.0))
    ref, _ = _train(lambda p: torch.optim.Adam(p, lr=5e-2))
    assert all(torch.equal(a, b) for a, b in zip(ours.parameters(), ref.parameters()))


def test_a_parameter_without_gradient_is_left_alone():
    a, b = torch.nn.Parameter(torch.ones(3)), torch.nn.Parameter(torch.ones(3))
    opt = AdamW([a, b], lr=0.1, weight_decay=0.5)
    (a * 2).sum().backward()
    opt.step()
    assert torch.equal(b, torch.ones(3)) and not torch.equal(a, torch.ones(3))
    opt.zero_grad()
    assert a.grad is None


def test_bad_arguments_say_what_is_wrong():
    with pytest.raises(ValueError, match="no parameters"):
        AdamW([])
    with pytest.raises(ValueError, match="betas"):
        AdamW([torch.nn.Parameter(torch.ones(1))], betas=(0.9, 1.0))


@pytest.mark.slow  # starts a Python
@pytest.mark.each_python
def test_training_does_not_import_dynamo():
    code = ("import sys; from helpers.train import fresh_model, train; from helpers.model.config import Config; "
            "import torch; cfg = Config(n_vocab=11, d_model=8, n_ctx=4, n_layers=1, n_heads=2, d_head=4, d_mlp=8); "
            "train(fresh_model(cfg, seed=0), torch.randint(0, 11, (200,)), steps=3, batch_size=2, progress=False); "
            "print('torch._dynamo' in sys.modules, 'sympy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"], "training imported torch._dynamo / sympy (~65 MB)"
