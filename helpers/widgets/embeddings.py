"""Notebook 02 widgets: what the zero-layer model predicts after a token (next to the bigram
table), and a softmax / temperature playground."""

from __future__ import annotations

import html

import ipywidgets as W
import torch

from helpers import ngrams
from helpers.model.transformer import Transformer
from helpers.plots.basic import bars
from helpers.softmax import softmax
from helpers.tokens import UNK, Tokenizer, UnknownWordError, split_words
from helpers.widgets.base import Explorer


class ZeroLayerVsBigram(Explorer):
    """Pick a token a: bars of the model's softmax(W_U W_E)[:, a] beside the bigram table P[:, a]."""

    figsize = (9, 3.4)

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

    def draw(self, fig):
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
        ax1, ax2 = fig.subplots(1, 2)
        k, vocab = self.k.value, self.tokenizer.vocab
        bars(ax1, ngrams.top_k(self.Q[:, a], k, vocab), title=f"zero-layer model after '{w}'")
        bars(ax2, ngrams.top_k(self.P[:, a], k, vocab), title=f"bigram table after '{w}'", color="tab:orange")
        kl = ngrams.kl_divergence(self.P[:, a:a + 1], self.Q[:, a:a + 1], torch.ones(1))
        return (f"After <b>{html.escape(w)}</b>: KL(bigram ‖ model) = {kl:.3f} nats for this column "
                f"(0 would be a perfect copy of the table)."), {"token": w, "k": k}


class SoftmaxPlayground(Explorer):
    """Four logits and a temperature: see softmax turn them into probabilities."""

    figsize = (8, 2.8)

    def __init__(self, logits=(2.0, 1.0, 0.0, -1.0), labels=("lord", "king", "people", "earth")):
        self.labels = list(labels)
        self.sliders = [W.FloatSlider(value=v, min=-5, max=5, step=0.5, description=f"logit {lab}")
                        for v, lab in zip(logits, labels)]
        self.temperature = W.FloatLogSlider(value=1.0, base=10, min=-1, max=1, step=0.05, description="temperature")
        super().__init__([*self.sliders, self.temperature])

    def draw(self, fig):
        x = torch.tensor([s.value for s in self.sliders])
        T = round(self.temperature.value, 3)
        p = softmax(x / T)
        ax1, ax2 = fig.subplots(1, 2)
        ax1.bar(self.labels, x.tolist(), color="tab:gray")
        ax1.axhline(0, color="black", lw=0.5)
        ax1.set_ylim(-5.5, 5.5)
        ax1.set_title("logits  x", fontsize=10)
        ax2.bar(self.labels, p.tolist(), color="tab:blue")
        ax2.set_ylim(0, 1)
        ax2.set_title(f"softmax(x / T),  T = {T:g}", fontsize=10)
        for i, q in enumerate(p.tolist()):
            ax2.text(i, q, f"{q:.2f}", ha="center", va="bottom", fontsize=8)
        state = {lab: s.value for lab, s in zip(self.labels, self.sliders)} | {"T": T}
        return (f"Probabilities sum to {float(p.sum()):.3f}; the largest is {float(p.max()):.2f}. "
                "Adding the same number to every logit changes nothing."), state
