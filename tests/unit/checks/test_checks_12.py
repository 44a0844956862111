"""Notebook 12's exercise checks (right and typical wrong answers): the toy model's loss, the autoencoder's loss and
one latent taken out of the activations."""

import pytest
import torch

from helpers.checks.base import ExerciseError
from helpers.checks.superposition import check_sae_loss, check_toy_loss, check_without_latent
from helpers.lessons.superposition import sae_loss, weighted_loss


def toy_loss(x, x_hat, I):
    return (I[:, None] * (x - x_hat) ** 2).sum(dim=0).mean()


def test_toy_loss_right_answers():
    assert check_toy_loss(toy_loss)
    assert check_toy_loss(lambda x, x_hat, I: float((I @ (x - x_hat) ** 2).mean()))        # another way, a float
    assert check_toy_loss(lambda x, x_hat, I: torch.einsum("i,ib->b", I, (x - x_hat) ** 2).mean())


@pytest.mark.parametrize("wrong, message", [
    (lambda x, x_hat, I: ((x - x_hat) ** 2).sum(dim=0).mean(), "importances are missing"),
    (lambda x, x_hat, I: (I[:, None] * (x - x_hat) ** 2).mean(), "mean over the features as well"),
    (lambda x, x_hat, I: (I[:, None] * (x - x_hat) ** 2).sum(), "sums over the batch too"),
    (lambda x, x_hat, I: (I[:, None] * (x - x_hat).abs()).sum(dim=0).mean(), "not squared"),
    (lambda x, x_hat, I: (I[:, None] ** 2 * (x - x_hat) ** 2).sum(dim=0).mean(), "I is squared"),
    (lambda x, x_hat, I: ((I[:, None] * (x - x_hat)) ** 2).sum(dim=0).mean(), "inside the square"),
    (lambda x, x_hat, I: (I[:, None] * (x - x_hat) ** 2).sum(dim=0), "one number per column"),
    (lambda x, x_hat, I: (I[:, None] * (x - x_hat) ** 2).mean(dim=1), "one number per feature"),
    (lambda x, x_hat, I: 2 * toy_loss(x, x_hat, I), "Not the toy model's loss yet"),
    (lambda x, x_hat, I: (I * (x - x_hat) ** 2).sum(dim=0).mean(), "Make it a column"),
    (lambda x, x_hat, I: toy_loss(x, x_hat, I) * (1 if x.shape[0] == 5 else 2), "right for the first test"),
    (lambda x, x_hat, I: weighted_loss(x[None], x_hat[None], I)[0], "calls helpers.lessons.superposition"),
])
def test_toy_loss_mistakes_are_named(wrong, message):
    with pytest.raises(ExerciseError, match=message):
        check_toy_loss(wrong)


def sae_loss_by_hand(z, z_hat, f, l1):
    return (((z - z_hat) ** 2).sum(dim=0) + l1 * f.sum(dim=0)).mean()


def test_sae_loss_right_answers():
    assert check_sae_loss(sae_loss_by_hand)
    assert check_sae_loss(lambda z, z_hat, f, l1: ((z - z_hat) ** 2).sum(0).mean() + l1 * f.abs().sum(0).mean())
    assert check_sae_loss(lambda z, z_hat, f, l1: (z - z_hat).norm(dim=0).pow(2).mean()
                          + l1 * f.norm(p=1, dim=0).mean())


