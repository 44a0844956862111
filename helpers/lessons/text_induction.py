"""Notebook 09, section 10: induction heads grown from real text (the King James text, the series' words).

Sections 1-9 of notebook 09 train on random characters arranged so that copying pays. Large models grow the same
heads from ordinary text ("In-context Learning and Induction Heads", Olsson et al. 2022). At the series' scale, on
two CPU cores, what grows them from the King James text was measured (the notebook tells the story):

- A 2-layer attention-only model of the text alone (the series' 2,000-word tokens, n_ctx 64) grows a previous-token
  head, but in its *last* layer, where no later head can read it, and no induction head (``text_plain``).
- The same model, trained on the same text with half of each batch's rows holding one passage written twice
  (``text_batch``), and those rows scored on the repeat's words only (``mixed_loss``), grows a previous-token head in
  layer 0 and an induction head in layer 1, after a sudden drop of its loss on repeated passages (``text_induction``).

Tried before and measured (none formed within the budget; why, below): characters or words with n_ctx 128 and 4 heads
of d_head 16 (up to 30,000 steps, alone or with repeated passages). Notebook 09's own copying task at n_ctx 128 with
4 heads of d_head 16 formed no previous-token head in 1,500 steps either, where at n_ctx 32 with 2 heads of d_head 32
it forms one in about 200: a previous-token head has to map each position's W_pos column onto its predecessor's, a
shift over n_ctx positions, and a head's W_QK has rank d_head at most. With 2 heads of d_head 64 at n_ctx 64 it can.

The two models come with the series, trained ahead (about seven minutes each on two CPU cores: their metadata's
``train_seconds``, which the notebook prints); their metadata also holds the curve recorded while they trained
(``TextRun.rows``).
"""

# (Maintainers: they are made by ``tools/train_models.py text_induction text_plain``; a learner reads this docstring
# with help(), so that name stays out of it.)

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from helpers.data import default_data
from helpers.lessons.induction import repeat_loss
from helpers.interp.scores import head_scores
from helpers.model.config import Config
from helpers.model.transformer import Transformer
from helpers.optim import AdamW
from helpers.softmax import softmax
from helpers.tokens import random_windows

N_CTX = 64  # words
PASSAGE = N_CTX // 2  # the probe's passages: 32 held-out words, written twice


def config() -> Config:
    """2 layers of attention only, 2 heads of d_head 64 (d_model 128), n_ctx 64, the series' 2,000 words; W_pos
    starts at a spread of 0.5 (as notebook 09's model: heads can attend by position from the start)."""
    return Config(n_vocab=default_data().n_vocab, d_model=128, n_ctx=N_CTX, n_layers=2, n_heads=2, pos_init_std=0.5)


