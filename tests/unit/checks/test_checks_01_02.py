"""The new exercise checks of notebooks 01-02 (held-out cross-entropy, add-k smoothing, the logits'
gradient, a zero-layer training loop, the stable softmax's refusals) accept right answers, explain the
usual mistakes in the post's terms, and turn bad input into one sentence."""

import time

import pytest
import torch

from helpers import checks, ngrams
from helpers.checks import ExerciseError
from helpers.softmax import softmax
from helpers.train import Config, fit_to_counts, fresh_model


def todo(*args):
    raise NotImplementedError()


# --- 1.2 held-out cross-entropy ------------------------------------------------------------------------

def heldout_ce(P, ids):
    return -torch.log(P[ids[1:], ids[:-1]]).mean()


def test_heldout_cross_entropy_right_answers():
    assert checks.check_heldout_cross_entropy(heldout_ce)
    assert checks.check_heldout_cross_entropy(lambda P, ids: float(heldout_ce(P, ids)))  # a float is fine too


@pytest.mark.parametrize("wrong, message", [
    (lambda P, ids: torch.log(P[ids[1:], ids[:-1]]).mean(), r"\*minus\*"),
    (lambda P, ids: -torch.log(P[ids[:-1], ids[1:]]).mean(), "wrong way round"),
    (lambda P, ids: -torch.log(P[ids[1:], ids[:-1]]).sum(), r"\*sum\*"),
    (lambda P, ids: -torch.log(P[ids[1:], ids[:-1]]).sum() / len(ids), "len\\(ids\\) - 1 predictions"),
    (lambda P, ids: -torch.log2(P[ids[1:], ids[:-1]]).mean(), "nats"),
    (lambda P, ids: torch.exp(heldout_ce(P, ids)), "perplexity"),
    (lambda P, ids: -torch.log(P[ids[1:], ids[:-1]].mean()), "log of the mean probability"),
    (lambda P, ids: -torch.log(P[ids[1:], ids[:-1]]), "one number"),
    (lambda P, ids: 1.0, r"gave 1.0000 for a 3-token table and a text of 5 tokens"),
    (lambda P, ids: "3.1", "should be a number"),
    (lambda P, ids: None, "should be a number"),
    (lambda P, ids: float("nan"), "nan"),
    (lambda P, ids: P[len(P)], "IndexError"),
    (lambda P, ids: ngrams.cross_entropy(P, ids), "ngrams.cross_entropy, which does the whole exercise"),
    (todo, "not written yet"),
])
def test_heldout_cross_entropy_mistakes_are_explained(wrong, message):
    with pytest.raises(ExerciseError, match=message):
        checks.check_heldout_cross_entropy(wrong)


def test_heldout_cross_entropy_in_place_change_is_refused():
    def clobber(P, ids):
        P.log_()
        return -P[ids[1:], ids[:-1]].mean()
    with pytest.raises(ExerciseError, match="changed `P`, a tensor it was given, in place"):
        checks.check_heldout_cross_entropy(clobber)


# --- 1.3 add-k smoothing --------------------------------------------------------------------------------

def add_k_loss(train_ids, heldout_ids, n_vocab, k):
    C = ngrams.bigram_counts(train_ids, n_vocab)
    P = (C + k) / (C.sum(dim=0, keepdim=True) + k * n_vocab)
    return ngrams.cross_entropy(P, heldout_ids)


def add_k_with(table):
    def fn(train_ids, heldout_ids, n_vocab, k):
        return ngrams.cross_entropy(table(ngrams.bigram_counts(train_ids, n_vocab), n_vocab, k), heldout_ids)
    return fn


def test_add_k_right_answer():
    assert checks.check_add_k_loss(add_k_loss)


