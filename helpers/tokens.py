"""Word-level tokens: text -> token ids -> text.

The post feeds its model "a sequence of tokens t_1, ..., t_n", each "roughly one word". We use
exactly that: lower-cased words and punctuation marks, with a line break as a token of its own.
The vocabulary keeps the ``max_vocab - 1`` most frequent words of the training text; every other
word becomes ``<unk>`` (id 0). Real models use sub-word tokens (byte-pair encoding) so nothing is
ever unknown; whole words keep every token readable, which matters more here.

Written by hand rather than with Hugging Face ``tokenizers``: a word splitter is one regular
expression, and learners can read all of it.
"""

from __future__ import annotations

import json
import re
from array import array
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import torch

UNK = "<unk>"
# words (with inner apostrophes), numbers, a line break, or any single other visible character
TOKEN_PATTERN = re.compile(r"[a-z]+(?:'[a-z]+)*|[0-9]+|\n|[^\sa-z0-9]")
_NO_SPACE_BEFORE = set(",.;:?!)]'")
_NO_SPACE_AFTER = set("([")
_CHUNK = 1 << 16  # characters of a long text split into words at a time (see _word_chunks)


class EmptyTextError(ValueError):
    """Raised when a prompt or text has no tokens at all."""


class UnknownWordError(KeyError):
    """Raised by ``encode(..., unknown="error")`` for a word outside the vocabulary."""

    def __str__(self) -> str:  # KeyError would print the message with quotes around it
        return str(self.args[0])


def split_words(text: str) -> list[str]:
    """Split text into word-level token strings (lower-cased)."""
    return TOKEN_PATTERN.findall(text.lower())


def _word_chunks(text: str, size: int = _CHUNK) -> Iterator[list[str]]:
    """``split_words(text)`` in pieces of about ``size`` characters, each cut just after a line break.

    Joined, the pieces are exactly ``split_words(text)`` (no token spans a line break, and lower-casing
    never looks across one), but a whole corpus never exists as ~900,000 word strings at once: those
    would cost ~60 MB, and the few that a vocabulary keeps would pin the memory of all the rest.
    """
    start = 0
    while start < len(text):
        cut = text.find("\n", start + size)
        end = len(text) if cut < 0 else cut + 1
        yield split_words(text[start:end])
        start = end


@dataclass
class Tokenizer:
    """A fixed vocabulary: ``vocab[i]`` is the string of token id ``i``; id 0 is ``<unk>``."""

    vocab: list[str]
    index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.vocab or self.vocab[0] != UNK:
            raise ValueError(f"vocab[0] must be {UNK!r}")
        if len(set(self.vocab)) != len(self.vocab):
            raise ValueError("vocab has repeated entries")
        self.index = {w: i for i, w in enumerate(self.vocab)}

    @classmethod
    def train(cls, text: str, max_vocab: int = 2000) -> "Tokenizer":
        """Keep the ``max_vocab - 1`` most frequent tokens of ``text`` (ties broken alphabetically)."""
        if max_vocab < 2:
            raise ValueError(f"max_vocab must be at least 2 (<unk> and one word), got {max_vocab}")
        counts = Counter()
        for words in _word_chunks(text):
            counts.update(words)
        if not counts:
            raise EmptyTextError("Cannot build a vocabulary from empty text.")
        counts.pop(UNK, None)
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        return cls([UNK] + [w for w, _ in ranked[: max_vocab - 1]])

    @property
    def n_vocab(self) -> int:
        return len(self.vocab)

    def __len__(self) -> int:
        return len(self.vocab)

    def __contains__(self, word: str) -> bool:
        return word.lower() in self.index

    def __repr__(self) -> str:
        return f"Tokenizer(n_vocab={self.n_vocab:,}: {', '.join(map(repr, self.vocab[1:9]))}, ...)"

    def encode(self, text: str, unknown: str = "unk") -> torch.Tensor:
        """Token ids of ``text``, shape (n,), dtype long.

        unknown: "unk" -> words outside the vocabulary become ``<unk>`` (id 0);
                 "error" -> raise ``UnknownWordError`` naming the first such word.
        """
        if unknown not in ("unk", "error"):
            raise ValueError(f"unknown must be 'unk' or 'error', got {unknown!r}")
        ids = array("q")  # 8 bytes an id, not a Python int object each
        get = self.index.get
        for words in _word_chunks(text):
            if unknown == "error":
                for w in words:
                    if w not in self.index:
                        raise UnknownWordError(
                            f"{w!r} is not one of the {self.n_vocab:,} tokens in the vocabulary; "
                            f"with unknown='unk' it would be encoded as {UNK}."
                        )
            ids.extend([get(w, 0) for w in words])
        if not ids:
            return torch.zeros(0, dtype=torch.long)
        return torch.frombuffer(ids, dtype=torch.long)  # shares the array's memory: no copy

    def unknown_words(self, text: str) -> list[str]:
        """The words of ``text`` that are not in the vocabulary, in order of appearance."""
        return [w for w in split_words(text) if w not in self.index]

    def to_strings(self, ids) -> list[str]:
        """The token string of each id."""
        return [self.vocab[self._check_id(i)] for i in _as_list(ids)]

    def decode(self, ids) -> str:
        """Join token strings back into text (no space before punctuation, none around line breaks)."""
        out = ""
        for tok in self.to_strings(ids):
            if not out or out.endswith("\n") or tok == "\n" or tok in _NO_SPACE_BEFORE \
                    or out[-1] in _NO_SPACE_AFTER:
                out += tok
            else:
                out += " " + tok
        return out

    def one_hot(self, ids) -> torch.Tensor:
        """The post's input matrix t = [t_1, ..., t_n]: one-hot columns, shape (n_vocab, n)."""
        ids = torch.as_tensor(ids, dtype=torch.long)
        for i in _as_list(ids):
            self._check_id(i)
        return torch.nn.functional.one_hot(ids, self.n_vocab).T.float()

    def _check_id(self, i: int) -> int:
        if not 0 <= i < self.n_vocab:
            raise IndexError(f"token id {i} is outside the vocabulary (ids run from 0 to {self.n_vocab - 1})")
        return i

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps({"vocab": self.vocab}, ensure_ascii=False))

    @classmethod
    def load(cls, path: str | Path) -> "Tokenizer":
        return cls(json.loads(Path(path).read_text())["vocab"])