def text_batch(ids: torch.Tensor, batch: int, n: int, g: torch.Generator,
               repeat_share: float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
    """(batch, n) windows of ``ids`` and a (batch, n) mask. In the first round(repeat_share * batch) rows one passage
    of P words (P from 8 to n // 2, at a random place) is written again right after itself, over what followed it;
    the mask marks the repeat's words that copying predicts (its 2nd word on; its first follows a word that did not
    come before it). The other rows are the text as it is, every word marked."""
    rows = random_windows(ids, n - 1, batch, g)  # (batch, n)
    mask = torch.ones(batch, n, dtype=torch.bool)
    for r in range(round(repeat_share * batch)):
        P = int(torch.randint(8, n // 2 + 1, (1,), generator=g))
        start = int(torch.randint(0, n - 2 * P + 1, (1,), generator=g))
        rows[r, start + P:start + 2 * P] = rows[r, start:start + P].clone()
        mask[r] = False
        mask[r, start + P + 1:start + 2 * P] = True
    return rows, mask


def mixed_loss(model: Transformer, tokens: torch.Tensor, mask: torch.Tensor, repeated: int) -> torch.Tensor:
    """The training loss of ``text_batch``'s (tokens, mask): the mean of two means (nats), the loss of the marked
    words of the first ``repeated`` rows (the repeats) and the loss of every word of the other rows (plain text)."""
    logits = model(tokens[:, :-1])  # (batch, n_vocab, n - 1): column i predicts word i + 1
    per_word = F.cross_entropy(logits, tokens[:, 1:], reduction="none")  # (batch, n - 1)
    if repeated == 0:
        return per_word.mean()
    copied = per_word[:repeated][mask[:repeated, 1:]].mean()
    if repeated == len(tokens):
        return copied
    return (copied + per_word[repeated:].mean()) / 2


def repeated_passages(count: int = 32, half: int = PASSAGE, seed: int = 0) -> torch.Tensor:
    """(count, 2 * half) held-out passages written twice, [P][P]: the probe of induction on real text."""
    heldout = default_data().heldout_ids
    g = torch.Generator().manual_seed(seed)
    starts = torch.randint(0, len(heldout) - half, (count,), generator=g)
    first = heldout[starts[:, None] + torch.arange(half)]
    return torch.cat([first, first], dim=1)


def rounded(x, digits: int = 3):
    """A figure, or nested lists of them, rounded for a checkpoint's metadata."""
    return [rounded(v, digits) for v in x] if isinstance(x, list) else round(x, digits)


@dataclass
class TextRun:
    """What ``train_text`` recorded every ``every`` steps: the curve of the phase change."""

    step: list[int] = field(default_factory=list)
    heldout: list[float] = field(default_factory=list)  # mean loss on held-out windows of plain text
    loss_first: list[float] = field(default_factory=list)  # on the first copy of repeated held-out passages
    loss_repeat: list[float] = field(default_factory=list)  # ... on the second copy
    induction: list[list[float]] = field(default_factory=list)  # [layer][head] induction scores on the passages
    previous: list[list[float]] = field(default_factory=list)  # [layer][head] previous-token scores on them
    seconds: float = 0.0

    def rows(self) -> list[dict]:
        """The curve as JSON-ready rows, one per recorded step (3 decimals)."""
        r = rounded
        return [dict(step=s, heldout=r(h), loss_first=r(a), loss_repeat=r(b), induction=r(i), previous=r(p))
                for s, h, a, b, i, p in zip(self.step, self.heldout, self.loss_first, self.loss_repeat,
                                            self.induction, self.previous)]


@torch.no_grad()
def heldout_loss(model: Transformer, windows: int = 64, seed: int = 7) -> float:
    """Mean next-word loss on ``windows`` held-out windows of n_ctx + 1 words (fixed by ``seed``)."""
    g = torch.Generator().manual_seed(seed)
    return float(model.loss(random_windows(default_data().heldout_ids, model.cfg.n_ctx, windows, g)))


def probe(model: Transformer) -> dict:
    """The figures of the curve, now: held-out loss, loss on both copies of ``repeated_passages``, head scores."""
    passages = repeated_passages()
    first, repeat = repeat_loss(model, passages)
    scores = head_scores(model, passages, which=("previous", "induction"))
    return dict(heldout=heldout_loss(model), loss_first=first, loss_repeat=repeat,
                induction=scores["induction"].tolist(), previous=scores["previous"].tolist())


def train_text(model: Transformer, steps: int, *, batch_size: int = 8, lr: float = 3e-3, repeat_share: float = 0.0,
               seed: int = 0, every: int = 250) -> TextRun:
    """AdamW for ``steps`` steps on ``text_batch`` windows of the training text (``mixed_loss``), and every
    ``every`` steps the figures of ``probe``."""
    train_ids = default_data().train_ids
    n = model.cfg.n_ctx
    g = torch.Generator().manual_seed(seed)
    opt = AdamW(model.parameters(), lr=lr)
    run = TextRun()
    start = time.perf_counter()
    repeated = round(repeat_share * batch_size)
    model.train()
    for step in range(1, steps + 1):
        loss = mixed_loss(model, *text_batch(train_ids, batch_size, n + 1, g, repeat_share), repeated)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % every == 0 or step == steps:
            model.eval()
            figures = probe(model)
            run.step.append(step)
            for name in ("heldout", "loss_first", "loss_repeat", "induction", "previous"):
                getattr(run, name).append(figures[name])
            model.train()
    model.eval()
    run.seconds = time.perf_counter() - start
    return run


def written_twice(text: str) -> tuple[torch.Tensor, list[str]]:
    """A passage you type, written twice as the model reads it: ((2 n,) word ids, the n words as tokens).

    Words outside the 2,000-word vocabulary become <unk> (the list shows which); a passage of fewer than 2 tokens, or
    of more than n_ctx / 2 = 32 (words and punctuation marks: two copies must fit in the context), is refused with a
    message."""
    tokenizer = default_data().tokenizer
    ids = tokenizer.encode(text)
    if len(ids) < 2:
        raise ValueError(f"the passage has {'no' if len(ids) == 0 else 'one'} token: type a few words (a verse, say) "
                         "to see the model read them twice; a word is predicted from the words before it")
    if len(ids) > N_CTX // 2:
        raise ValueError(f"the passage has {len(ids)} tokens (words and punctuation marks), but written twice it must "
                         f"fit in n_ctx = {N_CTX}: keep it to {N_CTX // 2}")
    return torch.cat([ids, ids]), tokenizer.to_strings(ids)


@torch.no_grad()
def copy_gain(model: Transformer, text: str) -> tuple[list[str], torch.Tensor, torch.Tensor]:
    """The words of ``text`` from its 2nd on, and the probability the model gives each of them (n - 1,) when it reads
    the passage the first time, and when it reads it again right after (the second copy)."""
    ids, words = written_twice(text)
    n = len(words)
    p = softmax(model(ids[:-1]), dim=0)  # (n_vocab, 2 n - 1): column i predicts word i + 1
    p_next = p[ids[1:], torch.arange(2 * n - 1)]  # (2 n - 1,)
    return words[1:], p_next[: n - 1], p_next[n:]
