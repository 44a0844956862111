"""Attention in the post's notation: the three forms agree, the mask is causal, bad input is explained."""

import math

import pytest
import torch
from torch.nn import functional as F

from helpers.model import attention as att
from helpers.model.config import Config
from helpers.model.transformer import Transformer

H, D_HEAD, D_MODEL, N = 3, 5, 12, 7


def weights(seed=0, H=H, d_head=D_HEAD, d_model=D_MODEL):
    g = torch.Generator().manual_seed(seed)
    W_Q, W_K, W_V = (torch.randn(H, d_head, d_model, generator=g, dtype=torch.float64) for _ in range(3))
    W_O = torch.randn(H, d_model, d_head, generator=g, dtype=torch.float64)
    return W_Q, W_K, W_V, W_O


def stream(seed=1, batch=None, n=N):
    g = torch.Generator().manual_seed(seed)
    shape = (D_MODEL, n) if batch is None else (batch, D_MODEL, n)
    return torch.randn(*shape, generator=g, dtype=torch.float64)


def test_shapes_follow_the_post():
    out = att.attention(stream(), *weights())
    assert out.q.shape == out.k.shape == out.v.shape == out.r.shape == (H, D_HEAD, N)
    assert out.S.shape == out.A.shape == (H, N, N)
    assert out.o_heads.shape == (H, D_MODEL, N) and out.o.shape == (D_MODEL, N)
    sq = att.single_query(stream(), *(w[0] for w in weights()))
    assert sq.q_n.shape == (D_HEAD, 1) and sq.k.shape == sq.v.shape == (D_HEAD, N)
    assert sq.s.shape == sq.a.shape == (N,)
    assert sq.r_n.shape == (D_HEAD, 1) and sq.o_n.shape == (D_MODEL, 1)


def test_batch_broadcasts():
    x = stream(batch=4)
    out = att.attention(x, *weights())
    assert out.A.shape == (4, H, N, N) and out.o.shape == (4, D_MODEL, N)
    for b in range(4):
        torch.testing.assert_close(out.o[b], att.attention(x[b], *weights()).o)


def test_matrix_form_equals_loop_of_single_query_steps():
    x, (W_Q, W_K, W_V, W_O) = stream(), weights()
    out = att.attention(x, W_Q, W_K, W_V, W_O)
    for h in range(H):
        for i in range(N):
            sq = att.single_query(x[:, : i + 1], W_Q[h], W_K[h], W_V[h], W_O[h])
            torch.testing.assert_close(out.A[h, i, : i + 1], sq.a)
            torch.testing.assert_close(out.S[h, i, : i + 1], sq.s)
            torch.testing.assert_close(out.r[h, :, i : i + 1], sq.r_n)
            torch.testing.assert_close(out.o_heads[h, :, i : i + 1], sq.o_n)


def test_single_query_broadcasts_over_heads():
    x, Ws = stream(), weights()
    sq = att.single_query(x, *Ws)
    out = att.attention(x, *Ws)
    torch.testing.assert_close(sq.a, out.A[:, -1])
    torch.testing.assert_close(sq.o_n.sum(0), out.o[:, -1:])


def test_sum_of_heads_equals_concat():
    x, Ws = stream(batch=2), weights()
    out = att.attention(x, *Ws)
    torch.testing.assert_close(att.concat_output(out.r, Ws[3]), out.o)
    torch.testing.assert_close(sum(Ws[3][h] @ out.r[:, h] for h in range(H)), out.o)


def test_equals_torch_scaled_dot_product_attention():
    x, (W_Q, W_K, W_V, W_O) = stream(batch=2), weights()
    out = att.attention(x, W_Q, W_K, W_V, W_O)
    Q, K, V = att.row_convention(x, W_Q, W_K, W_V)  # (batch, H, n, d_head)
    torch.testing.assert_close(Q, out.q.mT)
    ref = F.scaled_dot_product_attention(Q, K, V, is_causal=True)  # rows: r^T
    torch.testing.assert_close(ref, out.r.mT)
    ref_unmasked = F.scaled_dot_product_attention(Q, K, V)
    torch.testing.assert_close(ref_unmasked, att.attention(x, W_Q, W_K, W_V, W_O, mask=False).r.mT)


