"""The folded answers to the exercises' open questions ("which k?", "which word?", "which head?") state what the
series' own data and shipped models give: each number in the answer is recomputed here, independently of the
exercise's solution, from the corpus or the checkpoint (nothing here trains, so the numbers are the same on every
machine up to the last printed digit's rounding, which the comparison allows)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import nbformat
import pytest
import torch

from helpers import ngrams
from helpers.data import default_data
from helpers.interp.ablation import ablated
from helpers.model import checkpoint
from helpers.softmax import softmax
from helpers.tokens import prepare_prompt

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"

VERSE = "in the beginning god created the heaven and the"


def answer(notebook: str, exercise: str) -> str:
    """The text of the folded 'Answer to the question' of an exercise's markdown cell."""
    nb = nbformat.read(NOTEBOOKS / f"{notebook}.ipynb", as_version=4)
    cell = next(c.source for c in nb.cells
                if c.cell_type == "markdown" and c.source.startswith(f"### Exercise {exercise} "))
    folded = re.search(r"<summary>Answer to the question[^<]*</summary>(.*?)</details>", cell, re.S)
    assert folded, f"exercise {exercise} has no folded answer to its question"
    return folded.group(1)


def stated(text: str, value: float, digits: int = 3) -> None:
    """`value` appears in the answer as printed with `digits` decimals (either neighbour of a rounding tie)."""
    step = 0.4 * 10 ** -digits
    shown = {f"{value:.{digits}f}", f"{value + step:.{digits}f}", f"{value - step:.{digits}f}"}
    assert any(s in text for s in shown), f"the answer does not state {value:.{digits + 2}f} ({sorted(shown)})"


@pytest.fixture(scope="module")
def data():
    return default_data()


def test_1_3_add_k(data):
    text = answer("01_bigrams", "1.3")
    C, n = ngrams.bigram_counts(data.train_ids, data.n_vocab), data.n_vocab
    loss = {k: ngrams.cross_entropy((C + k) / (C.sum(0, keepdim=True) + k * n), data.eval_ids)
            for k in (1, 0.1, 0.01, 0.001)}
    for k, v in loss.items():
        stated(text, v)
    mix = ngrams.cross_entropy(ngrams.bigram_probs(data.train_ids, n), data.eval_ids)
    stated(text, mix)
    assert min(loss, key=loss.get) == 0.01 and "**3.797**" in text
    # "a finer sweep from 0.001 to 0.1 bottoms out at about 3.795, near k = 0.014"
    ks = torch.logspace(-3, -1, 61).tolist()
    fine = [ngrams.cross_entropy((C + k) / (C.sum(0, keepdim=True) + k * n), data.eval_ids) for k in ks]
    best = min(range(len(ks)), key=fine.__getitem__)
    assert min(fine) > mix and round(min(fine), 3) == 3.795 and round(ks[best], 3) == 0.014


def test_3_2_hiding_a_word(data):
    text = answer("03_single_query_attention", "3.2")
    model, _ = checkpoint.load_named("attn1h1")
    tok, blk = data.tokenizer, model.blocks[0].attn
    prompt = prepare_prompt(VERSE, tok, model.cfg.n_ctx)
    earth = tok.vocab.index("earth")
    with torch.no_grad():
        x0 = model.run_with_cache(prompt.ids)[1]["x0"]
        W_Q, W_K, W_V, W_O, W_U = blk.W_Q[0], blk.W_K[0], blk.W_V[0], blk.W_O[0], model.unembed.W_U
        s = (W_Q @ x0[:, -1]) @ (W_K @ x0) / math.sqrt(W_Q.shape[0])

        def p_earth(hidden: int | None) -> float:
            s_h = s.clone()
            if hidden is not None:
                s_h[hidden] = -math.inf
            a = softmax(s_h, dim=0)
            return float(softmax(W_U @ (x0[:, -1] + W_O @ (W_V @ x0) @ a), dim=0)[earth])

        a, intact = softmax(s, dim=0), p_earth(None)
        hidden = {prompt.tokens[j]: p_earth(j) for j in range(len(prompt.tokens) - 1) if prompt.tokens[j] != "the"}
        hidden |= {f"the@{j}": p_earth(j) for j in range(len(prompt.tokens) - 1) if prompt.tokens[j] == "the"}
    stated(text, intact)
    stated(text, hidden["heaven"])
    assert min(hidden, key=hidden.get) == "heaven"
    others = [v for w, v in hidden.items() if w != "heaven"]
    stated(text, min(others))
    stated(text, max(others))
    assert all(v > intact for v in others)                                               # "a little higher"
    assert sorted(others)[-2:] == sorted([hidden["beginning"], hidden["created"]])     # "raises it most"
    weight = dict(zip(prompt.tokens, a.tolist()))
    stated(text, weight["heaven"])
    stated(text, weight["created"])
    assert sorted(weight.values())[-2] == weight["created"] and max(weight.values()) == weight["heaven"]
    assert max(others) in (hidden["created"], hidden["beginning"])                       # "matters least"
    assert hidden["created"] >= max(others) - 1e-3


def test_5_2_head_off(data):
    text = answer("05_multiple_heads", "5.2")
    model, _ = checkpoint.load_named("attn1")
    ids = prepare_prompt(VERSE, data.tokenizer, model.cfg.n_ctx).ids
    earth = data.tokenizer.index["earth"]
    with torch.no_grad():
        intact = float(model.next_token_probs(ids)[earth])
        without = []
        for h in range(model.cfg.n_heads):
            with ablated(model, heads=[(0, h)]):
                without.append(float(model.next_token_probs(ids)[earth]))
    stated(text, intact)
    for p in without:
        stated(text, p)
    assert min(range(4), key=lambda h: without[h]) == 3
    assert without[0] - without[3] < 0.01 and without[2] > 0.15 and without[1] > intact    # the answer's comparisons
