"""GPT-2's byte-level BPE (Hugging Face ``tokenizers``) with the series' word tokenizer's interface, and a BPE of the
same kind trained here for the stand-in."""

from __future__ import annotations

from pathlib import Path

import torch

from helpers.gpt2.errors import GPT2FileError

FETCH = "bash run.sh gpt2"


class BPETokenizer:
    """GPT-2's byte-level BPE, with the series' word tokenizer's interface (``helpers.tokens.Tokenizer``):
    ``vocab[i]`` is token i as text (" York", with its leading space), ``encode``, ``to_strings``, ``decode``,
    ``unknown_words`` (always none: every byte has a token). Case-sensitive; id 0 is "!", not ``<unk>``."""

    separator = ""  # tokens carry their own spaces: shown together, " York" after "New" reads "New York"

    def __init__(self, tok):
        self._tok = tok
        self.n_vocab = tok.get_vocab_size()
        # " York"; partial UTF-8 bytes show as "�"; special tokens ("<|endoftext|>") as themselves
        self.vocab = [tok.decode([i], skip_special_tokens=False) for i in range(self.n_vocab)]
        self.index: dict[str, int] = {}  # text -> id, as the word tokenizer's (the first id of a repeated "�")
        for i, text in enumerate(self.vocab):
            self.index.setdefault(text, i)

    def __len__(self) -> int:
        return self.n_vocab

    def ordinary_ids(self) -> torch.Tensor:
        """The ids of ordinary text tokens (n_ordinary,): every id but the special ones ("<|endoftext|>", a
        stand-in's "<unused i>"), which never occur inside a text. What random test sequences are drawn from."""
        special = set(self._tok.get_added_tokens_decoder())
        return torch.tensor([i for i in range(self.n_vocab) if i not in special], dtype=torch.long)

    def __contains__(self, word: str) -> bool:
        return len(self._tok.encode(word, add_special_tokens=False).ids) == 1

    def __repr__(self) -> str:
        return f"BPETokenizer(n_vocab={self.n_vocab:,}, byte-level BPE)"

    def encode(self, text: str, unknown: str = "unk") -> torch.Tensor:
        """Token ids (n,), dtype long. ``unknown`` is accepted for the series' interface; nothing is unknown."""
        if not isinstance(text, str):
            raise TypeError(f"the text must be a str, got {type(text).__name__}")
        return torch.tensor(self._tok.encode(text, add_special_tokens=False).ids, dtype=torch.long)

    def unknown_words(self, text: str) -> list[str]:
        return []

    def to_strings(self, ids) -> list[str]:
        out = []
        for i in torch.as_tensor(ids).reshape(-1).tolist():
            if not 0 <= i < self.n_vocab:
                raise IndexError(f"token id {i} is outside the vocabulary (ids run from 0 to {self.n_vocab - 1})")
            out.append(self.vocab[i])
        return out

    def decode(self, ids) -> str:
        return self._tok.decode(torch.as_tensor(ids).reshape(-1).tolist(), skip_special_tokens=False)


def tokenizer(path: str | Path) -> BPETokenizer:
    """GPT-2's tokenizer from a Hub ``tokenizer.json``."""
    from tokenizers import Tokenizer as HFTokenizer

    try:
        return BPETokenizer(HFTokenizer.from_file(str(path)))
    except Exception as e:  # tokenizers raises a plain Exception for a damaged file
        raise GPT2FileError(f"{path} is not a usable tokenizer file ({e}): delete it and run `{FETCH}` again") from None


def byte_level_bpe(text: str, vocab_size: int):
    """A byte-level BPE like GPT-2's (``tokenizers``: ByteLevel pre-tokenizer and decoder, all 256 bytes in the
    alphabet) trained on ``text`` to at most ``vocab_size`` tokens; ``.save(path)`` writes a Hub tokenizer.json."""
    from tokenizers import Tokenizer as HFTokenizer
    from tokenizers import decoders, models, pre_tokenizers, trainers

    tok = HFTokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator([text], trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False,
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return tok