@pytest.mark.parametrize("wrong, message", [
    (add_k_with(lambda C, V, k: (C + 1) / (C.sum(0, keepdim=True) + V)), "whatever k is"),
    (add_k_with(lambda C, V, k: (C + k) / (C.sum(1, keepdim=True) + k * V)), r"\*rows\*"),
    (add_k_with(lambda C, V, k: ((C + k) / (C.sum(0, keepdim=True) + k * V)).T), "wrong way round"),
    (add_k_with(lambda C, V, k: (C + k) / C.sum(0, keepdim=True).clamp(min=1e-12)), "not to their totals"),
    (add_k_with(lambda C, V, k: (C + k) / (C.sum(0, keepdim=True) + k)), "k \\* n_vocab"),
    (lambda tr, he, V, k: add_k_loss(he, he, V, k), "held-out text"),
    (lambda tr, he, V, k: add_k_loss(tr, he, int(max(tr.max(), he.max())) + 1, k), "vocabulary size from the texts"),
    (lambda tr, he, V, k: add_k_loss(tr, he, V, 0.01), "k = 0.01 whatever k is"),
    (add_k_with(lambda C, V, k: (C + k) / (C.sum(0, keepdim=True) + k * int((C.sum(1) > 0).sum()))),
     "vocabulary size from the texts"),
    (lambda tr, he, V, k: add_k_loss(tr, he, V, k) * (len(he) - 1), "total"),
    (lambda tr, he, V, k: add_k_loss(tr, he, V, 0.0), "inf"),
    (lambda tr, he, V, k: add_k_loss(tr, he, V, k) + 0.5, "expected"),
    (todo, "not written yet"),
])
def test_add_k_mistakes_are_explained(wrong, message):
    with pytest.raises(ExerciseError, match=message):
        checks.check_add_k_loss(wrong)


def test_add_k_changing_the_tokens_is_refused():
    def clobber(train_ids, heldout_ids, n_vocab, k):
        train_ids[0] = 0 if int(train_ids[0]) else 1
        return add_k_loss(train_ids, heldout_ids, n_vocab, k)
    with pytest.raises(ExerciseError, match="changed `train_ids`, a tensor it was given, in place"):
        checks.check_add_k_loss(clobber)


# --- 2.1 the stable softmax refuses one-call answers ------------------------------------------------------

def stable_softmax(x):
    e = torch.exp(x - x.max(dim=0, keepdim=True).values)
    return e / e.sum(dim=0, keepdim=True)


def test_softmax_by_hand_passes():
    assert checks.check_softmax(stable_softmax)


@pytest.mark.parametrize("one_call, name", [
    (lambda x: softmax(x, dim=0), "helpers.softmax.softmax"),
    (lambda x: torch.softmax(x, dim=0), "torch.softmax"),
    (lambda x: torch.nn.functional.softmax(x, dim=0), "torch.nn.functional.softmax"),
    (lambda x: torch.log_softmax(x, 0).exp(), "torch.log_softmax"),
    (lambda x: x.log_softmax(0).exp(), "torch.Tensor.log_softmax"),
])
def test_softmax_one_call_answers_are_refused(one_call, name):
    with pytest.raises(ExerciseError, match=f"calls {name}, which does the whole exercise"):
        checks.check_softmax(one_call)


def descend(W_E, W_U, ids, steps, lr, t):
    """Plain gradient descent of a zero-layer model on one-hot inputs t (n_vocab, N): exercise 2.3's loop, with
    the weights and inputs as a wrong answer prepared them."""
    for _ in range(steps):
        loss = -torch.log_softmax(W_U @ W_E @ t, 0)[ids[1:], torch.arange(len(ids) - 1)].mean()
        W_E.grad = W_U.grad = None
        loss.backward()
        with torch.no_grad():
            W_E -= lr * W_E.grad
            W_U -= lr * W_U.grad
    return W_E.detach(), W_U.detach()


def test_answers_that_change_their_input_in_place_are_refused():
    def in_place_softmax(x):
        x -= x.max(dim=0, keepdim=True).values           # right numbers, but the caller's x changes
        e = torch.exp(x)
        return e / e.sum(dim=0, keepdim=True)

    with pytest.raises(ExerciseError, match="changed `x`, a tensor it was given, in place"):
        checks.check_softmax(in_place_softmax)

    def no_clone(W_E, W_U, ids, steps, lr):                # trains the caller's own weights
        return descend(W_E.requires_grad_(), W_U.requires_grad_(), ids, steps, lr,
                       torch.nn.functional.one_hot(ids[:-1], W_U.shape[0]).T.float())

    with pytest.raises(ExerciseError, match="changed `W_E`, a tensor it was given, in place"):
        checks.check_train_zero_layer(no_clone)


