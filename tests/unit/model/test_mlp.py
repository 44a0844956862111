"""The MLP of the post: shapes, equations, per-position action, activations, bad input."""

import math

import pytest
import torch
from torch.nn import functional as F

from helpers.model.config import Config
from helpers.model.mlp import MLP, activation, gelu, mlp, relu
from helpers.model.names import key

CFG = Config(n_vocab=10, d_model=8, d_mlp=32, n_ctx=6)


def model(cfg=CFG, seed=0):
    torch.manual_seed(seed)
    m = MLP(cfg, layer=0)
    with torch.no_grad():
        for p in m.parameters():
            p.normal_()  # non-zero biases too
    return m


def test_shapes_and_names():
    m = model()
    assert m.W_1.shape == (32, 8) and m.b_1.shape == (32,)
    assert m.W_2.shape == (8, 32) and m.b_2.shape == (8,)
    seen = {}
    m.hooks["z"].fns.append(lambda t: seen.update(z=t))   # readers: they return None, the activation goes on
    m.hooks["m"].fns.append(lambda t: seen.update(m=t))
    out = m(torch.randn(3, 8, 5))
    assert out.shape == (3, 8, 5)
    assert m.hooks["z"].name == key(0, "z") and m.hooks["m"].name == key(0, "m")
    assert seen["z"].shape == (3, 32, 5) and torch.equal(seen["m"], out)


def test_equations():
    m = model()
    x = torch.randn(8, 5)
    z = torch.clamp(m.W_1 @ x + m.b_1[:, None], min=0)
    assert torch.allclose(m(x), m.W_2 @ z + m.b_2[:, None], atol=1e-5)
    assert (z >= 0).all()


def test_each_position_alone():
    m = model()
    x = torch.randn(2, 8, 6)
    perm = torch.randperm(6)
    assert torch.allclose(m(x[..., perm]), m(x)[..., perm], atol=1e-5)
    # position by position gives the same columns as the whole sequence at once
    cols = torch.stack([m(x[..., i:i + 1])[..., 0] for i in range(6)], dim=-1)
    assert torch.allclose(cols, m(x), atol=1e-5)


def test_activations():
    x = torch.linspace(-4, 4, 101)
    assert torch.equal(relu(x), F.relu(x))
    assert torch.allclose(gelu(x), F.gelu(x), atol=1e-6)
    assert abs(float(gelu(torch.tensor(1.0))) - 0.5 * (1 + math.erf(1 / math.sqrt(2)))) < 1e-6
    assert float(gelu(torch.tensor(-0.75))) < 0  # GELU dips below zero, ReLU never does
    g = model(Config(n_vocab=10, d_model=8, d_mlp=32, activation="gelu"))
    x = torch.randn(8, 4)
    assert torch.allclose(g(x), g.W_2 @ F.gelu(g.W_1 @ x + g.b_1[:, None]) + g.b_2[:, None], atol=1e-5)


def test_bad_input_is_explained():
    m = model()
    with pytest.raises(ValueError, match=r"\(d_model, n\) = \(8, n\)"):
        m(torch.randn(5, 8))
    with pytest.raises(ValueError, match="d_mlp >= 1"):
        MLP(Config(n_vocab=10, d_model=8), 0)
    with pytest.raises(ValueError, match="activation"):
        Config(n_vocab=10, activation="tanh")
    with pytest.raises(ValueError, match="unknown MLP activation"):
        activation("swish")
    with pytest.raises(ValueError, match="W_2 should be"):
        mlp(torch.randn(8, 2), torch.randn(32, 8), torch.randn(32), torch.randn(32, 8), torch.randn(8))
