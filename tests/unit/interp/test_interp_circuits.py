"""helpers.interp.circuits: QK and OV circuits equal the products written by hand, agree with what the
model computes, and composition scores follow Elhage et al. (2021)."""

import math

import pytest
import torch

from helpers.interp import circuits
from helpers.model.config import Config
from helpers.model.names import key
from helpers.train import fresh_model


def _hand_model():
    """d_model 2, one head of d_head 1: W_Q = [1, 0], W_K = [0, 1], W_V = [1, 1], W_O = [2, 0]^T."""
    model = fresh_model(Config(n_vocab=3, d_model=2, n_ctx=4, n_layers=1, n_heads=1, d_head=1, positional=False))
    with torch.no_grad():
        attn = model.blocks[0].attn
        attn.W_Q.copy_(torch.tensor([[[1.0, 0.0]]]))
        attn.W_K.copy_(torch.tensor([[[0.0, 1.0]]]))
        attn.W_V.copy_(torch.tensor([[[1.0, 1.0]]]))
        attn.W_O.copy_(torch.tensor([[[2.0], [0.0]]]))
        model.embed.W_E.copy_(torch.tensor([[1.0, 0.0, 3.0], [0.0, 1.0, -1.0]]))
        model.unembed.W_U.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
    return model


def test_circuits_by_hand():
    model = _hand_model()
    torch.testing.assert_close(circuits.qk_circuit(model, 0, 0), torch.tensor([[0.0, 1.0], [0.0, 0.0]]))  # W_Q^T W_K
    torch.testing.assert_close(circuits.ov_circuit(model, 0, 0), torch.tensor([[2.0, 2.0], [0.0, 0.0]]))  # W_O W_V
    # token table [a, b] = e_a^T W_QK e_b = (first coordinate of e_a) * (second of e_b)
    W_E = torch.tensor([[1.0, 0.0, 3.0], [0.0, 1.0, -1.0]])
    expected = torch.outer(W_E[0], W_E[1])
    torch.testing.assert_close(circuits.token_qk_table(model, 0, 0), expected)
    # OV table column b = W_U (2 (e_b[0] + e_b[1]), 0) -> logits (2 s, 0, 2 s) with s = e_b[0] + e_b[1]
    s = W_E.sum(0)
    torch.testing.assert_close(circuits.token_ov_table(model, 0, 0), torch.stack([2 * s, 0 * s, 2 * s]))


def test_the_pattern_follows_the_qk_table():
    """Two tokens [a, b] without W_pos: query 2 weighs key 1 by softmax(T[b, a], T[b, b]) / sqrt(d_head)."""
    model = fresh_model(Config(n_vocab=10, d_model=8, n_ctx=4, n_layers=1, n_heads=2, positional=False), seed=3)
    with torch.no_grad():
        model.blocks[0].attn.W_Q.mul_(30)  # sharper patterns than at initialisation
    table = circuits.token_qk_table(model, 0, 1) / math.sqrt(model.cfg.d_head)
    for a, b in [(1, 2), (7, 3), (4, 4)]:
        _, cache = model.run_with_cache(torch.tensor([a, b]))
        expected = torch.softmax(torch.stack([table[b, a], table[b, b]]), 0)
        torch.testing.assert_close(cache[key(0, "A")][1, 1], expected, atol=1e-5, rtol=1e-4)


def test_positional_table_and_ranks():
    model = fresh_model(Config(n_vocab=10, d_model=8, n_ctx=5, n_layers=1, n_heads=4), seed=0)  # d_head 2
    W_pos = model.pos_embed.W_pos.detach()
    by_hand = W_pos.T @ circuits.qk_circuit(model, 0, 3) @ W_pos
    torch.testing.assert_close(circuits.positional_qk_table(model, 0, 3), by_hand)
    assert circuits.positional_qk_table(model, 0, 3).shape == (5, 5)
    assert torch.linalg.matrix_rank(circuits.qk_circuit(model, 0, 0)) == 2  # <= d_head, of a d_model = 8 matrix
    assert torch.linalg.matrix_rank(circuits.ov_circuit(model, 0, 0)) == 2
    with pytest.raises(ValueError, match="no positional embeddings"):
        circuits.positional_qk_table(_hand_model(), 0, 0)


def test_composition_score_by_hand():
    assert float(circuits.composition_score(torch.eye(2), torch.eye(2))) == pytest.approx(1 / math.sqrt(2))
    reads_x, writes_y = torch.tensor([[1.0, 0.0], [0.0, 0.0]]), torch.tensor([[0.0, 0.0], [0.0, 1.0]])
    assert float(circuits.composition_score(reads_x, writes_y)) == 0  # reads what the other never writes
    assert float(circuits.composition_score(reads_x, reads_x)) == pytest.approx(1.0)  # rank 1, aligned
    with pytest.raises(ValueError, match="all zeros"):
        circuits.composition_score(torch.zeros(2, 2), torch.eye(2))
    with pytest.raises(ValueError, match="must be able to read"):
        circuits.composition_score(torch.eye(3), torch.eye(2))


