"""KL divergence between tables, fitting W_U W_E to counts, and the GloVe analogies."""

import math

import pytest
import torch

from helpers import ngrams
from helpers.lessons.glove import load_glove
from helpers.model import Config
from helpers.softmax import softmax
from helpers.train import fit_to_counts, fresh_model


def test_kl_by_hand():
    P = torch.tensor([[0.5, 1.0], [0.5, 0.0]])
    Q = torch.tensor([[0.25, 0.5], [0.75, 0.5]])
    expected_col0 = 0.5 * math.log(0.5 / 0.25) + 0.5 * math.log(0.5 / 0.75)
    expected_col1 = 1.0 * math.log(1.0 / 0.5)  # the P = 0 term counts 0
    assert ngrams.kl_divergence(P, Q, torch.tensor([0.5, 0.5])) == pytest.approx((expected_col0 + expected_col1) / 2)
    assert ngrams.kl_divergence(P, P) == 0
    with pytest.raises(ValueError, match="differ in shape"):
        ngrams.kl_divergence(P, Q[:1])


def test_fit_to_counts_learns_a_full_rank_table_and_respects_the_rank_limit():
    g = torch.Generator().manual_seed(0)
    C = torch.randint(0, 20, (6, 6), generator=g).float()
    P = ngrams.normalize_columns(C)
    freq = C.sum(0) / C.sum()
    kls = {}
    for d in (1, 6):
        m = fresh_model(Config(n_vocab=6, d_model=d, n_ctx=1, positional=False), seed=0)
        h = fit_to_counts(m, C, steps=400, progress=False)
        assert h.train_loss[-1] < h.train_loss[0]
        with torch.no_grad():
            W = m.unembed.W_U @ m.embed.W_E
        assert torch.linalg.matrix_rank(W) <= d
        kls[d] = ngrams.kl_divergence(P, softmax(W, 0), freq)
    assert kls[6] < 0.01 < kls[1]


def test_fit_to_counts_refuses_other_models():
    with pytest.raises(ValueError, match="zero-layer model without W_pos"):
        fit_to_counts(fresh_model(Config(n_vocab=4, d_model=2)), torch.ones(4, 4), steps=1, progress=False)
    with pytest.raises(ValueError, match="n_vocab is 4"):
        fit_to_counts(fresh_model(Config(n_vocab=4, d_model=2, positional=False)), torch.ones(5, 5), steps=1,
                      progress=False)


@pytest.mark.slow  # starts a Python (GloVe's words are read in one)
@pytest.mark.each_python
def test_king_minus_man_plus_woman():
    g = load_glove()
    assert g.vectors.shape == (400_000, 50)
    assert g.analogy("man", "king", "woman", k=1, exclude_inputs=False)[0][0] == "king"
    assert g.analogy("man", "king", "woman", k=1)[0][0] == "queen"
    with pytest.raises(KeyError, match="not one of GloVe's 400,000 words"):
        g.vector("zzqqxx")


@pytest.mark.slow  # starts a Python
@pytest.mark.each_python
def test_glove_words_are_read_in_a_child_process_without_pyarrow_here():
    """pyarrow (~60 MB once imported) reads GloVe's word index in a short-lived child process (memory); the
    words are the same as read here, and a kernel that loads GloVe never imports pyarrow itself."""
    import subprocess
    import sys

    import numpy as np

    from helpers.lessons import glove

    path = glove.glove_dir() / "glove_6B_index.parquet"
    words, (blob, starts) = glove._read_words(path), glove._read_words_here(path)
    assert words._blob == blob and np.array_equal(words._starts, starts) and len(words) == 400_000
    code = ("import sys; from helpers.lessons.glove import load_glove; g = load_glove(); "
            "assert g.words[0] == 'the' and g.words.find('queen') is not None; print('pyarrow' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
