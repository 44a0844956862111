"""Notebook 12: more features than dimensions — superposition, and a sparse autoencoder that finds them.

Notebook 06 ends on a stored fact that is not one neuron. Two papers explain why and what to do about it; this module
holds the computations, written in the series' column form (a feature vector is a column, a batch is columns side by
side).

**A toy model of superposition** (Elhage et al. 2022, "Toy Models of Superposition"). n features x (n,), each zero
except with probability p (then uniform in [0, 1]); the sparsity is S = 1 - p. Each has an importance I_i. The model
squeezes them into m < n dimensions and reads them back through a ReLU:

    h = W x                    W (m, n): column i is feature i's direction in the small space
    x' = ReLU(W^T h + b)       = ReLU(W^T W x + b)
    L = mean over x of  sum_i I_i (x_i - x'_i)^2

W^T W (n, n) is the interference: entry (i, j) is how much feature j leaks into the read-out of feature i. Dense
features (p near 1) leave room for m of them, one dimension each; sparse ones are rarely active together, so more
than m share the space (a pentagon for 5 in 2), and the ReLU cuts the small negative leaks away. Without the ReLU
(x' = W^T W x + b) nothing cuts them, and the model keeps m features whatever the sparsity. Many such models (one per
sparsity or importance) train at once here: every weight has a first dimension K, one model each.

**A sparse autoencoder** (Bricken et al. 2023, "Towards Monosemanticity"), for activations z (d_in,) of a real model
(the MLP's hidden layer of notebook 06's model), with more latents than d_in:

    f = ReLU(W_enc (z - b_dec) + b_enc)      f (n_latents,): which latents fire, and how much
    z' = W_dec f + b_dec                     W_dec (d_in, n_latents), its columns of length 1
    L = mean ||z - z'||^2 + l1 * mean sum_k f_k

On notebook 06's facts model (``fact_model``: one layer, no LayerNorm) the autoencoder reads z, the MLP's hidden layer
at the prompt's last position (``last_hidden``: (d_mlp, N), one column per fact), and interventions edit it there
(``logits_with``). A *unit* is a neuron or a latent, and ``parts`` says what each adds to a column of z (z_j e_j, or
f_k W_dec[:, k]); ``pushes`` is each part's direct effect on the right colour's logit; ``units_needed`` takes parts
away in that order until the fact flips (notebook 06's exercise 6.2, for either kind of unit), and ``steered`` adds
one fact's top part to another fact.

TransformerLens and SAELens name the same things: SAELens's ``W_enc`` is (d_in, d_sae) and ``W_dec`` (d_sae, d_in),
ours transposed (a latent is a row of our W_enc and a column of our W_dec; the other way round there), ``d_sae`` is
n_latents, and its "L0" and "CE loss recovered" (``ce_loss_score``) are ``l0`` and ``loss_recovered`` /
``facts_loss_recovered``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn
from torch.nn import functional as F

from helpers.lessons.facts import FACT_MODELS, FactsTask, answer_logits, train_facts
from helpers.model import names
from helpers.model.config import Config
from helpers.model.hooks import hooked
from helpers.model.transformer import Transformer
from helpers.optim import AdamW
from helpers.train import fresh_model


def importance(n: int, decay: float = 0.9) -> torch.Tensor:
    """I_i = decay^i, shape (n,): feature 0 matters most (Elhage et al.'s choice)."""
    if n < 1:
        raise ValueError(f"n must be at least 1 feature, got {n}")
    return decay ** torch.arange(n, dtype=torch.float32)


def sparse_features(p: torch.Tensor, n: int, batch: int, g: torch.Generator) -> torch.Tensor:
    """Feature vectors as columns, one batch per model: (K, n, batch) for p (K,) the probability that a feature is
    active (1 - the sparsity S). An active feature is uniform in [0, 1], an inactive one exactly 0."""
    p = torch.as_tensor(p, dtype=torch.float32).reshape(-1)
    if not bool(((p > 0) & (p <= 1)).all()):
        raise ValueError(f"p is the probability that a feature is active: each must be in (0, 1], got {p.tolist()}")
    values = torch.rand(len(p), n, batch, generator=g)
    active = torch.rand(len(p), n, batch, generator=g) < p[:, None, None]
    return values * active


class ToyModel(nn.Module):
    """K toy models side by side: W (K, m, n), b (K, n). forward(x (K, n, batch)) -> x' (K, n, batch)."""

    def __init__(self, K: int, n: int, m: int, relu: bool = True, seed: int = 0):
        super().__init__()
        if not 0 < m < n:
            raise ValueError(f"superposition squeezes n features into m < n dimensions: got n = {n}, m = {m}")
        g = torch.Generator().manual_seed(seed)
        self.W = nn.Parameter(torch.randn(K, m, n, generator=g) * (2 / (m + n)) ** 0.5)  # (Glorot's spread)
        self.b = nn.Parameter(torch.zeros(K, n))
        self.relu = relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.W @ x                                           # (K, m, batch): h = W x
        out = self.W.mT @ h + self.b[:, :, None]                 # (K, n, batch): W^T h + b
        return torch.relu(out) if self.relu else out


def weighted_loss(x: torch.Tensor, x_hat: torch.Tensor, I: torch.Tensor) -> torch.Tensor:
    """sum_i I_i (x_i - x'_i)^2, averaged over the batch: (K,), one loss per model. x, x_hat (K, n, batch), I (n,) or
    (K, n)."""
    I = I if I.dim() == 2 else I[None]
    return (I[:, :, None] * (x - x_hat) ** 2).sum(dim=1).mean(dim=-1)


@dataclass
class ToyRun:
    model: ToyModel
    p: torch.Tensor                                   # (K,): each model's feature probability
    I: torch.Tensor                                   # (n,) or (K, n): the importances
    losses: list[torch.Tensor] = field(default_factory=list)   # (K,) every 100 steps

    @property
    def W(self) -> torch.Tensor:
        return self.model.W.detach()


def train_toy(p, n: int = 5, m: int = 2, I: torch.Tensor | None = None, relu: bool = True, steps: int = 3000,
              batch: int = 1024, lr: float = 1e-2, seed: int = 0) -> ToyRun:
    """One toy model per entry of p (its feature probability), trained together with AdamW (each its own loss: their
    gradients do not mix). I: the importances, (n,) for all or (K, n) one row per model; default 0.9^i."""
    p = torch.as_tensor(p, dtype=torch.float32).reshape(-1)
    I = importance(n) if I is None else torch.as_tensor(I, dtype=torch.float32)
    if I.shape[-1] != n or (I.dim() == 2 and I.shape[0] != len(p)):
        raise ValueError(f"I must be (n,) = ({n},) or (K, n) = ({len(p)}, {n}), got {tuple(I.shape)}")
    model = ToyModel(len(p), n, m, relu=relu, seed=seed)
    opt = AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    g = torch.Generator().manual_seed(seed + 1)
    run = ToyRun(model, p, I)
    for step in range(1, steps + 1):
        x = sparse_features(p, n, batch, g)
        losses = weighted_loss(x, model(x), I)                   # (K,)
        opt.zero_grad()
        losses.sum().backward()                                  # the models are independent: their sum's gradient
        opt.step()                                               # is each model's own
        if step % 100 == 0 or step == steps:
            run.losses.append(losses.detach())
    return run


def sweep(ps, decays, n: int = 5, m: int = 2, **train) -> ToyRun:
    """One ReLU toy model for every (decay, p) pair, decay by decay (model k = decays.index(d) * len(ps) +
    ps.index(p)), feature i's importance decay^i: notebook 12's explorer reads them. ``train``: train_toy's options."""
    P = torch.tensor(list(ps), dtype=torch.float32).repeat(len(decays))
    D = torch.tensor(list(decays), dtype=torch.float32).repeat_interleave(len(ps))
    return train_toy(P, n=n, m=m, I=D[:, None] ** torch.arange(n, dtype=torch.float32)[None], **train)


def interference(W: torch.Tensor) -> torch.Tensor:
    """W^T W: (K, n, n) for W (K, m, n). Diagonal: how strongly each feature is read back (||W_i||^2); off the
    diagonal, (i, j): how much feature j leaks into feature i's read-out."""
    return W.mT @ W


def feature_norms(W: torch.Tensor) -> torch.Tensor:
    """||W_i||, each feature's length in the small space: (K, n). Near 1: represented; near 0: dropped."""
    return W.norm(dim=-2)


def superposition(W: torch.Tensor) -> torch.Tensor:
    """sum over j != i of (W_i/||W_i|| . W_j)^2: (K, n), how much the other features share feature i's direction
    (Elhage et al.'s measure). 0: a dimension of its own; 1 or more: shared."""
    unit = W / W.norm(dim=-2, keepdim=True).clamp(min=1e-6)
    overlap = (unit.mT @ W) ** 2                                 # (K, n, n): (W_i-hat . W_j)^2
    return overlap.sum(dim=-1) - overlap.diagonal(dim1=-2, dim2=-1)


def leak_cut(W: torch.Tensor, b: torch.Tensor) -> float:
    """With one feature j active (x_j uniform in [0, 1], the others 0), feature i's read-out is
    ReLU((W^T W)_ij x_j + b_i). The share of those read-outs (over every i != j and x_j) that the ReLU makes exactly 0:
    a leak (W^T W)_ij <= 0 always (with b_i <= 0), a positive one while x_j <= -b_i / (W^T W)_ij. W (m, n), b (n,)."""
    leak = W.mT @ W                                             # (n, n): (i, j) = W_i . W_j
    bias = b[:, None].expand_as(leak)                           # b_i for every j
    zero_below = torch.where(leak > 0, (-bias / leak.clamp(min=1e-12)).clamp(0, 1),
                             (bias <= 0).float())               # P(x_j <= threshold) for x_j uniform in [0, 1]
    off = ~torch.eye(leak.shape[0], dtype=torch.bool)
    return float(zero_below[off].mean())


def dimensions_per_feature(W: torch.Tensor) -> torch.Tensor:
    """m / ||W||_F^2: (K,). 1 when m features get a dimension each; 2/5 for a pentagon of 5 in 2."""
    return W.shape[-2] / (W ** 2).sum(dim=(-2, -1))


class SparseAutoencoder(nn.Module):
    """f = ReLU(W_enc (z - b_dec) + b_enc), z' = W_dec f + b_dec, for z (d_in, batch) columns -> (f, z')."""

    def __init__(self, d_in: int, n_latents: int, seed: int = 0):
        super().__init__()
        if n_latents < 1 or d_in < 1:
            raise ValueError(f"d_in and n_latents must be at least 1, got {d_in} and {n_latents}")
        g = torch.Generator().manual_seed(seed)
        W_dec = torch.randn(d_in, n_latents, generator=g)
        W_dec /= W_dec.norm(dim=0, keepdim=True)
        self.W_dec = nn.Parameter(W_dec)                         # (d_in, n_latents): columns of length 1
        self.W_enc = nn.Parameter(W_dec.T.clone())               # (n_latents, d_in): starts as the decoder's transpose
        self.b_enc = nn.Parameter(torch.zeros(n_latents))
        self.b_dec = nn.Parameter(torch.zeros(d_in))

    def encode(self, z: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.W_enc @ (z - self.b_dec[:, None]) + self.b_enc[:, None])   # (n_latents, batch)

    def decode(self, f: torch.Tensor) -> torch.Tensor:
        return self.W_dec @ f + self.b_dec[:, None]              # (d_in, batch)

    def forward(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        f = self.encode(z)
        return f, self.decode(f)

    @torch.no_grad()
    def normalise_decoder(self) -> None:
        """Columns of W_dec back to length 1 (after each step: otherwise the L1 penalty is dodged by shrinking f and
        growing W_dec)."""
        self.W_dec /= self.W_dec.norm(dim=0, keepdim=True).clamp(min=1e-8)


def sae_loss(z: torch.Tensor, z_hat: torch.Tensor, f: torch.Tensor, l1: float) -> torch.Tensor:
    """mean over the batch of ||z - z'||^2 + l1 sum_k f_k: reconstruction plus sparsity, a number."""
    return ((z - z_hat) ** 2).sum(dim=0).mean() + l1 * f.sum(dim=0).mean()


def train_sae(acts: torch.Tensor, n_latents: int, l1: float = 1e-3, steps: int = 2000, batch: int = 256,
              lr: float = 1e-3, seed: int = 0) -> SparseAutoencoder:
    """A sparse autoencoder on activations acts (d_in, N), N columns sampled with replacement, batch at a time."""
    if acts.dim() != 2:
        raise ValueError(f"acts must be activations as columns, (d_in, N), got shape {tuple(acts.shape)}")
    acts = acts.detach()
    sae = SparseAutoencoder(acts.shape[0], n_latents, seed=seed)
    with torch.no_grad():
        sae.b_dec.copy_(acts.mean(dim=1))                        # start the decoder's bias at the mean activation
    opt = AdamW(sae.parameters(), lr=lr, weight_decay=0.0)
    g = torch.Generator().manual_seed(seed + 1)
    for _ in range(steps):
        z = acts[:, torch.randint(acts.shape[1], (batch,), generator=g)]
        f, z_hat = sae(z)
        loss = sae_loss(z, z_hat, f, l1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sae.normalise_decoder()
    return sae


@torch.no_grad()
def l0(f: torch.Tensor) -> float:
    """The mean number of latents firing (f > 0) per column: f (n_latents, batch)."""
    return float((f > 0).sum(dim=0).float().mean())


@torch.no_grad()
def dead_latents(f: torch.Tensor) -> int:
    """How many latents never fire on these columns: f (n_latents, batch)."""
    return int((f.amax(dim=1) <= 0).sum())


@torch.no_grad()
def reconstruction_error(z: torch.Tensor, z_hat: torch.Tensor) -> float:
    """||z - z'||^2 / ||z - mean z||^2, summed over the batch: the share of the activations' variance the
    reconstruction misses (0: perfect)."""
    return float(((z - z_hat) ** 2).sum() / ((z - z.mean(dim=1, keepdim=True)) ** 2).sum())


@torch.no_grad()
def loss_recovered(model: Transformer, tokens: torch.Tensor, point: str, sae: SparseAutoencoder) -> dict[str, float]:
    """The model's loss on tokens (batch, n + 1) with the activation at hook point ``point`` (e.g. "L0.z", the MLP's
    hidden layer, (batch, d_in, n)) as it is, replaced by the autoencoder's reconstruction, and zeroed; and the share of
    the loss the zeroing loses that the reconstruction gets back: (zeroed - reconstructed) / (zeroed - clean), 1 for a
    perfect reconstruction (SAELens's "CE loss recovered")."""
    def reconstruct(a: torch.Tensor) -> torch.Tensor:            # (batch, d_in, n): every column through the SAE
        cols = a.movedim(1, -1).reshape(-1, a.shape[1]).T        # (d_in, batch n)
        return sae(cols)[1].T.reshape(a.shape[0], a.shape[2], a.shape[1]).movedim(-1, 1)

    clean = float(model.loss(tokens))
    with hooked(model, {point: reconstruct}):
        rebuilt = float(model.loss(tokens))
    with hooked(model, {point: torch.zeros_like}):
        zeroed = float(model.loss(tokens))
    if abs(zeroed - clean) < 1e-4:
        raise ValueError(f"zeroing {point} moves the loss by {zeroed - clean:+.1e} nats: there is nothing to recover "
                         "(an untrained model, or a component the model does not use)")
    return {"clean": clean, "reconstructed": rebuilt, "zeroed": zeroed,
            "recovered": (zeroed - rebuilt) / (zeroed - clean)}


# --- the autoencoder on notebook 06's facts model -------------------------------------------------------------------
# The facts model has one layer and no LayerNorm, and the colour is read at the prompt's last position (the thing):
# there z, the MLP's hidden layer (d_mlp,), is what the autoencoder reads and what the interventions edit.


def fact_model(task: FactsTask, seed: int = 0, steps: int = 300) -> Transformer:
    """Notebook 06's "attention + MLP" model of the facts (one layer, 2 heads, d_model 32, d_mlp 128, no LayerNorm),
    trained with notebook 06's recipe: full-batch AdamW on every fact for ``steps`` steps."""
    d_model, d_mlp = FACT_MODELS["attention + MLP"]
    cfg = Config(n_vocab=task.n_vocab, d_model=d_model, n_ctx=2, n_layers=1, n_heads=2, d_mlp=d_mlp)
    model = fresh_model(cfg, seed=seed)
    train_facts(model, task, steps=steps)
    return model


@torch.no_grad()
def last_hidden(model: Transformer, prompts: torch.Tensor) -> torch.Tensor:
    """z at each prompt's last position, as columns: (d_mlp, N) for prompts (N, n)."""
    key = names.key(0, "z")
    return model.activations(prompts, [key])[key][..., -1].T


@torch.no_grad()
def logits_with(model: Transformer, prompts: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """The answer logits (N, n_vocab) when z at the last position is replaced by the columns of z (d_mlp, N): an
    intervention on the MLP's hidden layer; everything before it and after it runs as usual."""
    if z.shape != (model.cfg.d_mlp, len(prompts)):
        raise ValueError(f"z must be one column of d_mlp = {model.cfg.d_mlp} numbers per prompt, "
                         f"({model.cfg.d_mlp}, {len(prompts)}); got {tuple(z.shape)}")

    def put(a: torch.Tensor) -> torch.Tensor:                    # a: (N, d_mlp, n)
        a = a.clone()
        a[..., -1] = z.T
        return a

    with hooked(model, {names.key(0, "z"): put}):
        return answer_logits(model, prompts)


def answer_loss(model: Transformer, prompts: torch.Tensor, answers: torch.Tensor, z: torch.Tensor) -> float:
    """Cross-entropy of the right colours (nats) with z at the last position replaced by z (d_mlp, N)."""
    return float(F.cross_entropy(logits_with(model, prompts, z), answers))


def facts_loss_recovered(model: Transformer, prompts: torch.Tensor, answers: torch.Tensor, z: torch.Tensor,
                         z_hat: torch.Tensor) -> dict[str, float]:
    """The facts' loss with the real z, with the reconstruction z_hat in its place, and with z zeroed (the MLP's
    hidden layer switched off), and the share of what zeroing loses that the reconstruction gets back:
    (zeroed - reconstructed) / (zeroed - clean); 1 for a perfect reconstruction (SAELens: "CE loss recovered")."""
    clean, rebuilt, zeroed = (answer_loss(model, prompts, answers, a) for a in (z, z_hat, torch.zeros_like(z)))
    return {"clean": clean, "reconstructed": rebuilt, "zeroed": zeroed,
            "recovered": (zeroed - rebuilt) / (zeroed - clean)}


@torch.no_grad()
def parts(z: torch.Tensor, sae: SparseAutoencoder | None = None) -> torch.Tensor:
    """What each unit adds to one column z (d_mlp,): (units, d_mlp). Neurons (sae None): row j is z_j e_j, the
    neuron's own entry. Latents: row k is f_k W_dec[:, k], latent k's share of the reconstruction. Taking a row away
    from z removes that unit and leaves the rest, for latents the autoencoder's error z - z' too."""
    if sae is None:
        return torch.diag(z)
    f = sae.encode(z[:, None])[:, 0]                             # (n_latents,)
    return (sae.W_dec * f).T


@torch.no_grad()
def pushes(model: Transformer, answers: torch.Tensor, z: torch.Tensor, sae: SparseAutoencoder | None = None
           ) -> torch.Tensor:
    """Each unit's direct effect on the right colour's logit, for every fact: (units, N). The MLP's output
    W_2 z reaches the logits through W_U alone (one layer, no LayerNorm), so a part p of z adds
    W_U[answer] . W_2 p to the right colour's logit."""
    read = model.unembed.W_U[answers] @ model.blocks[0].mlp.W_2          # (N, d_mlp): what each fact's logit reads
    return torch.stack([parts(z[:, i], sae) @ read[i] for i in range(z.shape[1])], dim=1)


@torch.no_grad()
def units_needed(model: Transformer, prompts: torch.Tensor, answers: torch.Tensor, z: torch.Tensor,
                 sae: SparseAutoencoder | None = None, most: int = 32) -> torch.Tensor:
    """For each fact, how many units (neurons, or the autoencoder's latents) must be taken out of its z, in order of
    their direct effect on the right colour (largest first), before the model's first guess is wrong: (N,) counts;
    most + 1 where even ``most`` units leave it right. Notebook 06's exercise 6.2, for either kind of unit."""
    N = z.shape[1]
    push = pushes(model, answers, z, sae)                                # (units, N)
    most = min(most, push.shape[0])
    tried = []
    for i in range(N):
        p = parts(z[:, i], sae)[push[:, i].argsort(descending=True)[:most]]     # (most, d_mlp)
        tried.append(z[:, i][None] - p.cumsum(dim=0))                    # the first 1, 2, ..., most units taken out
    tried = torch.cat(tried).T                                           # (d_mlp, N most)
    wrong = logits_with(model, prompts.repeat_interleave(most, dim=0), tried).argmax(-1) \
        != answers.repeat_interleave(most)
    wrong = wrong.reshape(N, most)
    first = wrong.float().argmax(dim=1) + 1                              # the first size that flips
    return torch.where(wrong.any(dim=1), first, torch.full_like(first, most + 1))


@torch.no_grad()
def steered(model: Transformer, prompts: torch.Tensor, answers: torch.Tensor, z: torch.Tensor,
            sae: SparseAutoencoder | None = None, shift: int = 37) -> tuple[torch.Tensor, torch.Tensor]:
    """Steering: add the unit that pushes fact i's colour most to the z of another fact j (j = i + shift, counted
    round; pairs with the same colour are skipped). Returns (steered (pairs,) bool: j's first guess became i's colour,
    pairs (pairs, 2) the (i, j))."""
    N = z.shape[1]
    push = pushes(model, answers, z, sae)
    pairs = [(i, (i + shift) % N) for i in range(N) if answers[i] != answers[(i + shift) % N]]
    i_s, j_s = torch.tensor(pairs).T
    moved = z.clone()
    for i, j in pairs:
        moved[:, j] = z[:, j] + parts(z[:, i], sae)[push[:, i].argmax()]
    guess = logits_with(model, prompts, moved).argmax(-1)
    return guess[j_s] == answers[i_s], torch.tensor(pairs)


@torch.no_grad()
def shared_label(fires: torch.Tensor, labels: torch.Tensor, least: int = 2) -> torch.Tensor:
    """For each unit that fires on at least ``least`` facts, the share of them that have its most common label (a
    person, a thing, a colour): (units kept,). 1: every fact it fires on has the same one. fires (units, N) bool,
    labels (N,) ints."""
    out = [torch.bincount(labels[row]).max() / row.sum() for row in fires if int(row.sum()) >= least]
    return torch.stack(out).float() if out else torch.zeros(0)