@pytest.mark.parametrize("wrong, message", [
    (lambda z, z_hat, f, l1: ((z - z_hat) ** 2).sum(dim=0).mean(), "sparsity term is missing"),
    (lambda z, z_hat, f, l1: (((z - z_hat) ** 2).sum(dim=0) + f.sum(dim=0)).mean(), "not multiplied by l1"),
    (lambda z, z_hat, f, l1: (((z - z_hat) ** 2).sum(dim=0) + l1 * (f ** 2).sum(dim=0)).mean(), "squares f"),
    (lambda z, z_hat, f, l1: ((z - z_hat) ** 2).mean() + l1 * f.sum(dim=0).mean(), "averaged over z's entries"),
    (lambda z, z_hat, f, l1: ((z - z_hat) ** 2).sum(dim=0).mean() + l1 * f.mean(), "averages over the latents"),
    (lambda z, z_hat, f, l1: ((z - z_hat) ** 2).sum(dim=0).mean() + l1 * z.abs().sum(dim=0).mean(), "penalty is on z"),
    (lambda z, z_hat, f, l1: ((z - z_hat) ** 2).sum() + l1 * f.sum(), "Both terms sum over the batch"),
    (lambda z, z_hat, f, l1: (z - z_hat).norm(dim=0).mean() + l1 * f.sum(dim=0).mean(), "error is not squared"),
    (lambda z, z_hat, f, l1: ((z - z_hat) ** 2).sum(dim=0) + l1 * f.sum(dim=0), "returned a tensor of shape"),
    (lambda z, z_hat, f, l1: sae_loss_by_hand(z, z_hat, f, 0.3), "right for the first test"),
    (lambda z, z_hat, f, l1: sae_loss(z, z_hat, f, l1), "calls helpers.lessons.superposition"),
    (lambda z, z_hat, f, l1: 2 * sae_loss_by_hand(z, z_hat, f, l1), "Not the autoencoder's loss yet"),
])
def test_sae_loss_mistakes_are_named(wrong, message):
    with pytest.raises(ExerciseError, match=message):
        check_sae_loss(wrong)


def without_latent(z, sae, k):
    return z - sae.W_dec[:, k, None] * sae.encode(z)[k]


def test_without_latent_right_answers():
    assert check_without_latent(without_latent)
    assert check_without_latent(lambda z, sae, k: z - torch.outer(sae.W_dec[:, k], sae.encode(z)[k]))


def _zeroed_then_decoded(z, sae, k):
    f = sae.encode(z)
    f[k] = 0
    return sae.decode(f)


def _in_place(z, sae, k):
    with torch.no_grad():
        sae.W_dec[:, k] = 0
    return z


@pytest.mark.parametrize("wrong, message", [
    (_zeroed_then_decoded, "reconstruction with latent k switched off"),
    (lambda z, sae, k: z - sae.W_dec[:, k, None], "at full length"),
    (lambda z, sae, k: z - sae.W_enc[k][:, None] * sae.encode(z)[k], "encoder's row"),
    (lambda z, sae, k: without_latent(z, sae, k) - sae.b_dec[:, None], "b_dec"),
    (lambda z, sae, k: sae.W_dec[:, k, None] * sae.encode(z)[k], "latent k's part alone"),
    (lambda z, sae, k: z + sae.W_dec[:, k, None] * sae.encode(z)[k], "sign is flipped"),
    (_in_place, "changed the model's weights"),
    (lambda z, sae, k: without_latent(z, sae, k).T, r"shape"),
    (lambda z, sae, k: z - 0.5 * sae.W_dec[:, k, None] * sae.encode(z)[k], "Not z without latent k yet"),
    (lambda z, sae, k: z - sae.W_dec[k][:, None] * sae.encode(z)[k], "its column k"),
    (lambda z, sae, k: z - sae.W_dec[:, k] * sae.encode(z)[k], "broadcast to"),
    (lambda z, sae, k: without_latent(z, sae, k) * (1 if z.shape[0] == 5 else 2), "right for the first test"),
])
def test_without_latent_mistakes_are_named(wrong, message):
    with pytest.raises(ExerciseError, match=message):
        check_without_latent(wrong)


def test_the_weights_are_put_back_after_an_answer_that_edits_them():
    """An answer that zeroes W_dec is refused (call() restores every module it was handed), and the next check
    starts from the check's own autoencoder again."""
    with pytest.raises(ExerciseError):
        check_without_latent(_in_place)
    assert check_without_latent(without_latent)
