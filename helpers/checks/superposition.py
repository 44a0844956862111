"""Notebook 12: the toy model's importance-weighted loss, a sparse autoencoder's loss, one latent taken out of the
activations (an intervention that keeps the autoencoder's error)."""

from __future__ import annotations

from typing import Callable

import torch

from helpers.checks.base import ExerciseError, call, close, exercise, named, number_result, passed, tensor_result
from helpers.lessons.superposition import SparseAutoencoder, sae_loss, weighted_loss


def _near(got: float, want: float) -> bool:
    return abs(got - want) <= 1e-4 * max(1.0, abs(want))


def _name_the_number(got: float, mistakes: list[tuple[float, str]], fallback: str) -> None:
    for wrong, message in mistakes:
        if _near(got, float(wrong)):
            raise ExerciseError(message)
    raise ExerciseError(fallback)


# --- exercise 12.1: the toy model's loss ---------------------------------------------------------------------------

TOY_CASES = ((12, 5, 7), (121, 6, 3))   # seed, n features, batch: two sizes, so a size written in shows


@exercise(answered_by=("helpers.lessons.superposition.weighted_loss",))
def check_toy_loss(fn: Callable) -> bool:
    """fn(x, x_hat, I) with x, x_hat (n, batch) and I (n,) -> the mean over the batch of sum_i I_i (x_i - x'_i)^2."""
    what = named(fn, "toy_loss", "(x, x_hat, I)")
    for case, (seed, n, batch) in enumerate(TOY_CASES):
        g = torch.Generator().manual_seed(seed)
        x = torch.rand(n, batch, generator=g) * (torch.rand(n, batch, generator=g) < 0.5)
        x_hat = torch.rand(n, batch, generator=g)
        I = 0.8 ** torch.arange(n, dtype=torch.float32)
        try:
            out = call(fn, x.clone(), x_hat.clone(), I.clone(), what=what,
                       forbid=("helpers.lessons.superposition.weighted_loss",))
        except ExerciseError as e:
            if "must match the size" in str(e):
                raise ExerciseError(f"{str(e).rstrip('.')}. I has one number per feature, and the features are the "
                                    "rows of the (n, batch) errors: I as it is lines up with the columns. Make it a "
                                    "column, so that it multiplies row by row.") from None
            raise
        if isinstance(out, torch.Tensor) and out.numel() > 1:
            shape = tuple(out.shape)
            kind = ("one number per column (per input in the batch)" if shape == (batch,) else
                    "one number per feature" if shape == (n,) else f"a tensor of shape {shape}")
            raise ExerciseError(f"{what} returned {kind}; the loss is one number: sum over the features i, then the "
                                "mean over the batch (the columns).")
        got = number_result(out, what)
        err = (x - x_hat) ** 2                                       # (n, batch)
        want = float(weighted_loss(x[None], x_hat[None], I)[0])   # the helper the training uses, one model
        if _near(got, want):
            continue
        size = (f" (It was right for the first test, not for n = {n} features and a batch of {batch}: is a size "
                "written into the code?)" if case else "")
        _name_the_number(got, [
            (err.sum(dim=0).mean(), "The importances are missing: each feature's squared error is weighted by its "
                                    "importance I_i before the sum, so that the model cares most about feature 0."),
            ((I[:, None] * err).mean(), "That is the mean over the features as well as over the batch: the loss sums "
                                        "over the features i and averages over the batch only."),
            ((I[:, None] * err).sum(), "That sums over the batch too; the loss is the mean over the batch (the "
                                       "columns) of the weighted sum over the features."),
            ((I[:, None] * (x - x_hat).abs()).sum(dim=0).mean(), "The error is not squared: (x_i - x'_i)^2."),
            ((I[:, None] ** 2 * err).sum(dim=0).mean(),
             "Each error is weighted by I_i^2: either I is squared, or it sits inside the square, (I_i (x_i - "
             "x'_i))^2. Multiply the squared error by I_i itself."),
        ], "Not the toy model's loss yet. Three steps: weight each squared error by its feature's importance (the "
           "features are the rows), add up over the features (one number per input), then average over the inputs "
           "(the columns)." + size)
    return passed(f"{named(fn, 'toy_loss')} is right: the mean over the batch of sum_i I_i (x_i - x'_i)^2.")


