"""softmax and temperature."""

import pytest
import torch

from helpers.softmax import softmax, with_temperature


def test_matches_torch_softmax():
    x = torch.randn(5, 7, generator=torch.Generator().manual_seed(0))
    assert torch.allclose(softmax(x, dim=0), torch.softmax(x, dim=0))
    assert torch.allclose(softmax(x, dim=-1), torch.softmax(x, dim=-1))


def test_the_two_properties():
    p = softmax(torch.tensor([-3.0, 0.0, 2.5, 10.0]))
    assert (p > 0).all() and p.sum() == pytest.approx(1)


def test_large_logits_are_stable():
    p = softmax(torch.tensor([1000.0, 1001.0]))
    assert torch.isfinite(p).all()
    assert p.tolist() == pytest.approx([0.2689, 0.7311], abs=1e-4)


def test_minus_infinity_gets_zero():
    p = softmax(torch.tensor([1.0, 2.0, -float("inf")]))
    assert p.tolist() == pytest.approx([0.2689, 0.7311, 0.0], abs=1e-4)


def test_integer_input_is_accepted():
    assert softmax(torch.tensor([0, 0])).tolist() == [0.5, 0.5]


def test_temperature():
    p = torch.tensor([0.7, 0.2, 0.1])
    assert torch.allclose(with_temperature(p, 1.0), p)
    assert with_temperature(p, 0.01)[0] > 0.999
    assert torch.allclose(with_temperature(p, 1e4), torch.full((3,), 1 / 3), atol=1e-3)
    with pytest.raises(ValueError, match="temperature"):
        with_temperature(p, -1)
