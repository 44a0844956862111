"""Notebook 02 exercises: the gradient of the cross-entropy with respect to the logits, by hand; and
the training loop of a zero-layer model, T(t) = softmax(W_U W_E t), by plain gradient descent."""

from __future__ import annotations

import torch

from helpers.checks.base import (ExerciseError, as_tensor, call, close, exercise, expect_shape, named, passed,
                                 tensor_result)
AUTOGRAD = ("torch.autograd.grad", "torch.autograd.backward", "torch.func.grad", "torch.func.vjp")
ONE_HOT_HINTS = {"must match the size": "If the one-hot targets come from F.one_hot, give it num_classes="
                                        "logits.shape[0] (without it, it makes only max(targets) + 1 classes), and "
                                        "transpose it to (n_vocab, n), one column per position."}


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return close(a, b, atol=1e-5, rtol=1e-5)


def _loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean over columns of -ln softmax(column)[target]: the post's logits, one column per position."""
    logp = torch.log_softmax(logits, dim=0)
    return -logp[targets, torch.arange(logits.shape[1])].mean()


def _autograd(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    x = logits.double().detach().requires_grad_()
    (grad,) = torch.autograd.grad(_loss(x, targets), x)
    return grad


@exercise(answered_by=())
def check_logit_grad(fn) -> bool:
    """``fn(logits, targets)``: logits (n_vocab, n), one column per position; targets (n,) the token that
    really came next at each position. Must return dL/dlogits, shape (n_vocab, n), for
    L = mean over positions of -ln softmax(logits)[target]: (softmax(logits) - one_hot(targets)) / n."""
    what = named(fn, "logit_grad", "(logits, targets)")
    g = torch.Generator().manual_seed(3)
    cases = [(torch.randn(4, 4, generator=g), torch.tensor([1, 2, 3, 0])),  # square: rows vs columns shows
             (torch.randn(5, 3, generator=g), torch.tensor([4, 0, 4])),
             (torch.randn(2, 7, generator=g) * 3, torch.randint(0, 2, (7,), generator=g)),
             (torch.randn(11, 1, generator=g), torch.tensor([6]))]
    for logits, targets in cases:
        out = call(fn, logits, targets.clone(), what=what, forbid=AUTOGRAD, hints=ONE_HOT_HINTS)  # logits unchanged
        shape = tuple(logits.shape)
        out = tensor_result(out, shape, what, "The gradient has one entry per logit: the shape of logits.")
        want = _autograd(logits, targets)
        if _close(out, want):
            continue
        n_vocab, n = shape
        p = torch.softmax(logits.double(), dim=0)
        onehot = torch.zeros(shape, dtype=torch.float64)
        onehot[targets, torch.arange(n)] = 1
        where = f"(logits of shape {shape})"
        if _close(out, -want):
            raise ExerciseError(f"{what} has the wrong sign {where}: raising the right token's logit *lowers* the "
                                "loss, so its gradient entry is p - 1 < 0. It is p - one_hot, not one_hot - p.")
        if n > 1 and _close(out, want * n):
            raise ExerciseError(f"{what} is n times too large {where}: the loss is the *mean* over the n "
                                "positions, so each column of the gradient carries a factor 1/n.")
        if n > 1 and (_close(out, p - onehot / n) or _close(out, p / n - onehot)):
            raise ExerciseError(f"{what} divides only one of the two terms by n {where}. The loss is the mean "
                                "over the n positions, so the whole difference carries the 1/n: (p - one_hot) / n; "
                                "mind the brackets.")
        if n_vocab != n and _close(out, (p - onehot) / n_vocab):
            raise ExerciseError(f"{what} divides by n_vocab {where}; the loss is the mean over the n positions "
                                "(the columns), so divide by n = logits.shape[1].")
        dp = -onehot / p.clamp(min=1e-300)
        if _close(out, dp / n) or _close(out, dp):
            raise ExerciseError(f"{what} is the gradient with respect to the probabilities p (d(-ln p)/dp = -1/p) "
                                f"{where}. The exercise asks for the logits: through the softmax, that becomes "
                                "(p - one_hot) / n.")
        if _close(out, p / n) or _close(out, p):
            raise ExerciseError(f"{what} returns the probabilities without subtracting the one-hot target "
                                f"{where}: the right token's entry is p - 1, every other token's is p.")
        if _close(out, (torch.softmax(logits.double(), 1) - onehot) / n) or \
                _close(out, torch.softmax(logits.double(), 1) - onehot):
            raise ExerciseError(f"{what} takes the softmax along each *row* {where}. Each column is one "
                                "position's logits over the vocabulary: softmax over dim 0.")
        if n_vocab == n and (_close(out, (p - onehot.T) / n)
                             or _close(out, (p - onehot.T))):
            raise ExerciseError(f"{what} puts the one-hot targets in rows {where}: position j's target is the "
                                "1 in *column* j, at row targets[j].")
        raise ExerciseError(f"{what} differs from autograd's gradient {where}: largest difference "
                            f"{float((out - want).abs().max()):.3g}. Expected (softmax(logits) - one_hot) / n.")
    big = torch.tensor([[200.0], [100.0]])                      # e^200 is past float32's largest number (~e^88.7)
    out = as_tensor(call(fn, big, torch.tensor([1]), what=what, forbid=AUTOGRAD, hints=ONE_HOT_HINTS), what)
    expect_shape(out, (2, 1), what, "The gradient has one entry per logit: the shape of logits.")
    if not bool(torch.isfinite(out).all()):                     # before the generic NaN message: name the cause
        raise ExerciseError(f"{what} gives {out.flatten().tolist()} for the logits [200, 100]: exp(200) overflows "
                            "to infinity, and inf / inf is NaN. Use a stable softmax: subtract each column's "
                            "largest logit before exp (exercise 2.1), which changes no probability.")
    if not _close(out, _autograd(big, torch.tensor([1]))):
        raise ExerciseError(f"{what} is wrong for the logits [200, 100] (target 1), though right for small ones: "
                            f"got {out.flatten().tolist()}, expected about [1, -1].")
    return passed("Correct: dL/dlogits = (softmax(logits) - one_hot(targets)) / n, as autograd finds.")


# ---------------------------------------------------------------------------------------------------------


def _train(W_E, W_U, ids, steps, lr, *, dim=0, accumulate=False, mean=True, backwards=False, itself=None):
    """Plain full-batch gradient descent on next-token prediction over ``ids`` (and the usual mistakes,
    as options; ``itself`` is a slice of ids that serves as both input and target). Returns the trained
    weights and the loss before each step."""
    W_E = W_E.double().clone().requires_grad_()
    W_U = W_U.double().clone().requires_grad_()
    prev, nxt = (ids[1:], ids[:-1]) if backwards else (ids[:-1], ids[1:])
    if itself is not None:
        prev = nxt = ids[itself]
    t = torch.nn.functional.one_hot(prev, W_U.shape[0]).T.double()  # (n_vocab, N): one-hot columns
    losses = []
    for _ in range(steps):
        logits = W_U @ W_E @ t  # (n_vocab, N): the logits at each position
        terms = -torch.log_softmax(logits, dim=dim)[nxt, torch.arange(len(nxt))]
        loss = terms.mean() if mean else terms.sum()
        losses.append(loss.item())
        if not accumulate:
            W_E.grad = W_U.grad = None
        loss.backward()
        with torch.no_grad():
            W_E -= lr * W_E.grad
            W_U -= lr * W_U.grad
    return W_E.detach(), W_U.detach(), losses


def loss_of(W_E, W_U, ids) -> float:
    logits = W_U.double() @ W_E.double()[:, ids[:-1]]
    return float(-torch.log_softmax(logits, dim=0)[ids[1:], torch.arange(len(ids) - 1)].mean())


@exercise(answered_by=("helpers.train.fit_to_counts",))
def check_train_zero_layer(fn) -> bool:
    """``fn(W_E, W_U, ids, steps, lr)``: W_E (d_model, n_vocab), W_U (n_vocab, d_model), a token stream ids.
    Must run ``steps`` steps of plain full-batch gradient descent (W <- W - lr dL/dW) on the mean
    cross-entropy of predicting ids[j + 1] from softmax(W_U W_E t_j), and return the trained (W_E, W_U)."""
    what = named(fn, "train_zero_layer", "(W_E, W_U, ids, steps, lr)")
    g = torch.Generator().manual_seed(11)
    cases = []
    for n_vocab, d_model, length, steps, lr in ((5, 3, 30, 15, 1.0), (7, 2, 45, 20, 2.0)):
        W_E = torch.randn(d_model, n_vocab, generator=g) * 0.5
        W_U = torch.randn(n_vocab, d_model, generator=g) * 0.5
        ids = torch.randint(0, n_vocab - 1, (length,), generator=g)  # the last token never occurs
        cases.append((W_E, W_U, ids, steps, lr))
    for W_E, W_U, ids, steps, lr in cases:
        out = call(fn, W_E.clone(), W_U.clone(), ids.clone(), steps, lr, what=what,
                   forbid=check_train_zero_layer.answered_by,
                   hints={"shapes cannot be multiplied": ONE_HOT_HINTS["must match the size"],
                          "must match the size": ONE_HOT_HINTS["must match the size"]})
        if out is None:
            raise ExerciseError(f"{what} returned None: return the trained pair, `return W_E, W_U`.")
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise ExerciseError(f"{what} should return two tensors, (W_E, W_U); got {type(out).__name__}.")
        names = (f"The W_E that {what} returns", f"The W_U that {what} returns")
        got_E, got_U = (as_tensor(o.detach() if isinstance(o, torch.Tensor) else o, n) for o, n in zip(out, names))
        expect_shape(got_E, tuple(W_E.shape), names[0], "Did you swap W_E and W_U?")
        expect_shape(got_U, tuple(W_U.shape), names[1], "Did you swap W_E and W_U?")
        where = f"(n_vocab = {W_U.shape[0]}, d_model = {W_E.shape[0]}, {len(ids)} tokens, {steps} steps at lr = {lr})"
        if not (torch.isfinite(got_E.double()).all() and torch.isfinite(got_U.double()).all()):
            raise ExerciseError(f"Training diverged {where}: the returned weights contain NaN or infinity. "
                                "Is the loss summed over the positions instead of averaging? Then every step "
                                "is len(ids) - 1 times too large.")
        got_E = tensor_result(got_E, tuple(W_E.shape), names[0])
        got_U = tensor_result(got_U, tuple(W_U.shape), names[1])
        want_E, want_U, losses = _train(W_E, W_U, ids, steps, lr)
        start, want, got = losses[0], loss_of(want_E, want_U, ids), loss_of(got_E, got_U, ids)
        if close(got_E, want_E, atol=2e-3, rtol=1e-5) and close(got_U, want_U, atol=2e-3, rtol=1e-5):
            continue
        if close(got_E, W_E.double(), rtol=1e-5) and close(got_U, W_U.double(), rtol=1e-5):
            raise ExerciseError(f"{what} returns the weights unchanged {where}. Each step: logits, loss, "
                                "loss.backward(), then W -= lr * W.grad under torch.no_grad().")

        def like(**mistake) -> bool:
            E, U, _ = _train(W_E, W_U, ids, steps, lr, **mistake)
            return bool(torch.isfinite(E).all() and torch.isfinite(U).all()
                        and close(got_E, E, atol=2e-3, rtol=1e-5) and close(got_U, U, atol=2e-3, rtol=1e-5))

        if like(backwards=True):
            raise ExerciseError(f"{what} predicts each token from the one *after* it {where}: the input "
                                "(one-hot column) is ids[:-1], the target the next token ids[1:].")
        if any(like(itself=part) for part in (slice(None), slice(None, -1), slice(1, None))):
            raise ExerciseError(f"{what} predicts each token from *itself* {where}: the inputs and the targets "
                                "are the same tokens. The model reads token j and is scored on token j + 1: "
                                "inputs ids[:-1], targets ids[1:].")
        if like(accumulate=True):
            raise ExerciseError(f"{what} never clears the gradients {where}: .backward() *adds* to W.grad, so "
                                "set W_E.grad = W_U.grad = None (or .zero_()) at every step.")
        if like(dim=1):
            raise ExerciseError(f"{what} takes the softmax along *rows* {where}, across positions. Each column "
                                "of logits is one position's scores over the vocabulary: log_softmax over dim 0.")
        if like(mean=False):
            raise ExerciseError(f"{what} sums the loss over the positions instead of averaging {where}: take "
                                "the mean, so that lr means the same whatever the length of the text.")
        if got > start:
            raise ExerciseError(f"The loss went *up* from {start:.3f} to {got:.3f} {where}: a step goes against "
                                "the gradient, W <- W - lr dL/dW (is a sign flipped, or the loss missing its minus?).")
        raise ExerciseError(f"After {steps} steps {where} your weights give loss {got:.4f}; plain gradient "
                            f"descent gives {want:.4f} (from {start:.4f}). Use the full batch every step, "
                            "the mean cross-entropy, and W <- W - lr * W.grad (no optimizer such as Adam).")
    return passed(f"Correct: plain gradient descent on the whole text, loss {start:.3f} -> {want:.3f} "
                  "in the last case.")
