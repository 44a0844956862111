"""The toy model of superposition and the sparse autoencoder (helpers/lessons/superposition.py): what each is said to
do, on runs small enough for the fast tier. The outcomes tested are the qualitative ones the papers report (how
many features get a direction), with wide margins: on any CPU a feature is either kept (length near 1) or dropped
(near 0)."""

import pytest
import torch

from helpers.lessons import superposition as S
from helpers.model import names
from helpers.model.config import Config
from helpers.train import fresh_model


def kept(W: torch.Tensor) -> list[int]:
    """How many features each model represents: length above 0.5 in the small space."""
    return (S.feature_norms(W) > 0.5).sum(dim=-1).tolist()


def test_dense_features_get_a_dimension_each_and_sparse_ones_share():
    """5 features in 2 dimensions: dense (p = 1), the model keeps 2, the most important, one dimension each
    (interference 0 between them); sparse (p = 0.03), all 5 share the plane (more than one feature per dimension)."""
    run = S.train_toy([1.0, 0.03], n=5, m=2, steps=2000, seed=0)
    assert kept(run.W) == [2, 5]
    dense = run.W[0]
    assert S.feature_norms(dense)[:2].min() > 0.9                               # features 0 and 1: the important ones
    assert abs(float(S.interference(dense[None])[0, 0, 1])) < 0.05               # at right angles
    assert float(S.dimensions_per_feature(run.W)[0]) > 0.9 > 0.5 > float(S.dimensions_per_feature(run.W)[1])
    assert float(S.superposition(run.W)[1].mean()) > 0.5 > float(S.superposition(run.W)[0, :2].max())


def test_without_the_relu_sparse_features_do_not_superpose():
    run = S.train_toy([1.0, 0.03], n=5, m=2, relu=False, steps=2000, seed=0)
    assert kept(run.W) == [2, 2]


def test_the_loss_is_the_importance_weighted_error_of_each_model_alone():
    x = torch.tensor([[[1.0, 0.0], [0.5, 0.5]]])                  # (K=1, n=2, batch=2)
    x_hat = torch.zeros_like(x)
    I = torch.tensor([1.0, 0.5])
    # column 0: 1 * 1 + 0.5 * 0.25; column 1: 0 + 0.5 * 0.25; the mean of the two
    torch.testing.assert_close(S.weighted_loss(x, x_hat, I), torch.tensor([(1.125 + 0.125) / 2]))
    g = torch.Generator().manual_seed(0)
    feats = S.sparse_features(torch.tensor([1.0, 0.1]), 6, 4000, g)
    assert feats.shape == (2, 6, 4000) and float((feats[0] > 0).float().mean()) > 0.99
    assert 0.08 < float((feats[1] > 0).float().mean()) < 0.12 and float(feats.max()) <= 1


def test_bad_settings_are_named():
    with pytest.raises(ValueError, match="m < n"):
        S.ToyModel(1, n=3, m=3)
    with pytest.raises(ValueError, match=r"probability that a feature is active"):
        S.sparse_features(torch.tensor([0.0]), 5, 10, torch.Generator())
    with pytest.raises(ValueError, match=r"I must be \(n,\) = \(5,\)"):
        S.train_toy([0.1], n=5, m=2, I=torch.ones(4), steps=1)
    with pytest.raises(ValueError, match=r"activations as columns, \(d_in, N\)"):
        S.train_sae(torch.zeros(3, 4, 5), 8)


def test_a_sparse_autoencoder_finds_features_stored_in_superposition():
    """16 sparse features in 8 dimensions (random directions): an autoencoder with 32 latents, trained on the
    activations alone, has a latent along nearly every feature's direction and fires few latents per activation."""
    g = torch.Generator().manual_seed(0)
    D = torch.randn(8, 16, generator=g)
    D /= D.norm(dim=0)
    x = S.sparse_features(torch.tensor([0.05]), 16, 20000, g)[0]              # (16, N)
    acts = D @ x
    sae = S.train_sae(acts, 32, l1=0.1, steps=2000, batch=256, lr=3e-3, seed=0)
    f, z_hat = sae(acts[:, :2000])
    assert S.l0(f) < 4 and S.reconstruction_error(acts[:, :2000], z_hat) < 0.1
    found = (D.T @ sae.W_dec.detach()).max(dim=1).values                      # (16,): the best cosine per feature
    assert int((found > 0.85).sum()) >= 12, found
    torch.testing.assert_close(sae.W_dec.detach().norm(dim=0), torch.ones(32))  # decoder columns of length 1


def test_loss_recovered_is_one_for_a_perfect_reconstruction_and_reads_the_hook_point():
    model = fresh_model(Config(n_vocab=11, d_model=8, n_ctx=6, n_layers=1, n_heads=2, d_mlp=16), seed=0)
    with torch.no_grad():                                         # an MLP loud enough that zeroing it shows
        for W in (model.blocks[0].mlp.W_1, model.blocks[0].mlp.W_2, model.embed.W_E, model.unembed.W_U):
            W.mul_(30)
    tokens = torch.randint(0, 11, (4, 7), generator=torch.Generator().manual_seed(1))
    exact = S.SparseAutoencoder(16, 32)
    with torch.no_grad():                                         # f = (ReLU(z), ReLU(-z)), z' = ReLU(z) - ReLU(-z) = z
        exact.W_enc.copy_(torch.cat([torch.eye(16), -torch.eye(16)]))
        exact.W_dec.copy_(torch.cat([torch.eye(16), -torch.eye(16)], dim=1))
        exact.b_enc.zero_()
        exact.b_dec.zero_()
    got = S.loss_recovered(model, tokens, names.key(0, "z"), exact)
    assert got["reconstructed"] == pytest.approx(got["clean"], abs=1e-5)
    assert got["recovered"] == pytest.approx(1, abs=1e-3)
    assert abs(got["zeroed"] - got["clean"]) > 0.05
    silent = S.SparseAutoencoder(16, 32)
    with torch.no_grad():
        silent.b_enc.fill_(-1e3)                                  # no latent ever fires: z' = b_dec = 0
    assert S.loss_recovered(model, tokens, names.key(0, "z"), silent)["recovered"] == pytest.approx(0, abs=1e-3)


def test_loss_recovered_says_when_there_is_nothing_to_recover():
    model = fresh_model(Config(n_vocab=11, d_model=8, n_ctx=6, n_layers=1, n_heads=2, d_mlp=16), seed=0)
    with pytest.raises(ValueError, match="nothing to recover"):                # untrained: its MLP is near silent
        S.loss_recovered(model, torch.randint(0, 11, (4, 7)), names.key(0, "z"), S.SparseAutoencoder(16, 32))
