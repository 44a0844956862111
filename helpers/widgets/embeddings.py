"""Notebook 02 widgets: what the zero-layer model predicts after a token (next to the bigram
table), and a softmax / temperature playground."""

from __future__ import annotations

import html

import ipywidgets as W
import torch

from helpers import ngrams
from helpers.model.transformer import Transformer
from helpers.plots import svg
from helpers.softmax import softmax
from helpers.tokens import UNK, Tokenizer, UnknownWordError, split_words
from helpers.widgets.base import Explorer, chosen


class ZeroLayerVsBigram(Explorer):
    """Pick a token a: bars of the model's softmax(W_U W_E)[:, a] beside the bigram table P[:, a]."""

    def __init__(self, model: Transformer, P_bigram: torch.Tensor, tokenizer: Tokenizer,
                 token: str = "holy", k: int = 8):
        self.tokenizer = tokenizer
        with torch.no_grad():
            logits = model.unembed.W_U @ model.embed.W_E  # (n_vocab, n_vocab): column a = logits after a
            if model.pos_embed is not None:  # the post's T(t) adds W_pos; use the average position
                logits = logits + (model.unembed.W_U @ model.pos_embed.W_pos.mean(1))[:, None]
            self.Q = softmax(logits, dim=0)
        self.P = P_bigram
        self.token = W.Combobox(value=token, options=tokenizer.vocab[1:], description="token",
                                ensure_option=False, continuous_update=False)
        self.k = W.IntSlider(value=k, min=3, max=15, description="top k")
        super().__init__([self.token, self.k])

    def render(self):
        words = split_words(self.token.value)
        if not words:
            raise ValueError("Type a token (a word or a punctuation mark) to see what comes after it.")
        if len(words) > 1:
            raise ValueError(f"One token at a time: {self.token.value!r} is {len(words)} tokens. "
                             "A zero-layer model only ever sees the last one.")
        w = words[0]
        if w not in self.tokenizer.index:
            raise UnknownWordError(f"{w!r} is not in the vocabulary; the model would see it as {UNK}.")
        a = self.tokenizer.index[w]
        k, vocab = self.k.value, self.tokenizer.vocab
        view = svg.row(svg.hbars(ngrams.top_k(self.Q[:, a], k, vocab), title=f"zero-layer model after '{w}'"),
                       svg.hbars(ngrams.top_k(self.P[:, a], k, vocab), title=f"bigram table after '{w}'",
                                 color=svg.ORANGE))
        kl = ngrams.kl_divergence(self.P[:, a:a + 1], self.Q[:, a:a + 1], torch.ones(1))
        return (f"After <b>{html.escape(w)}</b>: KL(bigram ‖ model) = {kl:.3f} nats for this column "
                f"(0 would be a perfect copy of the table)."), {"token": w, "k": k}, view


class SoftmaxPlayground(Explorer):
    """Four logits and a temperature: see softmax turn them into probabilities."""

    def __init__(self, logits=(2.0, 1.0, 0.0, -1.0), labels=("lord", "king", "people", "earth")):
        self.labels = list(labels)
        self.sliders = [W.FloatSlider(value=v, min=-5, max=5, step=0.5, description=f"logit {lab}")
                        for v, lab in zip(logits, labels)]
        self.temperature = W.FloatLogSlider(value=1.0, base=10, min=-1, max=1, step=0.05, description="temperature")
        super().__init__([*self.sliders, self.temperature])

    def render(self):
        logits = [chosen(s) for s in self.sliders]
        T = chosen(self.temperature)
        p = softmax(torch.tensor(logits, dtype=torch.float64) / T)
        view = svg.row(svg.vbars(self.labels, logits, title="logits  x", ylim=(-5.5, 5.5), colors=svg.GREY,
                                 fmt=".1f", ylabel="logit"),
                       svg.vbars(self.labels, p.tolist(), title=f"softmax(x / T),  T = {T:g}", ylim=(0.0, 1.1),
                                 ylabel="probability"))
        state = dict(zip(self.labels, logits)) | {"T": T}
        return (f"Probabilities sum to {float(p.sum()):.3f}; the largest is {float(p.max()):.2f}. "
                "Adding the same number to every logit changes nothing."), state, view
