"""Exercises of notebook 11 (GPT-2 Small): the probability of a continuation of several tokens, the analogy
king - man + woman in an embedding matrix, and the logit lens by hand. Each check runs the learner's function on
small GPT-2-shaped models (biases, tanh GELU, tied W_U, LayerNorm) and embedding matrices it makes itself, so it
grades alike on every machine and whether or not GPT-2's weights are there, and names the usual mistake."""

from __future__ import annotations

import math
import numbers

import torch

from helpers.checks.base import ExerciseError, call, close, exercise, named, number_result, passed, tensor_result
from helpers.interp.embeddings import analogy as analogy_helper
from helpers.interp.embeddings import cosines
from helpers.interp.lens import lens_loss as lens_loss_helper
from helpers.lessons.lm import continuation_logprob as continuation_helper
from helpers.model.config import Config


def _gpt2_like(seed: int, n_layers: int) -> torch.nn.Module:
    """A tiny GPT-2 (every option GPT-2 has), its LayerNorms' gamma and beta random so that leaving one out shows."""
    from helpers.train import fresh_model

    cfg = Config(n_vocab=37, d_model=16, n_ctx=12, n_layers=n_layers, n_heads=4, d_mlp=32, activation="gelu_tanh",
                 layernorm=True, attn_biases=True, tied_unembed=True)
    model = fresh_model(cfg, seed=seed)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(("gamma", "beta")) or ".b_" in name:
                p.copy_(torch.randn(p.shape, generator=g) * 0.5 + (1.0 if name.endswith("gamma") else 0.0))
    return model.eval()


# --------------------------------------------------------------------------- 11.1 a continuation of several tokens
CONTINUATION_HELPERS = ("helpers.lessons.lm.continuation_logprob",)


def _continuation_cases():
    cases = []
    for seed, (n_layers, n, m) in enumerate(((1, 4, 3), (2, 6, 2), (2, 1, 4))):
        g = torch.Generator().manual_seed(100 + seed)
        ids = torch.randint(37, (n + m,), generator=g)
        cases.append((_gpt2_like(seed, n_layers), ids[:n], ids[n:]))
    return cases


def _scored(L: torch.Tensor, continuation: torch.Tensor, first_column: int) -> float:
    return float(sum(L[c, first_column + k] for k, c in enumerate(continuation.tolist())))


def _continuation_mistakes(model, prompt, cont):
    n, ids = len(prompt), torch.cat([prompt, cont])
    right = continuation_helper(model, prompt, cont)
    with torch.no_grad():
        logits = model(ids).double()              # one pass over prompt + continuation: every mistake reads it
        alone = model(cont).double()              # ... but the one that leaves the prompt out
    logp, along_positions = torch.log_softmax(logits, dim=0), torch.log_softmax(logits, dim=1)
    return [
        ("adds -ln p: that is the loss (the negative log-likelihood); the log-probability is its negative.",
         -right),
        ("returns the probability itself; the exercise asks for its natural log (sum the logs instead of multiplying "
         "probabilities: a long continuation's probability underflows).", math.exp(right)),
        ("averages the tokens' log-probabilities; the chain rule adds them (the mean is a loss per token, not the "
         "probability of the whole continuation).", right / len(cont)),
        ("uses log base 10 or 2; the series measures in nats: torch.log or log_softmax.",
         right / math.log(10)),
        ("uses log base 10 or 2; the series measures in nats: torch.log or log_softmax.", right / math.log(2)),
        ("scores only the continuation's first token; every token of it counts, each given the ones before it.",
         float(logp[cont[0], n - 1])),
        ("reads each token's probability from the column of that token itself; column i of the logits guesses "
         "token i + 1, so token n + k (counted from 0) is read from column n + k - 1.", _scored(logp, cont, n)),
        ("adds raw logits; turn each column into log-probabilities first (torch.log_softmax over the vocabulary, "
         "dim 0 for one text).", _scored(logits, cont, n - 1)),
        ("takes the softmax along the positions; a column (one position) holds the scores of every vocabulary "
         "token: log_softmax over dim 0 for one text.", _scored(along_positions, cont, n - 1)),
        ("scores the continuation without the prompt before it: the model must read the prompt, then the "
         "continuation.", _scored(torch.log_softmax(alone, dim=0), cont[1:], 0) if len(cont) > 1 else math.nan),
    ]