def _as_list(ids) -> list[int]:
    if isinstance(ids, torch.Tensor):
        return ids.reshape(-1).tolist()
    return [int(i) for i in ids]


@dataclass
class Prompt:
    """A learner's prompt made ready for a model with context length ``n_ctx``."""

    text: str  # what the learner typed, untouched
    ids: torch.Tensor  # (n,) token ids actually used (the last n_ctx tokens)
    tokens: list[str]  # their strings; unknown words show as <unk>
    unknown: list[str]  # words that were replaced by <unk>
    dropped: int  # tokens cut from the front because the prompt was longer than n_ctx
    separator: str = " "  # what goes between tokens when they are shown as text: " " for words, "" for GPT-2's
    # byte-level tokens, which carry their own spaces (" York")

    @property
    def shown(self) -> str:
        """The tokens actually used, as one string."""
        return self.separator.join(self.tokens)

    def notice(self) -> str:
        """A one-line note on anything the learner should know ('' when nothing happened)."""
        notes = []
        if self.dropped:
            notes.append(f"the prompt has {self.dropped + len(self.ids)} tokens but the context holds "
                         f"{len(self.ids)}: the first {self.dropped} were cut")
        if self.unknown:
            shown = ", ".join(map(repr, dict.fromkeys(self.unknown)))
            notes.append(f"not in the vocabulary, shown as {UNK}: {shown}")
        return "; ".join(notes)


def prepare_prompt(text: str, tokenizer: Tokenizer, n_ctx: int | None = None) -> Prompt:
    """Tokenize a prompt, keep its last ``n_ctx`` tokens, and record what was changed.

    Raises ``EmptyTextError`` with a clear message when the prompt has no tokens.
    """
    if not isinstance(text, str):
        raise TypeError(f"the prompt must be text (a str), got {type(text).__name__}")
    ids = tokenizer.encode(text)
    if len(ids) == 0:
        raise EmptyTextError("The prompt is empty: type at least one word for the model to continue.")
    dropped = 0
    if n_ctx is not None and len(ids) > n_ctx:
        dropped = len(ids) - n_ctx
        ids = ids[-n_ctx:]
    return Prompt(text=text, ids=ids, tokens=tokenizer.to_strings(ids), unknown=tokenizer.unknown_words(text),
                  dropped=dropped, separator=getattr(tokenizer, "separator", " "))


def random_windows(ids: torch.Tensor, n_ctx: int, batch_size: int, generator: torch.Generator) -> torch.Tensor:
    """A training batch: ``batch_size`` random windows of ``n_ctx + 1`` consecutive tokens.

    Shape (batch, n_ctx + 1): positions 0..n_ctx-1 are the input, 1..n_ctx the targets.
    """
    if len(ids) < n_ctx + 1:
        raise ValueError(f"the text has {len(ids)} tokens, fewer than n_ctx + 1 = {n_ctx + 1}")
    starts = torch.randint(0, len(ids) - n_ctx, (batch_size,), generator=generator)
    return ids[starts[:, None] + torch.arange(n_ctx + 1)]


def covering_windows(ids: torch.Tensor, n_ctx: int) -> list[torch.Tensor]:
    """Windows of at most ``n_ctx + 1`` tokens that predict every token of ``ids`` after the first
    exactly once (consecutive windows overlap by one token). For held-out evaluation."""
    return [ids[i:i + n_ctx + 1] for i in range(0, len(ids) - 1, n_ctx)]
