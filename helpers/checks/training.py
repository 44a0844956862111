"""Notebook 08: one training step of a Transformer — forward, next-token loss, backward, step, zero_grad —
compared with a reference step on a model the notebook never shows."""

from __future__ import annotations

from typing import Callable

import torch
from torch.nn import functional as F

from helpers.checks.base import ExerciseError, call, exercise, named, number_result, passed
from helpers.model.config import Config
from helpers.optim import AdamW

SEED = 808  # the hidden seed of the check's model and batches
CFG = Config(n_vocab=23, d_model=12, n_ctx=6, n_layers=1, n_heads=3, d_head=4, d_mlp=20, layernorm=True)


class _GivenAdamW(AdamW):
    """The series' AdamW with torch's ``param_groups`` to read: a right answer may look the learning rate up there
    (``optimizer.param_groups[0]["lr"]``), as torch's optimizers allow. Read-only: the step uses ``lr`` itself."""

    @property
    def param_groups(self) -> list[dict]:
        return [{"params": self.params, "lr": self.lr, "betas": self.betas, "eps": self.eps,
                 "weight_decay": self.weight_decay}]


def _model_and_optimizer():
    from helpers.train import fresh_model

    model = fresh_model(CFG, seed=SEED)
    model.train()
    return model, _GivenAdamW(model.parameters(), lr=1e-2, weight_decay=0.1)


def _reference_step(model, optimizer, batch) -> float:
    logits = model(batch[:, :-1])                         # (batch, n_vocab, n): one guess per position
    loss = F.cross_entropy(logits, batch[:, 1:])          # the target at position i is token i + 1
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return loss.item()


def _largest_change(a, b) -> float:
    return max(float((p.detach() - q.detach()).abs().max()) for p, q in zip(a.parameters(), b.parameters()))


class _LossHelperUsed(Exception):
    pass


