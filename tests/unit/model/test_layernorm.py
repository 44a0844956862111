"""LayerNorm / RMSNorm in the post's column-vector notation agree with torch's row-vector modules."""

import pytest
import torch

from helpers.model.layernorm import LayerNorm, RMSNorm, layer_norm, normalize, rms_norm


def test_normalize_gives_mean_0_variance_1_per_position():
    x = torch.randn(3, 16, 7) * 5 + 2  # (batch, d_model, n)
    y = normalize(x)
    assert torch.allclose(y.mean(dim=-2), torch.zeros(3, 7), atol=1e-5)
    assert torch.allclose(y.var(dim=-2, unbiased=False), torch.ones(3, 7), atol=1e-3)


@pytest.mark.parametrize("shape", [(16,), (16, 5), (4, 16, 5)])
def test_equals_torch_layernorm(shape):
    torch.manual_seed(0)
    ref = torch.nn.LayerNorm(16)
    with torch.no_grad():
        ref.weight.copy_(torch.randn(16))
        ref.bias.copy_(torch.randn(16))
    ours = LayerNorm(16)
    ours.load_state_dict({"gamma": ref.weight.detach(), "beta": ref.bias.detach()})
    x = torch.randn(shape) * 3 + 1
    # torch works on rows (..., n, d_model): transpose our columns into rows and back
    expected = ref(x) if x.dim() == 1 else ref(x.mT).mT
    assert torch.allclose(ours(x), expected, atol=1e-5)


def test_scale_invariance_and_shift_invariance():
    x = torch.randn(16, 5)
    g, b = torch.randn(16), torch.randn(16)
    assert torch.allclose(layer_norm(7.5 * x, g, b), layer_norm(x, g, b), atol=1e-4)
    assert torch.allclose(layer_norm(x + 3.0, g, b), layer_norm(x, g, b), atol=1e-4)


def test_gamma_beta_set_std_and_mean():
    x = torch.randn(64, 3)
    y = layer_norm(x, torch.full((64,), 2.0), torch.full((64,), -1.0))
    assert torch.allclose(y.mean(dim=0), torch.full((3,), -1.0), atol=1e-5)
    assert torch.allclose(y.std(dim=0, unbiased=False), torch.full((3,), 2.0), atol=1e-3)


def test_constant_vector_does_not_divide_by_zero():
    y = layer_norm(torch.ones(8, 2))
    assert torch.isfinite(y).all() and torch.allclose(y, torch.zeros(8, 2))


def test_rmsnorm_equals_torch():
    torch.manual_seed(1)
    ref = torch.nn.RMSNorm(16, eps=1e-5)
    with torch.no_grad():
        ref.weight.copy_(torch.randn(16))
    ours = RMSNorm(16)
    ours.load_state_dict({"gamma": ref.weight.detach()})
    x = torch.randn(2, 16, 5) + 2
    assert torch.allclose(ours(x), ref(x.mT).mT, atol=1e-5)
    assert torch.allclose(rms_norm(3 * x), rms_norm(x), atol=1e-4)


def test_rows_instead_of_columns_is_explained():
    ln = LayerNorm(16)
    with pytest.raises(ValueError, match="d_model = 16.*did you pass rows"):
        ln(torch.randn(5, 16))
    with pytest.raises(ValueError, match="scalar"):
        normalize(torch.tensor(1.0))
    with pytest.raises(ValueError, match="at least 1"):
        LayerNorm(0)


def test_integer_input_is_accepted():
    assert layer_norm(torch.arange(4)).dtype == torch.float32