def test_composition_scores_find_the_head_that_reads_another():
    """Layer 0 head 1 writes only along e_0; layer 1 head 2's key reads only e_0 (K-composition), head 0's
    query reads only e_0 (Q-composition), head 3's value reads only e_0 (V-composition)."""
    cfg = Config(n_vocab=10, d_model=8, n_ctx=4, n_layers=2, n_heads=4, d_head=2)
    model = fresh_model(cfg, seed=0)
    e0 = torch.zeros(8)
    e0[0] = 1.0
    with torch.no_grad():
        a0, a1 = model.blocks[0].attn, model.blocks[1].attn
        a0.W_O[1] = torch.outer(e0, torch.ones(2))  # writes e_0 only
        for h, W in ((2, a1.W_K), (0, a1.W_Q), (3, a1.W_V)):
            W[h] = torch.outer(torch.ones(2), e0)  # reads e_0 only
            for other in ({0, 1, 2, 3} - {h}):
                W[other][:, 0] = 0  # the other heads ignore e_0 on that side
    for kind, h2 in (("K", 2), ("Q", 0), ("V", 3)):
        S = circuits.composition_scores(model, kind)
        assert S.shape == (4, 4)
        assert int(S.argmax()) == 1 * 4 + h2, (kind, S)  # the pair [h1 = 1, h2]
        assert float(S[1, h2]) == pytest.approx(1.0)  # rank-1 writer meets a reader of exactly its direction
    M = circuits.reading_matrix(model, 1, 2, "K")
    torch.testing.assert_close(M, circuits.qk_circuit(model, 1, 2))
    torch.testing.assert_close(circuits.reading_matrix(model, 1, 2, "Q"), M.T)
    W_OV, norm = circuits.ov_circuit(model, 0, 1), torch.linalg.matrix_norm
    torch.testing.assert_close(circuits.composition_scores(model, "K")[1, 2], norm(M @ W_OV) / (norm(M) * norm(W_OV)))


def test_bad_input_is_explained():
    model = fresh_model(Config(n_vocab=10, d_model=8, n_ctx=4, n_layers=2, n_heads=4))
    with pytest.raises(ValueError, match="layer 2 does not exist: this model has n_layers = 2 \\(layers 0 ... 1\\)"):
        circuits.qk_circuit(model, 2, 0)
    with pytest.raises(ValueError, match="head 4 does not exist: layer 0 has n_heads = 4 \\(heads 0 ... 3\\)"):
        circuits.ov_circuit(model, 0, 4)
    with pytest.raises(ValueError, match="head -1 does not exist"):
        circuits.token_ov_table(model, 0, -1)
    with pytest.raises(TypeError, match="layer must be a whole number"):
        circuits.qk_circuit(model, 0.5, 0)
    with pytest.raises(ValueError, match="layer1 = 1 must come before layer2 = 1"):
        circuits.composition_scores(model, "K", 1, 1)
    with pytest.raises(ValueError, match="kind must be 'Q', 'K' or 'V'"):
        circuits.composition_scores(model, "O")
    zero = fresh_model(Config(n_vocab=10, d_model=8, n_ctx=4))
    with pytest.raises(ValueError, match="layer 0 does not exist: this model has n_layers = 0 .*no attention"):
        circuits.qk_circuit(zero, 0, 0)


def test_the_circuits_agree_with_the_model_on_a_two_token_context():
    """With only two tokens visible, the model's scores and head outputs are the token tables' entries:
    S[1, j] = (W_E^T W_QK W_E)[t_1, t_j] / sqrt(d_head), and W_U o^h = sum_j A[1, j] (W_U W_OV W_E)[:, t_j]."""
    import math

    from helpers.interp.circuits import token_ov_table, token_qk_table
    from helpers.model import names
    from helpers.model.config import Config

    model = fresh_model(Config(n_vocab=10, d_model=16, n_ctx=4, n_layers=1, n_heads=2, positional=False), seed=3)
    g = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for param in model.parameters():
            param.copy_(torch.randn(param.shape, generator=g) * 0.5)  # large enough that patterns are not flat
    tokens = torch.tensor([7, 2])
    _, cache = model.run_with_cache(tokens)
    d_head = model.cfg.d_head
    for h in range(2):
        T = token_qk_table(model, 0, h)
        S = cache[names.key(0, "S")][h]
        assert torch.allclose(S[1, :2], T[2, tokens] / math.sqrt(d_head), atol=1e-5)
        A = cache[names.key(0, "A")][h]
        written = model.unembed.W_U @ cache[names.key(0, "o_heads")][h][:, 1]
        expected = token_ov_table(model, 0, h)[:, tokens] @ A[1, :2]
        assert torch.allclose(written, expected, atol=1e-4)