# --- exercise 12.2: the autoencoder's loss -------------------------------------------------------------------------

SAE_CASES = ((122, 6, 10, 5, 0.3), (1221, 4, 9, 3, 2.0))   # seed, d_in, n_latents, batch, l1


@exercise(answered_by=("helpers.lessons.superposition.sae_loss",))
def check_sae_loss(fn: Callable) -> bool:
    """fn(z, z_hat, f, l1) with z, z_hat (d_in, batch), f (n_latents, batch) -> the batch's mean of ||z - z'||^2 +
    l1 sum_k f_k."""
    what = named(fn, "sae_loss", "(z, z_hat, f, l1)")
    for case, (seed, d_in, n_latents, batch, l1) in enumerate(SAE_CASES):
        g = torch.Generator().manual_seed(seed)
        z, z_hat = torch.randn(d_in, batch, generator=g), torch.randn(d_in, batch, generator=g)
        f = torch.relu(torch.randn(n_latents, batch, generator=g))
        out = call(fn, z.clone(), z_hat.clone(), f.clone(), l1, what=what,
                   forbid=("helpers.lessons.superposition.sae_loss",))
        if isinstance(out, torch.Tensor) and out.numel() > 1:
            raise ExerciseError(f"{what} returned a tensor of shape {tuple(out.shape)}; the loss is one number: the "
                                "batch's mean of (squared error summed over z's entries + l1 times f summed over the "
                                "latents).")
        got = number_result(out, what)
        rec = ((z - z_hat) ** 2).sum(dim=0).mean()
        l1_term = f.sum(dim=0).mean()
        want = float(sae_loss(z, z_hat, f, l1))
        if _near(got, want):
            continue
        size = (f" (It was right for the first test, not for d_in = {d_in}, {n_latents} latents, a batch of {batch} "
                f"and l1 = {l1}: is a size or a number written into the code?)" if case else "")
        _name_the_number(got, [
            (rec, "The sparsity term is missing: without l1 * (sum of f), nothing keeps the latents from all firing "
                  "a little, and the autoencoder just spreads z over them (dense again)."),
            (rec + l1_term, "The sparsity term is not multiplied by l1: l1 is the knob that trades reconstruction "
                            "against sparsity."),
            (rec + l1 * (f ** 2).sum(dim=0).mean(), "The penalty squares f (an L2 penalty). The sparsity term is the "
                                                    "L1 norm, f summed as it is (f >= 0 after the ReLU): an L2 "
                                                    "penalty shrinks every latent a little and silences none."),
            (((z - z_hat) ** 2).mean() + l1 * l1_term, "The squared error is averaged over z's entries too; the "
                                                       "reconstruction term sums over the entries (||z - z'||^2) "
                                                       "and averages over the batch."),
            (rec + l1 * f.mean(), "The sparsity term averages over the latents; it sums over them (how much the "
                                  "latents fire in all) and averages over the batch."),
            (rec + l1 * z.abs().sum(dim=0).mean(), "The L1 penalty is on z, the activations; it belongs on f, the "
                                                   "latents: the point is that few latents fire."),
            (((z - z_hat) ** 2).sum() + l1 * f.sum(), "Both terms sum over the batch; the loss is the batch's mean "
                                                      "(divide by the number of columns)."),
            ((z - z_hat).norm(dim=0).mean() + l1 * l1_term, "The reconstruction error is not squared: ||z - z'||^2, "
                                                            "the squared length."),
        ], "Not the autoencoder's loss yet. For each input (a column): its squared error summed over z's entries, "
           "plus l1 times its latents summed over the latents; then the average over the inputs." + size)
    return passed(f"{named(fn, 'sae_loss')} is right: reconstruction plus l1 times the latents' total firing, "
                  "averaged over the batch.")


# --- exercise 12.3: one latent taken out -----------------------------------------------------------------------------


