"""Notebook 11's exercise checks and the helpers they compare with (helpers.lessons.lm, helpers.interp.embeddings): a
right
answer passes, each usual wrong answer gets its own message, and the helpers refuse bad input with a sentence."""

from __future__ import annotations

import math

import pytest
import torch

from helpers import checks
from helpers.checks import ExerciseError
from helpers.interp.embeddings import analogy, analogy_vector, cosines
from helpers.lessons.lm import continuation_logprob, next_tokens
from helpers.model import names
from helpers.model.config import Config
from helpers.train import fresh_model


def _model(seed=0, n_layers=2):
    cfg = Config(n_vocab=29, d_model=16, n_ctx=10, n_layers=n_layers, n_heads=4, d_mlp=32, activation="gelu_tanh",
                 layernorm=True, attn_biases=True, tied_unembed=True)
    return fresh_model(cfg, seed).eval()


# --------------------------------------------------------------------------- helpers.lessons.lm
def test_continuation_is_the_chain_rule_of_next_token_probabilities():
    model = _model()
    prompt, cont = torch.tensor([3, 1, 4]), torch.tensor([1, 5, 9])
    by_steps, ids = 0.0, prompt
    for c in cont.tolist():                       # one token at a time: p(c_k | everything before it)
        by_steps += math.log(float(model.next_token_probs(ids)[c]))
        ids = torch.cat([ids, torch.tensor([c])])
    assert continuation_logprob(model, prompt, cont) == pytest.approx(by_steps, abs=1e-5)
    one = continuation_logprob(model, prompt, cont[:1])
    assert one == pytest.approx(math.log(float(model.next_token_probs(prompt)[1])), abs=1e-6)
    assert [w for w, _ in next_tokens(model, prompt, [f"t{i}" for i in range(29)], k=3)] == \
        [f"t{int(i)}" for i in model.next_token_probs(prompt).topk(3).indices]


def _t(*ids, dtype=torch.long):
    return torch.tensor(ids, dtype=dtype)


@pytest.mark.parametrize("prompt, cont, message", [
    (_t(), _t(1), "the prompt is empty"), (_t(1), _t(), "the continuation is empty"),
    (_t(*[1] * 8), _t(*[2] * 4), "reads at most n_ctx = 10"), (_t(1, 2)[None], _t(1), "shape \\(n,\\)"),
    (_t(1, dtype=torch.float), _t(2), "token ids \\(integers\\)")])
def test_continuation_refuses_bad_input_in_words(prompt, cont, message):
    with pytest.raises((ValueError, TypeError), match=message):
        continuation_logprob(_model(), prompt, cont)


def test_a_full_context_still_scores():
    model = _model()   # n_ctx 10: 6 + 5 tokens, the last only predicted
    assert math.isfinite(continuation_logprob(model, torch.arange(6), torch.arange(5)))


# --------------------------------------------------------------------------- helpers.interp.embeddings
def test_analogy_finds_a_planted_direction_by_cosine_and_leaves_the_inputs_out():
    g = torch.Generator().manual_seed(0)
    W = torch.randn(8, 30, generator=g)
    W[:, 7] = (W[:, 1] - W[:, 2] + W[:, 3]) * 0.01        # the answer, but short: a dot product would miss it
    W[:, 8] = W[:, 1] * 50                                # long, a dot product's favourite
    best = analogy(W, 1, 2, 3, k=3)
    assert best[0][0] == 7 and best[0][1] == pytest.approx(1.0, abs=1e-5)
    assert not {1, 2, 3} & {i for i, _ in best}
    assert analogy(W, 1, 2, 3, k=1, among=torch.tensor([8, 9]))[0][0] in (8, 9)
    assert cosines(W, W[:, 5])[5] == pytest.approx(1.0, abs=1e-6)
    assert torch.equal(analogy_vector(W, 1, 2, 3), W[:, 1] - W[:, 2] + W[:, 3])
    with pytest.raises(ValueError, match="outside the vocabulary"):
        analogy(W, 1, 2, 30)
    with pytest.raises(ValueError, match="must be \\(d_model, n_vocab\\)"):
        cosines(W, torch.zeros(30))


# --------------------------------------------------------------------------- 11.1
def right_continuation(model, prompt, continuation):
    ids = torch.cat([prompt, continuation])
    logp = torch.log_softmax(model(ids[:-1]), dim=0).detach()
    n = len(prompt)
    return sum(float(logp[c, n - 1 + k]) for k, c in enumerate(continuation.tolist()))


def _logp(model, ids, dim=0):
    return torch.log_softmax(model(ids), dim=dim)


