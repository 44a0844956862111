"""Notebook 08's exercise 8.2: one training step, checked against a reference step (right answers, the usual
mistakes, bad returns, the refused helper)."""

import pytest
import torch
from torch.nn import functional as F

from helpers.checks.base import ExerciseError
from helpers.checks.training import check_train_step


def step(model, optimizer, batch, *, targets=None, reduction="mean", backward=True, do_step=True, zero=True,
         opt=None):
    opt = opt(model) if opt else optimizer
    logits = model(batch[:, :-1])
    loss = F.cross_entropy(logits, batch[:, 1:] if targets is None else targets(batch), reduction=reduction)
    if backward:
        loss.backward()
    if do_step:
        opt.step()
    if zero:
        opt.zero_grad()
    return loss.item()


def zero_first(model, optimizer, batch):
    optimizer.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(batch[:, :-1]), batch[:, 1:])
    loss.backward()
    optimizer.step()
    return loss                      # a one-element tensor is a number too


def test_right_answers():
    assert check_train_step(step)
    assert check_train_step(zero_first)
    assert check_train_step(reads_the_learning_rate)


def flattened_like_bTc(model, optimizer, batch):
    """The (B, T, C) habit of other courses: logits.reshape(-1, V), on this series' (B, n_vocab, n) logits."""
    logits = model(batch[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[1]), batch[:, 1:].reshape(-1))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return loss.item()


def _swapped(model, optimizer, batch):
    loss = F.cross_entropy(model(batch[:, 1:]), batch[:, :-1])
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return loss.item()


def _wrong_axis(model, optimizer, batch):
    logits = model(batch[:, :-1])                                    # (B, n_vocab, n)
    loss = -torch.log_softmax(logits, dim=-1).gather(1, batch[:, None, 1:]).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return loss.item()


def _last_only(model, optimizer, batch):
    loss = F.cross_entropy(model(batch[:, :-1])[:, :, -1], batch[:, -1])
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return loss.item()


def _zero_grad_between(model, optimizer, batch):
    loss = F.cross_entropy(model(batch[:, :-1]), batch[:, 1:])
    loss.backward()
    optimizer.zero_grad()                     # clears the gradients the step needs
    optimizer.step()
    return loss.item()


def reads_the_learning_rate(model, optimizer, batch):
    """A right answer that looks at the optimizer as torch's optimizers allow."""
    assert optimizer.param_groups[0]["lr"] > 0
    return step(model, optimizer, batch)


def loss_after(model, optimizer, batch):
    step(model, optimizer, batch)
    return F.cross_entropy(model(batch[:, :-1]), batch[:, 1:]).item()


def keeps_the_first_batch():
    """Trains on the batch of its first call every time (kept in a default argument, say)."""
    kept = []

    def train_step(model, optimizer, batch):
        kept.append(batch)
        return step(model, optimizer, kept[0])
    return train_step


@pytest.mark.parametrize("wrong, message", [
    (lambda m, o, b: step(m, o, b, targets=lambda b: b[:, :-1]), "against its own token"),
    (lambda m, o, b: step(m, o, b, reduction="sum"), "the \\*sum\\*"),
    (lambda m, o, b: step(m, o, b, do_step=False), "did not change the model"),
    (lambda m, o, b: step(m, o, b, backward=False), "did not change the model"),
    (lambda m, o, b: step(m, o, b, zero=False), "adds\\* the new gradients"),
    (lambda m, o, b: step(m, o, b, opt=lambda m: torch.optim.AdamW(m.parameters(), lr=1e-2, weight_decay=0.1)),
     "creating a new optimizer"),
    (lambda m, o, b: step(m, o, b, opt=lambda m: torch.optim.SGD(m.parameters(), lr=0.1)), "optimizer you were given"),
    (loss_after, "before the step"),
    (flattened_like_bTc, r"reshape\(-1, n_vocab\) mixes up the logits"),
    (_swapped, "inputs and the targets are swapped"),
    (_wrong_axis, r"softmax runs over the positions \(dim -1\)"),
    (_last_only, "scores only the last position"),
    (_zero_grad_between, r"zero_grad\(\) only after the step"),
    (lambda m, o, b: F.cross_entropy(m(b[:, :-1]).transpose(1, 2), b[:, 1:]).item(), "classes on dim 1"),
    (lambda m, o, b: m(b), "n_ctx is 6"),
    (lambda m, o, b: None, "got NoneType"),
    (lambda m, o, b: float("nan"), "nan"),
    (lambda m, o, b: torch.ones(3), "one number"),
    (keeps_the_first_batch(), "the first step was right, but the second"),
])
def test_mistakes_are_explained(wrong, message):
    with pytest.raises(ExerciseError, match=message):
        check_train_step(wrong)


def test_the_loss_helper_is_refused():
    def with_helper(model, optimizer, batch):
        loss = model.loss(batch)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.item()

    def with_evaluate(model, optimizer, batch):
        from helpers.train import evaluate
        return evaluate(model, batch.flatten())
    for fn in (with_helper, with_evaluate):
        with pytest.raises(ExerciseError, match="calls model.loss"):
            check_train_step(fn)


def test_unwritten_says_so():
    def train_step(model, optimizer, batch):
        raise NotImplementedError()
    with pytest.raises(ExerciseError, match="not written yet"):
        check_train_step(train_step)