@exercise(answered_by=CONTINUATION_HELPERS)
def check_continuation_logprob(fn) -> bool:
    """fn(model, prompt (n,), continuation (m,)) -> ln p(continuation | prompt) in nats, one number."""
    what = named(fn, "continuation_logprob", "(model, prompt, continuation)")
    runs = []
    for model, prompt, cont in _continuation_cases():
        out = call(fn, model, prompt, cont, what=what, forbid=CONTINUATION_HELPERS,
                   hints={"out of bounds": "Column i of the logits guesses token i + 1: with n tokens fed in, the "
                                           "last column is n - 1."})
        runs.append((model, prompt, cont, number_result(out, what), continuation_helper(model, prompt, cont)))
    wrong = [r for r in runs if not math.isclose(r[3], r[4], rel_tol=1e-4, abs_tol=1e-4)]
    if not wrong:
        return passed(f"{what} matches helpers.lessons.lm.continuation_logprob on 3 small GPT-2-shaped models.")
    messages = {}
    for model, prompt, cont, out, _ in wrong:
        for message, value in _continuation_mistakes(model, prompt, cont):
            if math.isclose(out, value, rel_tol=1e-4, abs_tol=1e-4):
                messages[message] = messages.get(message, 0) + 1
    for message, count in messages.items():
        if count == len(wrong):
            raise ExerciseError(f"{what} {message}")
    model, prompt, cont, out, right = wrong[0]
    raise ExerciseError(f"{what} gives {out:.4f} for a prompt of {len(prompt)} tokens and a continuation of "
                        f"{len(cont)}, where ln p is {right:.4f}. Feed prompt + continuation (without its last token) "
                        "to the model once, take log_softmax over the vocabulary, and add the log-probability of "
                        "each continuation token from the column just before it.")


# --------------------------------------------------------------------------- 11.2 king - man + woman
ANALOGY_HELPERS = ("helpers.interp.embeddings.analogy", "helpers.interp.embeddings.analogy_vector",
                   "helpers.interp.embeddings.cosines",
                   "torch.nn.functional.cosine_similarity")


def _analogy_case(seed: int) -> tuple[torch.Tensor, int, int, int]:
    """W_E (d_model 12, n_vocab 60) whose columns have lengths from 0.2 to 5, so a dot product ranks differently."""
    g = torch.Generator().manual_seed(200 + seed)
    W_E = torch.randn(12, 60, generator=g)
    W_E = W_E / W_E.norm(dim=0) * torch.logspace(math.log10(0.2), math.log10(5), 60)[torch.randperm(60, generator=g)]
    a, b, c = torch.randperm(60, generator=g)[:3].tolist()
    W_E[:, a] = W_E[:, b] + W_E[:, c] * 0.9 + 0.3 * torch.randn(12, generator=g)  # so a stays near the target
    return W_E, a, b, c


def _ranked(scores: torch.Tensor, exclude: list[int], k: int) -> list[int]:
    s = scores.clone()
    s[exclude] = float("-inf")
    return s.topk(k).indices.tolist()


def _analogy_mistakes(W_E, a, b, c, k):
    target = W_E[:, a] - W_E[:, b] + W_E[:, c]
    cos = cosines(W_E, target)
    return [
        ("ranks by the dot product, not the cosine: long columns win whatever their direction. Divide by both "
         "lengths (torch.linalg.norm, or .norm(dim=0) for every column).", _ranked(target @ W_E, [a, b, c], k)),
        ("lists a, b or c themselves: they are nearest their own sum, so the analogy leaves them out.",
         _ranked(cos, [], k)),
        ("lists the farthest tokens first: sort by cosine from the largest down (topk, or argsort(descending=True)).",
         _ranked(-cos, [a, b, c], k)),
        ("computes b - a + c; king - man + woman is W_E[:, a] - W_E[:, b] + W_E[:, c] with a = king.",
         _ranked(cosines(W_E, W_E[:, b] - W_E[:, a] + W_E[:, c]), [a, b, c], k)),
        ("computes a + b - c; king - man + woman is W_E[:, a] - W_E[:, b] + W_E[:, c] with b = man.",
         _ranked(cosines(W_E, W_E[:, a] + W_E[:, b] - W_E[:, c]), [a, b, c], k)),
    ]


