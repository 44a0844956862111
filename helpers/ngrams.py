"""Bigram and n-gram models — the post's "Warmup" and "Bigrams" sections.

A bigram model is a lookup table: for each token a, the probability of each token b coming next.
We store it the way the post stores everything, in columns: ``P[:, a]`` is the distribution of the
token after ``a`` (each column sums to 1). That is also the layout of ``softmax(W_U W_E)`` in the
zero-layer Transformer of notebook 02, so the two can be compared entry by entry.

Longer contexts (n-grams) are looked up directly in the token stream, which is exact and fast
enough for a widget (a few ms per lookup over ~850k tokens).
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass

import numpy as np
import torch

from helpers.softmax import with_temperature


def _ids(ids) -> torch.Tensor:
    ids = torch.as_tensor(ids, dtype=torch.long)
    if ids.dim() != 1:
        raise ValueError(f"expected a 1-d sequence of token ids, got shape {tuple(ids.shape)}")
    return ids


def bigram_counts(ids, n_vocab: int) -> torch.Tensor:
    """C[b, a] = how often token b directly follows token a. Shape (n_vocab, n_vocab)."""
    ids = _ids(ids)
    prev, nxt = ids[:-1], ids[1:]
    # counted straight into float32 (exact below 2**24 per pair): bincount's int64 table would be twice as big
    flat = torch.zeros(n_vocab * n_vocab).index_add_(0, nxt * n_vocab + prev, torch.ones(len(nxt)))
    return flat.reshape(n_vocab, n_vocab)


def normalize_columns(C: torch.Tensor) -> torch.Tensor:
    """Counts -> probabilities: divide each column by its sum. A column with no counts (a token
    never followed by anything) stays all zero rather than dividing by zero."""
    totals = C.sum(dim=0, keepdim=True)
    return C / totals.clamp(min=1e-12)


def unigram_probs(ids, n_vocab: int, alpha: float = 1.0) -> torch.Tensor:
    """p[b] = share of tokens equal to b, with ``alpha`` added to every count so no token has
    probability 0 (add-alpha smoothing). Shape (n_vocab,)."""
    counts = torch.bincount(_ids(ids), minlength=n_vocab).float() + alpha
    return counts / counts.sum()


def bigram_probs(ids, n_vocab: int, lam: float = 0.9) -> torch.Tensor:
    """Smoothed bigram table, shape (n_vocab, n_vocab), columns summing to 1.

    P[:, a] = lam * (counts after a, normalised) + (1 - lam) * unigram. The raw table gives
    probability 0 to every pair never seen in training, so one unseen pair in held-out text makes
    the cross-entropy infinite; mixing in a little of the unigram fixes that. A column with no
    counts at all falls back to the unigram entirely.
    """
    if not 0 <= lam <= 1:
        raise ValueError(f"lam must be in [0, 1], got {lam}")
    C = bigram_counts(ids, n_vocab)
    uni = unigram_probs(ids, n_vocab)[:, None]
    seen = C.sum(dim=0) > 0
    P = normalize_columns(C).mul_(lam).add_((1 - lam) * uni)  # in place: one (n_vocab, n_vocab) table, not four
    P[:, ~seen] = uni
    return P


def cross_entropy(P_next: torch.Tensor, ids) -> float:
    """Mean -log P(next token | previous token) over a token stream, in nats per token.

    P_next: (n_vocab, n_vocab) column table (bigram), or (n_vocab,) (unigram: ignores the past).
    """
    ids = _ids(ids)
    if len(ids) < 2:
        raise ValueError("need at least two tokens to score a prediction")
    if P_next.dim() == 1:
        p = P_next[ids[1:]]
    else:
        p = P_next[ids[1:], ids[:-1]]
    return float(-torch.log(p.double()).mean())


def uniform_cross_entropy(n_vocab: int) -> float:
    """Cross-entropy of guessing uniformly: log(n_vocab) nats per token, whatever the text."""
    return math.log(n_vocab)


class _PositionIndex:
    """Where each token occurs in one token stream: ``order[starts[t]:starts[t + 1]]`` are the positions
    of token t. Built once per stream (an argsort, ~0.1 s for 850k tokens) so that a lookup only checks
    the occurrences of the context's rarest token instead of scanning the whole stream: the n-gram
    explorer of notebook 01 redraws in a few ms instead of ~40 (its sample makes 20 lookups)."""

    def __init__(self, ids: torch.Tensor):
        self.order = torch.argsort(ids, stable=True)
        self.counts = torch.bincount(ids)  # (max id + 1,): occurrences of each token
        self.starts = torch.cat([torch.zeros(1, dtype=torch.long), self.counts.cumsum(0)])
        self.recent: dict[tuple, torch.Tensor] = {}  # context -> follower counts (a sample repeats contexts)

    def positions(self, token: int) -> torch.Tensor:
        if token >= len(self.counts):
            return self.order[:0]
        return self.order[self.starts[token]:self.starts[token + 1]]


_INDEXES: dict[int, tuple[weakref.ref, _PositionIndex]] = {}


def _index(ids: torch.Tensor) -> _PositionIndex:
    """The position index of ``ids``, kept while the tensor lives (keyed by identity, not content)."""
    hit = _INDEXES.get(id(ids))
    if hit is not None and hit[0]() is ids:
        return hit[1]
    index = _PositionIndex(ids)
    _INDEXES[id(ids)] = (weakref.ref(ids, lambda _, key=id(ids): _INDEXES.pop(key, None)), index)
    return index


def next_token_counts(ids, context, n_vocab: int) -> torch.Tensor:
    """How often each token follows ``context`` (a list of ids) in ``ids``. Shape (n_vocab,).

    An empty context gives the plain token counts (the unigram).
    """
    ids, context = _ids(ids), _ids(context)
    k = len(context)
    if len(ids) <= k:
        return torch.zeros(n_vocab)
    index = _index(ids)
    if k == 0:
        return torch.nn.functional.pad(index.counts, (0, max(0, n_vocab - len(index.counts)))).float()
    key = (n_vocab, *context.tolist())
    if key in index.recent:
        return index.recent[key].clone()
    # start positions i with ids[i : i+k] == context, found from the occurrences of the rarest context token
    frequency = [int(index.counts[t]) if t < len(index.counts) else 0 for t in context.tolist()]
    j = min(range(k), key=frequency.__getitem__)
    start = index.positions(int(context[j])) - j
    start = start[(start >= 0) & (start < len(ids) - k)]  # the follower ids[i + k] must exist
    for m in range(k):
        start = start[ids[start + m] == context[m]]
    followers = ids[start + k]
    counts = torch.bincount(followers, minlength=n_vocab).float()
    if len(index.recent) >= 512:
        index.recent.clear()
    index.recent[key] = counts
    return counts.clone()


@dataclass
class NextToken:
    """The n-gram model's answer for one context."""

    probs: torch.Tensor  # (n_vocab,) next-token distribution (after temperature)
    order: int  # n actually used: context of order-1 tokens (smaller than asked if backed off)
    seen: int  # how often that context occurs in the training text