@exercise(answered_by=())
def check_train_step(fn: Callable) -> bool:
    """fn(model, optimizer, batch) with batch (B, n + 1) token ids: one AdamW step on the mean next-token
    cross-entropy of the batch; returns the loss (a number) computed before the step."""
    what = named(fn, "train_step", "(model, optimizer, batch)")
    g = torch.Generator().manual_seed(SEED)
    batches = [torch.randint(CFG.n_vocab, (5, CFG.n_ctx + 1), generator=g) for _ in range(2)]
    mine, opt_mine = _model_and_optimizer()
    ref, opt_ref = _model_and_optimizer()
    used = []

    def refused(*args, **kwargs):
        used.append(True)
        raise _LossHelperUsed("model.loss")
    mine.loss = refused  # the helper computes the loss in one call: the exercise asks for that computation

    losses = []
    for step, batch in enumerate(batches, 1):
        before = [p.detach().clone() for p in mine.parameters()]
        try:
            out = call(fn, mine, opt_mine, batch.clone(), what=what, may_train=True,
                       hints={"Expected target size": "F.cross_entropy wants the classes on dim 1, and the logits "
                                                       "already have them there, (batch, n_vocab, n): pass them as "
                                                       "they are, with targets (batch, n)."})
        except ExerciseError:
            if used:
                raise ExerciseError(f"{what} calls model.loss (or a helper that does), which computes the loss in "
                                    "one call. Write it: logits = model(batch[:, :-1]), then F.cross_entropy with "
                                    "the targets batch[:, 1:].") from None
            raise
        got = number_result(out, f"the loss {what} returned")
        want = _reference_step(ref, opt_ref, batch)
        losses.append(want)
        if abs(got - want) > 1e-4 * max(1.0, abs(want)):
            with torch.no_grad():
                fresh, _ = _model_and_optimizer()
                if step == 2:
                    fresh.load_state_dict(ref.state_dict())
                logits = fresh(batch[:, :-1])
                same_pos = float(F.cross_entropy(logits, batch[:, :-1]))
                total = want * batch[:, 1:].numel()
                habits = [   # (the loss a usual mistake returns, what it is), tried on the first step
                    (F.cross_entropy(logits[:, :, -1], batch[:, -1]),
                     "it scores only the last position. Every position predicts its next token (the post's reason "
                     "for a query per token): the loss is the mean over all n positions of every text."),
                    (-torch.log_softmax(logits, dim=-1).gather(1, batch[:, None, 1:]).mean(),
                     "the softmax runs over the positions (dim -1). The logits are (batch, n_vocab, n), the "
                     "vocabulary on dim 1 (the post's columns): log_softmax(logits, dim=1), or F.cross_entropy, "
                     "which takes that layout as it is."),
                    (F.cross_entropy(fresh(batch[:, 1:]), batch[:, :-1]),
                     "the inputs and the targets are swapped. The model reads batch[:, :-1] (every token but the "
                     "last) and guesses batch[:, 1:] (every token but the first)."),
                    (F.cross_entropy(logits.reshape(-1, CFG.n_vocab), batch[:, 1:].reshape(-1)),
                     "reshape(-1, n_vocab) mixes up the logits. In this series the model returns (batch, n_vocab, "
                     "n) — the vocabulary is dim 1, the post's columns — not (batch, n, n_vocab), so flattening it "
                     "that way pairs scores with the wrong tokens. F.cross_entropy takes (batch, n_vocab, n) with "
                     "targets (batch, n) as they are; or move the vocabulary last first: "
                     "logits.transpose(1, 2).reshape(-1, n_vocab)."),
                ]
            for loss, mistake in habits if step == 1 else ():
                if abs(got - float(loss)) < 1e-4 * max(1.0, float(loss)):
                    raise ExerciseError(f"{what} returned loss {got:.4f} instead of {want:.4f}: {mistake}")
            if abs(got - same_pos) < 1e-4 * max(1.0, same_pos) and step == 1:
                raise ExerciseError(f"{what} returned loss {got:.4f}, but the model's loss on this batch is "
                                    f"{want:.4f}. You scored each position against its own token: the logits at "
                                    "position i guess token i + 1, so the targets are batch[:, 1:] (the inputs "
                                    "batch[:, :-1]).")
            if abs(got - total) < 1e-3 * total:
                raise ExerciseError(f"{what} returned {got:.2f}, the *sum* of the cross-entropies of the "
                                    f"{batch[:, 1:].numel()} predictions; the training loss is their mean "
                                    f"({want:.4f}), so that the step size does not depend on the batch size.")
            if step == 2:
                raise ExerciseError(f"{what}: the first step was right, but the second returned loss {got:.4f} "
                                    f"instead of {want:.4f}. Does the function keep a model or a batch from the "
                                    "first call, or compute the loss after the step?")
            raise ExerciseError(f"{what} returned loss {got:.4f}, but the model's mean next-token cross-entropy on "
                                f"this batch, before the step, is {want:.4f}. Return loss.item() of the loss you "
                                "called backward() on.")
        if max(float((p.detach() - b).abs().max()) for p, b in zip(mine.parameters(), before)) == 0:
            raise ExerciseError(f"{what} returned the right loss but did not change the model: after "
                                "loss.backward(), call optimizer.step() (the optimizer it was given) — and "
                                "zero_grad() only after the step or before backward(): between the two it clears "
                                "the gradients the step needs.")
        off = _largest_change(mine, ref)
        if off > 1e-5:
            grads = [p.grad for p in mine.parameters()]
            if step == 1:
                raise ExerciseError(f"{what}: after one step the weights differ from a reference step by up to "
                                    f"{off:.2g}. Use the optimizer you were given (a new one starts with other "
                                    "settings), and call backward() once on the loss before optimizer.step().")
            if any(gr is not None and float(gr.abs().max()) > 0 for gr in grads):
                raise ExerciseError(f"{what}: the first step was right, the second was not, and the model still "
                                    "holds gradients after your step. Without optimizer.zero_grad() (or "
                                    "model.zero_grad()), backward() *adds* the new gradients to the old ones: "
                                    "every step would also repeat the previous ones.")
            raise ExerciseError(f"{what}: the first step was right, the second was not (weights off by up to "
                                f"{off:.2g}). Are you creating a new optimizer inside the function? AdamW keeps "
                                "running averages from step to step: use the one you were given.")
    return passed(f"train_step is right: two AdamW steps on a model you had not seen match a reference step "
                  f"(losses {losses[0]:.3f}, then {losses[1]:.3f}).")