def _as_ids(out, what: str, k: int) -> list[int]:
    if type(out).__module__ == "numpy" and hasattr(out, "dtype"):   # a numpy array of ids: as good as a tensor
        out = torch.from_numpy(out)
    if isinstance(out, torch.Tensor):
        if out.is_floating_point():
            raise ExerciseError(f"{what} returned floats ({out.flatten()[:3].tolist()} ...): return the token ids "
                                "(topk's .indices), not the cosines.")
        out = out.flatten().tolist()
    if isinstance(out, (list, tuple)):
        out = [int(i) if isinstance(i, numbers.Integral) and not isinstance(i, bool) else i for i in out]
    if not isinstance(out, (list, tuple)) or not all(isinstance(i, int) and not isinstance(i, bool) for i in out):
        got = type(out).__name__ + (f" {str(out)[:60]}" if isinstance(out, (list, tuple)) else "")
        raise ExerciseError(f"{what} should return {k} token ids (a list of ints or an integer tensor), got {got}.")
    if len(out) != k:
        raise ExerciseError(f"{what} returned {len(out)} ids; it should return the k = {k} nearest, best first.")
    return list(out)


@exercise(answered_by=ANALOGY_HELPERS)
def check_analogy(fn) -> bool:
    """fn(W_E (d_model, n_vocab), a, b, c, k) -> the k ids nearest W_E[:, a] - W_E[:, b] + W_E[:, c] by cosine, best
    first, a, b and c left out."""
    what = named(fn, "analogy", "(W_E, a, b, c, k)")
    runs = []
    for seed in range(3):
        W_E, a, b, c = _analogy_case(seed)
        k = 5 - seed
        out = call(fn, W_E, a, b, c, k, what=what, forbid=ANALOGY_HELPERS,
                   hints={"size": "W_E is (d_model, n_vocab): token i's vector is the column W_E[:, i], not the row "
                                  "W_E[i]."})
        runs.append((W_E, a, b, c, k, _as_ids(out, what, k), [i for i, _ in analogy_helper(W_E, a, b, c, k)]))
    wrong = [r for r in runs if r[5] != r[6]]
    if not wrong:
        return passed(f"{what} finds the same tokens as helpers.interp.embeddings.analogy on 3 embedding matrices "
                      "whose columns have very different lengths.")
    for message, _ in _analogy_mistakes(*wrong[0][:5]):
        if all(dict(_analogy_mistakes(*r[:5]))[message] == r[5] for r in wrong):
            raise ExerciseError(f"{what} {message}")
    W_E, a, b, c, k, out, right = wrong[0]
    raise ExerciseError(f"{what} gives {out} on a test matrix where the {k} nearest are {right}. Compute "
                        "v = W_E[:, a] - W_E[:, b] + W_E[:, c], the cosine of v with every column, leave a, b and c "
                        "out, and take the k largest.")


# --------------------------------------------------------------------------- 11.3 the lens, scored
LENS_HELPERS = ("helpers.interp.lens.lens_loss",)
LENS_REFUSED = LENS_HELPERS + ("helpers.interp.lens.logit_lens", "helpers.interp.lens.lens_table",
                               "helpers.interp.loss.per_position_loss")


def _lens_cases():
    out = []
    for seed, (n_layers, batch, n) in enumerate(((1, 2, 6), (2, 3, 9))):
        g = torch.Generator().manual_seed(300 + seed)
        out.append((_gpt2_like(10 + seed, n_layers), torch.randint(37, (batch, n), generator=g)))
    return out