WRONG_CONTINUATIONS = {
    "the loss": (lambda m, p, c: -right_continuation(m, p, c), "negative log-likelihood"),
    "a probability": (lambda m, p, c: math.exp(right_continuation(m, p, c)), "returns the probability itself"),
    "a mean": (lambda m, p, c: right_continuation(m, p, c) / len(c), "averages the tokens"),
    "log 10": (lambda m, p, c: right_continuation(m, p, c) / math.log(10), "log base 10 or 2"),
    "log 2": (lambda m, p, c: right_continuation(m, p, c) / math.log(2), "log base 10 or 2"),
    "first token": (lambda m, p, c: float(_logp(m, p)[c[0], -1]), "only the continuation's first token"),
    "own column": (lambda m, p, c: sum(float(_logp(m, torch.cat([p, c]))[t, len(p) + k]) for k, t in
                                       enumerate(c.tolist())), "column of that token itself"),
    "logits": (lambda m, p, c: sum(float(m(torch.cat([p, c]))[t, len(p) - 1 + k]) for k, t in enumerate(c.tolist())),
               "adds raw logits"),
    "softmax over positions": (lambda m, p, c: sum(float(_logp(m, torch.cat([p, c]), dim=1)[t, len(p) - 1 + k])
                                                   for k, t in enumerate(c.tolist())), "along the positions"),
    "no prompt": (lambda m, p, c: sum(float(_logp(m, c)[t, k]) for k, t in enumerate(c[1:].tolist())),
                  "without the prompt"),
    "something else": (lambda m, p, c: right_continuation(m, p, c) + 0.5, "Feed prompt \\+ continuation"),
    "past the end": (lambda m, p, c: float(m(torch.cat([p, c]))[0, len(p) + len(c)]), "the last column is n - 1"),
}


def test_11_1_a_right_answer_passes():
    assert checks.check_continuation_logprob(right_continuation)


@pytest.mark.parametrize("mistake", WRONG_CONTINUATIONS)
def test_11_1_each_mistake_is_named(mistake):
    fn, message = WRONG_CONTINUATIONS[mistake]
    with pytest.raises(ExerciseError, match=message):
        checks.check_continuation_logprob(fn)


def test_11_1_the_helper_is_refused():
    with pytest.raises(ExerciseError, match="does the whole exercise"):
        checks.check_continuation_logprob(continuation_logprob)


# --------------------------------------------------------------------------- 11.2
def right_analogy(W_E, a, b, c, k):
    v = W_E[:, a] - W_E[:, b] + W_E[:, c]
    cos = (v @ W_E) / (W_E.norm(dim=0) * v.norm())
    cos[[a, b, c]] = -2.0
    return cos.topk(k).indices


def _with(score, exclude=True, descending=True):
    def fn(W_E, a, b, c, k):
        s = score(W_E, a, b, c)
        if exclude:
            s[[a, b, c]] = -math.inf if descending else math.inf
        return s.topk(k, largest=descending).indices
    return fn


def _cos(v, W_E):
    return (v @ W_E) / (W_E.norm(dim=0) * v.norm())


WRONG_ANALOGIES = {
    "dot product": (_with(lambda W, a, b, c: (W[:, a] - W[:, b] + W[:, c]) @ W), "dot product, not the cosine"),
    "inputs kept": (_with(lambda W, a, b, c: _cos(W[:, a] - W[:, b] + W[:, c], W), exclude=False),
                    "lists a, b or c themselves"),
    "ascending": (_with(lambda W, a, b, c: _cos(W[:, a] - W[:, b] + W[:, c], W), descending=False),
                  "farthest tokens first"),
    "b - a + c": (_with(lambda W, a, b, c: _cos(W[:, b] - W[:, a] + W[:, c], W)), "computes b - a \\+ c"),
    "a + b - c": (_with(lambda W, a, b, c: _cos(W[:, a] + W[:, b] - W[:, c], W)), "computes a \\+ b - c"),
    "rows": (lambda W, a, b, c, k: ((W[a] - W[b] + W[c]) @ W).topk(k).indices, "the column W_E\\[:, i\\]"),
    "cosines returned": (lambda W, a, b, c, k: right_analogy(W, a, b, c, k).float(), "not the cosines"),
    "too few": (lambda W, a, b, c, k: right_analogy(W, a, b, c, k)[:1], "it should return the k ="),
    "a dict": (lambda W, a, b, c, k: {"ids": right_analogy(W, a, b, c, k)}, "should return"),
    "random": (lambda W, a, b, c, k: torch.arange(k) + 40, "the cosine of v with every column"),
}


def test_11_2_a_right_answer_passes_as_a_tensor_or_a_list():
    assert checks.check_analogy(right_analogy)
    assert checks.check_analogy(lambda *args: right_analogy(*args).tolist())


@pytest.mark.parametrize("mistake", WRONG_ANALOGIES)
def test_11_2_each_mistake_is_named(mistake):
    fn, message = WRONG_ANALOGIES[mistake]
    with pytest.raises(ExerciseError, match=message):
        checks.check_analogy(fn)


def test_11_2_the_helpers_are_refused():
    with pytest.raises(ExerciseError, match="does the whole exercise"):
        checks.check_analogy(lambda W, a, b, c, k: [i for i, _ in analogy(W, a, b, c, k)])

    def from_the_vector_helper(W_E, a, b, c, k):          # notebook 11 takes the sum from analogy_vector, below 11.2
        v = analogy_vector(W_E, a, b, c)
        cos = v @ W_E / (W_E.norm(dim=0) * v.norm())
        cos[[a, b, c]] = -math.inf
        return cos.topk(k).indices
    with pytest.raises(ExerciseError, match="calls helpers.interp.embeddings.analogy_vector"):
        checks.check_analogy(from_the_vector_helper)