def test_softmax_one_maximum_for_the_whole_matrix_is_explained():
    def global_max(x):
        e = torch.exp(x - x.max())
        return e / e.sum(dim=0, keepdim=True)
    with pytest.raises(ExerciseError, match="column's own"):
        checks.check_softmax(global_max)


# --- 2.2 the gradient of the loss with respect to the logits ----------------------------------------------

def logit_grad(logits, targets):
    n = logits.shape[1]
    p = stable_softmax(logits)
    one_hot = torch.zeros_like(p)
    one_hot[targets, torch.arange(n)] = 1.0
    return (p - one_hot) / n


def with_grad(change):
    def fn(logits, targets):
        n = logits.shape[1]
        one_hot = torch.zeros_like(logits)
        one_hot[targets, torch.arange(n)] = 1.0
        return change(stable_softmax(logits), one_hot, n, logits)
    return fn


def test_logit_grad_right_answer():
    assert checks.check_logit_grad(logit_grad)


def by_autograd(logits, targets):
    x = logits.clone().requires_grad_()
    loss = torch.nn.functional.cross_entropy(x.T, targets)
    loss.backward()
    return x.grad


@pytest.mark.parametrize("wrong, message", [
    (with_grad(lambda p, oh, n, x: (oh - p) / n), "wrong sign"),
    (with_grad(lambda p, oh, n, x: p - oh), "n times too large"),
    (with_grad(lambda p, oh, n, x: p / n), "without subtracting the one-hot"),
    (with_grad(lambda p, oh, n, x: (p - oh) / x.shape[0]), "divides by n_vocab"),
    (with_grad(lambda p, oh, n, x: p - oh / n), "only one of the two terms by n"),
    (with_grad(lambda p, oh, n, x: p / n - oh), "only one of the two terms by n"),
    (with_grad(lambda p, oh, n, x: -oh / p / n), "with respect to the probabilities"),
    (with_grad(lambda p, oh, n, x: (torch.softmax(x, 1) - oh) / n), r"\*row\*"),
    (lambda x, t: (stable_softmax(x) - torch.nn.functional.one_hot(t, x.shape[0])) / x.shape[1], "in rows"),
    (with_grad(lambda p, oh, n, x: (p - oh) / n + 0.01), "differs from autograd"),
    (with_grad(lambda p, oh, n, x: (p - oh)[:, :1]), "shape"),
    (lambda x, t: (stable_softmax(x) - torch.nn.functional.one_hot(t).T) / x.shape[1], "num_classes=logits.shape"),
    (with_grad(lambda p, oh, n, x: (p - oh).long()), "dtype"),
    (lambda x, t: (torch.exp(x) / torch.exp(x).sum(0) - torch.nn.functional.one_hot(t, x.shape[0]).T) / x.shape[1],
     r"exp\(200\) overflows to infinity"),                         # a naive softmax: right until the logits are big
    (lambda x, t: logit_grad(x, t) if x.abs().max() < 150 else torch.zeros_like(x), "wrong for the logits \\[200"),
    (by_autograd, "torch.autograd.backward, which does the whole exercise"),
    (todo, "not written yet"),
])
def test_logit_grad_mistakes_are_explained(wrong, message):
    with pytest.raises(ExerciseError, match=message):
        checks.check_logit_grad(wrong)


# --- 2.3 the training loop of a zero-layer model ----------------------------------------------------------

def train_zero_layer(W_E, W_U, ids, steps, lr, *, mistake=""):
    W_E, W_U = W_E.clone().requires_grad_(), W_U.clone().requires_grad_()
    n_vocab = W_U.shape[0]
    prev, nxt = (ids[1:], ids[:-1]) if mistake == "backwards" else (ids[:-1], ids[1:])
    if mistake == "itself":
        prev = nxt = ids
    t = torch.nn.functional.one_hot(prev, n_vocab).T.float()
    for _ in range(steps):
        logits = W_U @ W_E @ t
        logp = torch.log_softmax(logits, dim=1 if mistake == "rows" else 0)
        losses = -logp[nxt, torch.arange(len(nxt))]
        loss = losses.sum() if mistake == "sum" else losses.mean()
        if mistake == "ascent":
            loss = -loss
        if mistake != "accumulate":
            W_E.grad = W_U.grad = None
        loss.backward()
        with torch.no_grad():
            if mistake == "frozen":
                continue
            W_E -= lr * W_E.grad
            W_U -= lr * W_U.grad
    if mistake == "swapped":
        return W_U.detach(), W_E.detach()
    if mistake == "one":
        return W_E.detach()
    if mistake == "none":
        return None
    if mistake == "nan":
        return W_E.detach() * float("nan"), W_U.detach()
    return W_E.detach(), W_U.detach()