def test_causal_mask_leaves_every_row_an_entry():
    for n in (1, 2, 5, 32):
        m = att.causal_mask(n)
        assert (~m).any(-1).all(), "every query must see at least itself"
        assert not m.diagonal().any() and m.sum() == n * (n - 1) // 2
    A = att.attention(stream(), *weights()).A
    torch.testing.assert_close(A.sum(-1), torch.ones(H, N, dtype=A.dtype))
    assert torch.isfinite(A).all() and (A.triu(1) == 0).all()
    # even extreme scores cannot empty a row
    S = torch.full((4, 4), -1e30)
    assert torch.isfinite(att.softmax_star(S)).all()


def test_post_example_softmax_padding():
    p = att.softmax(torch.tensor([1.0, 2.0, float("-inf")]))
    torch.testing.assert_close(p, torch.tensor([0.2689, 0.7311, 0.0]), atol=1e-4, rtol=0)


def test_changing_a_later_token_never_changes_an_earlier_output():
    x, Ws = stream(), weights()
    base = att.attention(x, *Ws).o
    for j in range(N):
        x2 = x.clone()
        x2[:, j] += 10.0
        o2 = att.attention(x2, *Ws).o
        torch.testing.assert_close(o2[:, :j], base[:, :j])  # earlier positions untouched
        assert not torch.allclose(o2[:, j], base[:, j])  # position j itself does change
    # without the mask, the future leaks into the past
    leak = att.attention(torch.cat([x[:, :-1], x[:, -1:] + 10], 1), *Ws, mask=False).o
    assert not torch.allclose(leak[:, 0], att.attention(x, *Ws, mask=False).o[:, 0])


def test_model_is_causal_end_to_end():
    cfg = Config(n_vocab=50, d_model=16, n_ctx=10, n_layers=2, n_heads=2)
    torch.manual_seed(0)
    model = Transformer(cfg)
    t = torch.randint(0, 50, (10,))
    t2 = t.clone()
    t2[6] = (t[6] + 1) % 50
    a, b = model(t), model(t2)
    torch.testing.assert_close(a[:, :6], b[:, :6])
    assert not torch.allclose(a[:, 6:], b[:, 6:])


def test_scale_is_sqrt_d_head():
    x, (W_Q, W_K, W_V, W_O) = stream(), weights()
    out = att.attention(x, W_Q, W_K, W_V, W_O, mask=False)
    torch.testing.assert_close(out.S, out.q.mT @ out.k / math.sqrt(D_HEAD))


@pytest.mark.parametrize("bad, message", [
    (lambda Ws, x: att.attention(x.T, *Ws), "is it transposed"),
    (lambda Ws, x: att.attention(x[:5], *Ws), "d_model = 12"),
    (lambda Ws, x: att.attention(x[:, :0], *Ws), "context is empty"),
    (lambda Ws, x: att.attention(x, Ws[0], Ws[1][:, :2], Ws[2], Ws[3]), "W_K has shape"),
    (lambda Ws, x: att.attention(x, Ws[0], Ws[1], Ws[2], Ws[3].mT), "W_O has shape"),
    (lambda Ws, x: att.attention(x, Ws[0][..., None], Ws[1], Ws[2], Ws[3]), "W_Q must have shape"),
    (lambda Ws, x: att.attention(x.tolist(), *Ws), "must be a torch tensor"),
    (lambda Ws, x: att.softmax_star(torch.zeros(3, 4)), "must be square"),
    (lambda Ws, x: att.concat_output(torch.zeros(2, 3, 7), Ws[3]), "r has shape"),
])
def test_bad_input_is_explained(bad, message):
    with pytest.raises((ValueError, TypeError), match=message):
        bad(weights(), stream())


def test_pattern_stats_recognise_simple_heads():
    n = 6
    prev = torch.zeros(n, n)
    prev[0, 0] = 1
    prev[torch.arange(1, n), torch.arange(n - 1)] = 1
    selfish = torch.eye(n)
    uniform = att.softmax_star(torch.zeros(n, n))
    stats = att.pattern_stats(torch.stack([prev, selfish, uniform]))
    torch.testing.assert_close(stats["previous"], torch.tensor([1.0, 0.0, uniform.diagonal(-1).mean()]))
    torch.testing.assert_close(stats["self"][:2], torch.tensor([0.0, 1.0]))
    assert stats["entropy"][2] > 0.5 and stats["entropy"][:2].abs().max() < 1e-6
    with pytest.raises(ValueError, match="n >= 2"):
        att.pattern_stats(torch.ones(2, 1, 1))
