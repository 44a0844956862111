"""The post's opening: a language model gives a probability to every next token, and so to any continuation.

"A Gentle Introduction to Transformers" starts from what a model outputs: after "The Empire State Building is in
New" a good model puts nearly all its probability on "York"; after "The state of New" it spreads it over "York",
"Jersey", "Mexico", ... A model predicts one *token* at a time, and with a byte-level BPE (GPT-2's) a word can be
several tokens (" York" is one in GPT-2's vocabulary, four in notebook 11's stand-in's). The chain rule gives the
probability of several tokens from one-token predictions:

    ln p(c_1 ... c_m | prompt) = sum_k ln p(c_k | prompt, c_1 ... c_(k-1))

and a causal model computes every factor in one forward pass over prompt + continuation: the column of the logits
at position i is the guess for token i + 1 (notebook 02).

    next_tokens(model, ids, vocab, k)                    the k likeliest next tokens, with their p
    continuation_logprob(model, prompt, continuation)    ln p(continuation | prompt), in nats
"""

from __future__ import annotations

import torch

from helpers.model.transformer import Transformer
from helpers.ngrams import top_k


def _ids(model: Transformer, ids, what: str) -> torch.Tensor:
    t = torch.as_tensor(ids)
    if t.dim() != 1:
        raise ValueError(f"{what} must be one text's token ids, shape (n,); got shape {tuple(t.shape)}")
    if t.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"{what} must be token ids (integers), got dtype {t.dtype}")
    return t.long()


@torch.no_grad()
def next_tokens(model: Transformer, ids, vocab, k: int = 5) -> list[tuple[str, float]]:
    """The ``k`` likeliest next tokens after ``ids`` (n,), as (token text, p), most likely first."""
    ids = _ids(model, ids, "the prompt")
    if len(ids) == 0:
        raise ValueError("the prompt is empty: the model predicts the token after a text, so it needs one token")
    return top_k(model.next_token_probs(ids), k, vocab)


@torch.no_grad()
def continuation_logprob(model: Transformer, prompt, continuation) -> float:
    """ln p(continuation | prompt), in nats: the log-probabilities of the continuation's tokens, each given the
    prompt and the continuation's tokens before it, summed. prompt (n,) and continuation (m,) are token ids."""
    prompt, continuation = _ids(model, prompt, "the prompt"), _ids(model, continuation, "the continuation")
    if len(prompt) == 0:
        raise ValueError("the prompt is empty: the first token of the continuation needs a token to be predicted "
                         "after")
    if len(continuation) == 0:
        raise ValueError("the continuation is empty: give at least one token to score")
    ids = torch.cat([prompt, continuation])
    if len(ids) - 1 > model.cfg.n_ctx:
        raise ValueError(f"the prompt and the continuation are {len(ids)} tokens; the model reads at most "
                         f"n_ctx = {model.cfg.n_ctx} (plus the last, which it only predicts)")
    logp = torch.log_softmax(model(ids[:-1]).double(), dim=0)   # (n_vocab, n + m - 1): column i guesses token i + 1
    n = len(prompt)
    return float(sum(logp[c, n - 1 + k] for k, c in enumerate(continuation.tolist())))