def test_train_zero_layer_right_answer():
    assert checks.check_train_zero_layer(train_zero_layer)


def test_train_zero_layer_one_hot_without_num_classes_is_explained():
    def no_num_classes(W_E, W_U, ids, steps, lr):
        return descend(W_E.clone().requires_grad_(), W_U.clone().requires_grad_(), ids, steps, lr,
                       torch.nn.functional.one_hot(ids[:-1]).T.float())    # only max(ids) + 1 classes

    with pytest.raises(ExerciseError, match="give it num_classes"):
        checks.check_train_zero_layer(no_num_classes)


def test_train_zero_layer_with_an_sgd_optimizer_passes():
    def with_sgd(W_E, W_U, ids, steps, lr):
        W_E, W_U = W_E.clone().requires_grad_(), W_U.clone().requires_grad_()
        opt = torch.optim.SGD([W_E, W_U], lr=lr)
        for _ in range(steps):
            logits = W_U @ W_E[:, ids[:-1]]
            loss = torch.nn.functional.cross_entropy(logits.T, ids[1:])
            opt.zero_grad()
            loss.backward()
            opt.step()
        return W_E, W_U  # still requiring grad: the check copes
    assert checks.check_train_zero_layer(with_sgd)


@pytest.mark.parametrize("mistake, message", [
    ("backwards", r"the one \*after\* it"),
    ("itself", r"from \*itself\*"),
    ("ascent", r"went \*up\*"),
    ("accumulate", "never clears the gradients"),
    ("rows", r"\*rows\*"),
    ("sum", "instead of averaging"),
    ("frozen", "unchanged"),
    ("swapped", "swap W_E and W_U"),
    ("one", "two tensors"),
    ("none", r"returned None: return the trained pair"),
    ("nan", "Training diverged"),
])
def test_train_zero_layer_mistakes_are_explained(mistake, message):
    with pytest.raises(ExerciseError, match=message):
        checks.check_train_zero_layer(lambda *a: train_zero_layer(*a, mistake=mistake))


def test_train_zero_layer_with_adam_gets_the_general_message():
    def with_adam(W_E, W_U, ids, steps, lr):
        W_E, W_U = W_E.clone().requires_grad_(), W_U.clone().requires_grad_()
        opt = torch.optim.Adam([W_E, W_U], lr=0.05)
        for _ in range(steps):
            loss = torch.nn.functional.cross_entropy((W_U @ W_E[:, ids[:-1]]).T, ids[1:])
            opt.zero_grad()
            loss.backward()
            opt.step()
        return W_E, W_U
    with pytest.raises(ExerciseError, match="plain gradient descent gives"):
        checks.check_train_zero_layer(with_adam)


def test_train_zero_layer_refuses_the_helper():
    def helper(W_E, W_U, ids, steps, lr):
        model = fresh_model(Config(n_vocab=W_U.shape[0], d_model=W_E.shape[0], n_ctx=1, positional=False))
        fit_to_counts(model, ngrams.bigram_counts(ids, W_U.shape[0]), steps, progress=False)
        return model.embed.W_E, model.unembed.W_U
    with pytest.raises(ExerciseError, match="fit_to_counts, which does the whole exercise"):
        checks.check_train_zero_layer(helper)


def test_train_zero_layer_not_written_and_too_slow():
    with pytest.raises(ExerciseError, match="not written yet"):
        checks.check_train_zero_layer(todo)

    def slow(*args):
        time.sleep(30)
    import helpers.checks.base as base
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(base.call.__kwdefaults__, "limit", 0.5)
        with pytest.raises(ExerciseError, match="was stopped"):
            checks.check_train_zero_layer(slow)


def test_train_zero_layer_check_passes_a_right_answer():  # its time is the bench's to print
    assert checks.check_train_zero_layer(train_zero_layer)
