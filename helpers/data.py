"""The series' standard data: one corpus, one tokenizer, the same token ids in every notebook.

Every notebook and checkpoint uses ``default_data()`` so their numbers are comparable: the same
held-out text, the same 2,000-token vocabulary (the training text's most frequent words + <unk>).
The result is memoised, so calling it again in a notebook costs nothing.

**The held-out set.** Every loss the series prints or compares (01's tables, 02's models, 05's and 08's
switched-off heads, 08's ladder, the losses the checkpoints recorded while they trained) is measured on one set:
``Data.eval_ids``, the first ``HELDOUT_PREDICTIONS`` next-token predictions of the held-out text. One set, so
that two losses in two notebooks can be compared digit by digit; that many, so that a model is scored in a
fraction of a second while a loss's standard error (from the token-to-token spread of
-ln p) stays under 0.02 nats; two models scored on the same predictions differ by far less noise than that.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import torch

from helpers.corpus import Corpus, load_corpus
from helpers.tokens import Tokenizer

DEFAULT_VOCAB = 2000
HELDOUT_PREDICTIONS = 20_000  # the held-out set: the next-token predictions every loss of the series averages


@dataclass(frozen=True)
class Data:
    corpus: Corpus
    tokenizer: Tokenizer
    train_ids: torch.Tensor  # (n_train,) token ids of corpus.train
    heldout_ids: torch.Tensor  # (n_heldout,) token ids of corpus.heldout

    @property
    def eval_ids(self) -> torch.Tensor:
        """(HELDOUT_PREDICTIONS + 1,) the held-out set: the first 20,001 held-out token ids, which hold
        HELDOUT_PREDICTIONS = 20,000 next-token predictions (the first token has nothing before it)."""
        return self.heldout_ids[: HELDOUT_PREDICTIONS + 1]

    @property
    def n_vocab(self) -> int:
        return self.tokenizer.n_vocab

    def __repr__(self) -> str:
        return (f"Data({self.corpus.name}: {len(self.train_ids):,} training tokens, "
                f"{len(self.heldout_ids):,} held-out tokens, n_vocab = {self.n_vocab:,})")


@functools.lru_cache(maxsize=4)
def default_data(path: str | None = None, max_vocab: int = DEFAULT_VOCAB) -> Data:
    """Load and tokenize a corpus (default: King James) with the fixed split; memoised."""
    corpus = load_corpus(Path(path) if path else None)
    tok = Tokenizer.train(corpus.train, max_vocab=max_vocab)
    return Data(corpus, tok, tok.encode(corpus.train), tok.encode(corpus.heldout))