# --------------------------------------------------------------------------- 11.3
def right_lens_loss(model, tokens):
    _, cache = model.run_with_cache(tokens)
    X = torch.stack([cache[k] for k in cache.resid_names], dim=1)               # (batch, states, d_model, n)
    logp = torch.log_softmax(model.unembed.W_U @ model.ln_final(X), dim=-2)      # (batch, states, n_vocab, n)
    n = tokens.shape[-1]
    out = torch.stack([-logp[:, :, tokens[:, j + 1], j].diagonal(dim1=0, dim2=2) for j in range(n - 1)])
    return out.mean(dim=(0, 2))                                                  # (n - 1, states, batch) -> (states,)


def _X(m, t):
    _, cache = m.run_with_cache(t)
    return torch.stack([cache[k] for k in cache.resid_names], dim=1)


def _nll(logp, t, shift=1, reduce="mean"):
    n = t.shape[-1]
    picked = -logp[..., :n - shift].gather(-2, t[:, None, None, shift:].expand(-1, logp.shape[1], 1, -1)).squeeze(-2)
    return picked.mean(dim=(0, 2)) if reduce == "mean" else picked.sum(-1).mean(0)


def _plain(X):
    return (X - X.mean(-2, keepdim=True)) / X.std(-2, unbiased=False, keepdim=True)


WRONG_LENSES = {
    "no LayerNorm": (lambda m, t: _nll(torch.log_softmax(m.unembed.W_U @ _X(m, t), -2), t), "leaves out the final"),
    "no gamma, beta": (lambda m, t: _nll(torch.log_softmax(m.unembed.W_U @ _plain(_X(m, t)), -2), t),
                       "leaves out LayerNorm's gamma and beta"),
    "own column": (lambda m, t: _nll(torch.log_softmax(m.unembed.W_U @ m.ln_final(_X(m, t)), -2), t, shift=0),
                   "scores column j against token j"),
    "softmax over positions": (lambda m, t: _nll(torch.log_softmax(m.unembed.W_U @ m.ln_final(_X(m, t)), -1), t),
                               "log_softmax over the vocabulary's dimension"),
    "summed": (lambda m, t: _nll(torch.log_softmax(m.unembed.W_U @ m.ln_final(_X(m, t)), -2), t, reduce="sum"),
               "adds up the losses"),
    "logits": (lambda m, t: _nll(m.unembed.W_U @ m.ln_final(_X(m, t)), t), "uses the raw logits"),
    "per position": (lambda m, t: right_lens_loss(m, t)[:, None].expand(-1, 3), "One number per state x0"),
    "states as rows": (lambda m, t: m.ln_final(_X(m, t).mT).mean(), "give it states with d_model"),
    "something else": (lambda m, t: right_lens_loss(m, t) + 0.1, "averaged over j and the texts"),
    "through the helper": (lambda m, t: torch.stack([-torch.log(__import__("helpers.interp.lens", fromlist=["x"])
                                                                .logit_lens(m, t[:, :j + 1])[torch.arange(len(t)), :,
                                                                                            t[:, j + 1]])
                                                     for j in range(t.shape[-1] - 1)]).mean((0, 1)),
                           "does the whole exercise"),
}


def test_11_3_a_right_answer_passes():
    assert checks.check_lens_loss(right_lens_loss)


@pytest.mark.parametrize("mistake", WRONG_LENSES)
def test_11_3_each_mistake_is_named(mistake):
    fn, message = WRONG_LENSES[mistake]
    with pytest.raises(ExerciseError, match=message):
        checks.check_lens_loss(fn)


def test_11_3_the_helper_is_refused_and_the_helper_is_the_lens_read_at_every_position():
    from helpers.interp.lens import lens_loss, logit_lens
    from helpers.interp.loss import per_position_loss

    with pytest.raises(ExerciseError, match="does the whole exercise"):
        checks.check_lens_loss(lens_loss)
    model, t = _model(), torch.tensor([[1, 2, 3, 4, 5], [5, 4, 3, 2, 1]])
    by_lens = torch.stack([-torch.log(logit_lens(model, t[:, :j + 1])[torch.arange(2), :, t[:, j + 1]])
                           for j in range(4)]).mean((0, 1))
    assert torch.allclose(lens_loss(model, t).float(), by_lens, atol=1e-5)
    assert float(lens_loss(model, t)[-1]) == pytest.approx(float(per_position_loss(model, t).mean()), abs=1e-5)
    with pytest.raises(ValueError, match="at least 2 tokens"):
        lens_loss(model, torch.tensor([3]))


def test_the_lens_states_are_the_caches_residual_names():
    _, cache = _model().run_with_cache(torch.tensor([1, 2, 3]))
    assert cache.resid_names == [names.resid(i) for i in range(5)]