def next_token_probs(ids, prompt_ids, n: int, n_vocab: int, temperature: float = 1.0) -> NextToken:
    """n-gram next-token distribution after the last n-1 tokens of ``prompt_ids``.

    If that context never occurs in ``ids`` the model backs off to a shorter one (n-1, n-2, ...,
    down to the unigram), and ``order`` says which it used.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1 (1 = unigram, 2 = bigram), got {n}")
    prompt_ids = _ids(prompt_ids)
    for order in range(min(n, len(prompt_ids) + 1), 0, -1):
        context = prompt_ids[len(prompt_ids) - (order - 1):] if order > 1 else prompt_ids[:0]
        counts = next_token_counts(ids, context, n_vocab)
        total = int(counts.sum())
        if total > 0:
            return NextToken(with_temperature(counts / total, temperature), order, total)
    raise ValueError("the training text is empty")


def top_k(probs: torch.Tensor, k: int, vocab: list[str]) -> list[tuple[str, float]]:
    """The k most likely tokens with their probabilities, most likely first."""
    k = min(k, int((probs > 0).sum()))
    p, i = torch.topk(probs, k)
    return [(vocab[j], float(q)) for j, q in zip(i.tolist(), p.tolist())]


def sample(ids, prompt_ids, n: int, n_vocab: int, steps: int, temperature: float = 1.0,
           seed: int = 0) -> torch.Tensor:
    """Continue ``prompt_ids`` for ``steps`` tokens, drawing each from the n-gram model.

    Returns the prompt followed by the new tokens, shape (len(prompt) + steps,).
    """
    g = torch.Generator().manual_seed(seed)
    out = _ids(prompt_ids).tolist()
    ids = _ids(ids)
    for _ in range(steps):
        p = next_token_probs(ids, torch.tensor(out), n, n_vocab, temperature).probs
        out.append(int(torch.multinomial(p, 1, generator=g)))
    return torch.tensor(out)


def ngram_table_stats(train_ids, heldout_ids, n_max: int, n_vocab: int) -> list[dict]:
    """For n = 1..n_max: how many distinct n-grams the training text has, how many a full table
    would need (n_vocab ** n), and the share of held-out n-grams never seen in training.

    n-grams are numbered exactly by repeated ranking: the code of an n-gram is the rank of the pair
    (code of its first n-1 tokens, last token), so codes stay small however large n gets.
    """
    train, held = _ids(train_ids).numpy(), _ids(heldout_ids).numpy()
    both = np.concatenate([train, held])
    is_train = np.r_[np.ones(len(train), bool), np.zeros(len(held), bool)]
    codes = both.astype(np.int64)  # code of the n-gram starting at each position
    rows = []
    for n in range(1, n_max + 1):
        if n > 1:  # extend every (n-1)-gram by one token, then renumber densely
            pair = codes[:-1] * n_vocab + both[n - 1:]
            _, codes = np.unique(pair, return_inverse=True)
        # an n-gram starting at i lies in one part if i and i+n-1 are both train or both held-out
        start_train = is_train[: len(codes)]
        end_train = is_train[n - 1:]
        tr = codes[start_train & end_train]
        he = codes[~start_train & ~end_train]
        seen = np.unique(tr)
        unseen = float(np.mean(~np.isin(he, seen))) if len(he) else float("nan")
        rows.append({"n": n, "distinct_in_train": int(len(seen)), "full_table": n_vocab ** n,
                     "heldout_unseen": unseen})
    return rows


KL_COLUMNS = 64  # columns per block in kl_divergence


def kl_divergence(P: torch.Tensor, Q: torch.Tensor, weights: torch.Tensor | None = None) -> float:
    """How far a model's table Q is from a reference table P, in nats: the KL divergence of each
    column, sum_b P[b, a] log(P[b, a] / Q[b, a]), averaged over columns a with ``weights``
    (default: uniform). With the tokens' frequencies as weights this is exactly how much worse Q's
    cross-entropy on the training text is than P's. Terms with P = 0 count 0.

    P, Q: (n_vocab, n_vocab) column tables; weights: (n_vocab,).
    """
    if P.shape != Q.shape:
        raise ValueError(f"tables differ in shape: P {tuple(P.shape)} vs Q {tuple(Q.shape)}")
    if weights is None:
        weights = torch.full((P.shape[1],), 1 / P.shape[1])
    # a block of columns at a time: the float64 copies of whole (n_vocab, n_vocab) tables would take ~200 MB,
    # and each of the ~7 temporaries of a block is n_vocab x KL_COLUMNS doubles (1 MB for 2,000 words)
    per_column = torch.empty(P.shape[1], dtype=torch.float64)
    for a in range(0, P.shape[1], KL_COLUMNS):
        p, q = P[:, a:a + KL_COLUMNS].double(), Q[:, a:a + KL_COLUMNS].double()
        terms = torch.where(p > 0, p * (p.clamp(min=1e-300).log() - q.log()), torch.zeros((), dtype=p.dtype))
        per_column[a:a + KL_COLUMNS] = terms.sum(0)
    return float((per_column * weights.double()).sum())