@torch.no_grad()
def _lens_mistakes(model, tokens):
    _, cache = model.run_with_cache(tokens)
    X = torch.stack([cache[k] for k in cache.resid_names], dim=1).double()    # (batch, states, d_model, n)
    ln = model.ln_final
    plain = (X - X.mean(-2, keepdim=True)) / torch.sqrt(X.var(-2, unbiased=False, keepdim=True) + ln.eps)
    W_U = model.unembed.W_U.double()
    normed = ln(X.float()).double()

    def scored(x, shift: int = 1, dim: int = -2, log=torch.log_softmax, reduce: str = "mean"):
        """-ln p of token j + shift read from column j (shift 1 is right), averaged (or summed over positions)."""
        logp = log(W_U @ x, dim=dim)                                            # (batch, states, n_vocab, n)
        n = x.shape[-1]
        target = tokens[:, shift:]                                               # (batch, n - shift)
        picked = -logp[..., :n - shift].gather(-2, target[:, None, None, :].expand(-1, logp.shape[1], 1, -1))
        return picked.squeeze(-2).mean(dim=(0, 2)) if reduce == "mean" else picked.squeeze(-2).sum(-1).mean(0)

    return [
        ("leaves out the final LayerNorm: the unembedding only ever reads LN(x), so the lens applies ln_final to each "
         "state first.", scored(X)),
        ("normalises the states but leaves out LayerNorm's gamma and beta: call model.ln_final(x) itself.",
         scored(plain)),
        ("scores column j against token j, the token it has already read; column j predicts token j + 1 (so the last "
         "column has nothing to score).", scored(normed, shift=0)),
        ("takes the softmax over the states or the positions; each column of W_U LN(x_i) holds the scores of every "
         "vocabulary token: log_softmax over the vocabulary's dimension.", scored(normed, dim=-1)),
        ("adds up the losses of a text's positions; the lens loss is a mean over positions and texts (nats per "
         "token), like the model's own loss.", scored(normed, reduce="sum")),
        ("uses the raw logits as log-probabilities: take log_softmax over the vocabulary first.",
         scored(normed, log=lambda z, dim: z)),
    ]


@exercise(answered_by=LENS_HELPERS)
def check_lens_loss(fn) -> bool:
    """fn(model, tokens (batch, n)) -> (number of states,): the mean cross-entropy of each state's lens prediction of
    the next token, over every position with a next token and every text."""
    what = named(fn, "lens_loss_by_hand", "(model, tokens)")
    runs = []
    for model, tokens in _lens_cases():
        right = lens_loss_helper(model, tokens)
        n_states = right.shape[0]
        out = call(fn, model, tokens, what=what, forbid=LENS_REFUSED,
                   hints={"LayerNorm": "model.ln_final normalises dimension -2 (d_model): give it states with d_model "
                                       "second to last, such as (batch, states, d_model, n)."})
        out = tensor_result(out, tuple(right.shape), what,
                            f"One number per state x0 ... x{n_states - 1} (the embedding and every layer's attention "
                            "and MLP output added), averaged over texts and positions: cache.resid_names lists them.")
        runs.append((model, tokens, out, right))
    wrong = [r for r in runs if not close(r[2], r[3], atol=1e-4, rtol=1e-4)]
    if not wrong:
        return passed(f"{what} matches helpers.interp.lens.lens_loss on 2 small GPT-2-shaped models; its last entry is "
                      "the model's own loss.")
    for k, (message, _) in enumerate(_lens_mistakes(*wrong[0][:2])):
        if all(close(out, _lens_mistakes(model, tokens)[k][1], atol=1e-3, rtol=1e-3) for model, tokens, out, _ in
               wrong):   # loosely: a LayerNorm written by hand may leave out eps
            raise ExerciseError(f"{what} {message}")
    model, tokens, out, right = wrong[0]
    bad = int((out - right).abs().argmax())
    raise ExerciseError(f"{what} gives {out[bad]:.4f} at state x{bad} on a test model, where the lens loss is "
                        f"{right[bad]:.4f}. For each state x_i and column j < n - 1: -log_softmax(W_U ln_final(x_i))"
                        "[t_(j+1), j], averaged over j and the texts.")