@exercise(answered_by=("helpers.lessons.superposition.parts",))
def check_without_latent(fn: Callable) -> bool:
    """fn(z, sae, k) with z (d_in, N) -> z with latent k's part f_k W_dec[:, k] taken away from every column."""
    what = named(fn, "without_latent", "(z, sae, k)")
    for case, (seed, d_in, n_latents, N) in enumerate(((123, 5, 12, 6), (1231, 3, 7, 4))):
        g = torch.Generator().manual_seed(seed)
        sae = SparseAutoencoder(d_in, n_latents, seed=seed)
        with torch.no_grad():
            sae.b_enc.copy_(torch.rand(n_latents, generator=g) * 0.5)     # most latents fire a little
            sae.b_dec.copy_(torch.randn(d_in, generator=g) * 0.3)
            sae.W_enc.add_(torch.randn(n_latents, d_in, generator=g) * 0.3)   # (it starts as W_dec's transpose)
        z = torch.randn(d_in, N, generator=g)
        with torch.no_grad():
            f = sae.encode(z)
        k = int(f.sum(dim=1).argmax())                                   # a latent that fires on these columns
        try:
            out = call(fn, z.clone(), sae, k, what=what, forbid=("helpers.lessons.superposition.parts",))
        except ExerciseError as e:
            if "out of bounds" in str(e):
                raise ExerciseError(f"{str(e).rstrip('.')}. W_dec is (d_in, n_latents): latent k's direction is its "
                                    "column k, W_dec[:, k]; a row index W_dec[k] counts along z's d_in entries "
                                    "instead.") from None
            if "must match the size" in str(e):
                raise ExerciseError(f"{str(e).rstrip('.')}. Latent k's direction is one column of d_in numbers and "
                                    "its firing one number per input: make the direction a column (d_in, 1) and the "
                                    "firing a row (1, N), so that they broadcast to (d_in, N).") from None
            raise
        got = tensor_result(out, (d_in, N), what, "One column per input, like z.")
        with torch.no_grad():
            d = sae.W_dec[:, k]
            want = z - d[:, None] * f[k][None]
            if close(got, want, atol=1e-5):
                continue
            f_off = f.clone()
            f_off[k] = 0
            mistakes = [
                (sae.decode(f_off), "That is the autoencoder's reconstruction with latent k switched off: it "
                                    "replaces z by z', and so throws away the error z - z' as well as latent k. Take "
                                    "only latent k's part, f_k W_dec[:, k], away from z itself."),
                (z - d[:, None], "W_dec[:, k] is subtracted at full length from every column; latent k adds f_k "
                                 "W_dec[:, k], scaled by how strongly it fires on that column (0 where it does not)."),
                (z - sae.W_enc[k][:, None] * f[k][None], "That subtracts the encoder's row W_enc[k]; what latent k "
                                                         "writes into the reconstruction is the decoder's column "
                                                         "W_dec[:, k]."),
                (z - d[:, None] * f[k][None] - sae.b_dec[:, None], "That also takes away b_dec, the decoder's bias; "
                                                                   "it belongs to no latent. Subtract f_k W_dec[:, k] "
                                                                   "only."),
                (d[:, None] * f[k][None], "That is latent k's part alone; the intervention keeps everything else: "
                                          "z minus that part."),
                (z + d[:, None] * f[k][None], "The sign is flipped: that adds latent k once more (steering); take it "
                                              "away."),
            ]
        for wrong, message in mistakes:
            if close(got, wrong, atol=1e-5):
                raise ExerciseError(message)
        raise ExerciseError("Not z without latent k yet. Encode z to see how strongly each latent fires on each "
                            "input; latent k's part of an input's reconstruction is its firing on that input times "
                            "its decoder direction. Take exactly that away from z, input by input."
                            + (f" (It was right for the first test, not for d_in = {d_in}, {n_latents} latents: is a "
                               "size written into the code?)" if case else ""))
    return passed(f"{named(fn, 'without_latent')} is right: z minus f_k W_dec[:, k], the error z - z' kept.")
