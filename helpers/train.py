"""A small, seeded training loop: next-token cross-entropy, AdamW, a progress bar, a history.

Every number it produces is repeatable: the model's initial weights come from ``seed``, and so
does the order of the training windows. (Torch's thread count is set by ``helpers.setup``.)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import torch
from tqdm.auto import tqdm

from helpers.data import HELDOUT_PREDICTIONS
from helpers.model.config import Config
from helpers.model.transformer import Transformer
from helpers.optim import AdamW
from helpers.runtime import release_memory
from helpers.tokens import covering_windows, random_windows


def fresh_model(cfg: Config, seed: int = 0) -> Transformer:
    """A new model whose random initial weights depend only on ``seed``."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return Transformer(cfg)


@dataclass
class History:
    """What happened during training."""

    step: list[int] = field(default_factory=list)  # steps at which train_loss was recorded
    train_loss: list[float] = field(default_factory=list)  # mean loss of the batches since the last record
    eval_step: list[int] = field(default_factory=list)
    heldout_loss: list[float] = field(default_factory=list)  # cross-entropy on held-out text
    seconds: float = 0.0

    @property
    def final_heldout(self) -> float:
        return self.heldout_loss[-1] if self.heldout_loss else math.nan

    @property
    def best_heldout(self) -> float:
        return min(self.heldout_loss) if self.heldout_loss else math.nan


@torch.no_grad()
def evaluate(model: Transformer, ids: torch.Tensor, max_tokens: int | None = None, batch_size: int = 32) -> float:
    """Mean next-token cross-entropy (nats/token) over ``ids``, each token predicted once.

    max_tokens: score only the first that many tokens (a quicker estimate while training).
    """
    if max_tokens is not None:
        ids = ids[: max_tokens + 1]
    if len(ids) < 2:
        raise ValueError("need at least two tokens to measure a next-token loss")
    was_training = model.training
    model.eval()
    windows = covering_windows(ids, model.cfg.n_ctx)
    full = [w for w in windows if len(w) == model.cfg.n_ctx + 1]
    rest = [w for w in windows if len(w) != model.cfg.n_ctx + 1]
    total, count = 0.0, 0
    for i in range(0, len(full), batch_size):
        batch = torch.stack(full[i:i + batch_size])
        n_tok = batch[:, 1:].numel()
        total += float(model.loss(batch)) * n_tok
        count += n_tok
    for w in rest:
        total += float(model.loss(w[None])) * (len(w) - 1)
        count += len(w) - 1
    model.train(was_training)
    release_memory()  # (the batches' freed memory back to the system)
    return total / count


def train(model: Transformer, train_ids: torch.Tensor, steps: int, *, batch_size: int = 32,
          lr: float = 1e-2, weight_decay: float = 0.0, seed: int = 0,
          heldout_ids: torch.Tensor | None = None, eval_every: int = 100, eval_tokens: int = HELDOUT_PREDICTIONS,
          log_every: int = 10, progress: bool = True, desc: str = "training") -> History:
    """Train ``model`` on random windows of ``train_ids`` with AdamW; return the loss history.

    If ``heldout_ids`` is given, the held-out loss (on its first ``eval_tokens`` predictions; by default the
    series' held-out set, ``helpers.data``) is measured every ``eval_every`` steps and at the end.
    """
    if steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}")
    g = torch.Generator().manual_seed(seed)
    opt = AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    hist = History()
    start, running = time.perf_counter(), []
    model.train()
    bar = tqdm(range(1, steps + 1), desc=desc, disable=not progress, mininterval=0.5)
    for step in bar:
        batch = random_windows(train_ids, model.cfg.n_ctx, batch_size, g)
        loss = model.loss(batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        running.append(loss.item())
        if step % log_every == 0 or step == steps:
            hist.step.append(step)
            hist.train_loss.append(sum(running) / len(running))
            running = []
            bar.set_postfix(loss=f"{hist.train_loss[-1]:.3f}", refresh=False)
        if heldout_ids is not None and (step % eval_every == 0 or step == steps):
            hist.eval_step.append(step)
            hist.heldout_loss.append(evaluate(model, heldout_ids, max_tokens=eval_tokens))
    bar.close()
    model.eval()
    hist.seconds = time.perf_counter() - start
    release_memory()  # (the training steps' freed memory back to the system)
    return hist


def fit_to_counts(model: Transformer, C: torch.Tensor, steps: int, *, lr: float = 5e-2,
                  progress: bool = True, desc: str = "fitting W_U W_E") -> History:
    """Train a zero-layer model without positional embeddings on bigram counts, full batch.

    Such a model predicts from the current token alone, T(t_n) = softmax(W_U W_E t_n), so its
    whole training loss is a function of the bigram counts C[b, a] (b follows a):
        loss = - sum_{a,b} C[b, a] log softmax(W_U W_E)[b, a] / sum C.
    Training on C directly gives the exact loss over the whole corpus at every step.
    C: (n_vocab, n_vocab).
    """
    cfg = model.cfg
    if cfg.n_layers or cfg.positional:
        raise ValueError("fit_to_counts is for a zero-layer model without W_pos (n_layers=0, positional=False)")
    if C.shape != (cfg.n_vocab, cfg.n_vocab):
        raise ValueError(f"counts have shape {tuple(C.shape)}, the model's n_vocab is {cfg.n_vocab}")
    opt = AdamW(model.parameters(), lr=lr, weight_decay=0.0)  # Adam: no weight decay
    total = C.sum()
    hist = History()
    start = time.perf_counter()
    for step in tqdm(range(1, steps + 1), desc=desc, disable=not progress, mininterval=0.5):
        logits = model.unembed.W_U @ model.embed.W_E  # (n_vocab, n_vocab): column a = logits after a
        loss = -(C * torch.log_softmax(logits, dim=0)).sum() / total
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        hist.step.append(step)
        hist.train_loss.append(loss.item())
    model.eval()
    hist.seconds = time.perf_counter() - start
    release_memory()  # (the training steps' freed memory back to the system)
    return hist
