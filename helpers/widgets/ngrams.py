"""Notebook 01 widget: type a prompt, choose n and a temperature, see the n-gram model's next-token
bars and a sample continuation."""

from __future__ import annotations

import html

import ipywidgets as W

from helpers import ngrams
from helpers.data import Data
from helpers.plots import svg
from helpers.tokens import prepare_prompt
from helpers.widgets.base import Explorer, chosen, text_box


class NgramExplorer(Explorer):
    """Next-token distribution of an n-gram model after a typed prompt, plus a seeded sample."""

    def __init__(self, data: Data, prompt: str = "thus saith the", n: int = 2, temperature: float = 1.0,
                 k: int = 10, sample_tokens: int = 20, seed: int = 0):
        self.data, self.k, self.sample_tokens, self.seed = data, k, sample_tokens, seed
        self.prompt = text_box("prompt", prompt)
        self.n = W.IntSlider(value=n, min=1, max=5, description="n")
        self.temperature = W.FloatSlider(value=temperature, min=0.1, max=3.0, step=0.1, description="temperature")
        super().__init__([self.prompt, self.n, self.temperature])

    def render(self):
        d, n, T = self.data, self.n.value, chosen(self.temperature)
        p = prepare_prompt(self.prompt.value, d.tokenizer)
        r = ngrams.next_token_probs(d.train_ids, p.ids, n, d.n_vocab, T)
        context = p.tokens[len(p.tokens) - (r.order - 1):] if r.order > 1 else []
        shown = " ".join(context).replace("\n", "⏎") or "(nothing: unigram)"
        view = svg.hbars(ngrams.top_k(r.probs, self.k, d.tokenizer.vocab), width=420,
                         title=f"next token after “{shown}”  ({r.order}-gram, T = {T:g})",
                         xlabel="probability of the next token")
        out = ngrams.sample(d.train_ids, p.ids, n, d.n_vocab, self.sample_tokens, T, seed=self.seed)
        continuation = d.tokenizer.decode(out[len(p.ids):]).replace("\n", " ⏎ ")
        notes = []
        possible = min(n, len(p.ids) + 1)  # a prompt of k tokens supports at most a (k+1)-gram
        if possible < n:
            notes.append(f"the prompt has only {len(p.ids)} token{'s' * (len(p.ids) != 1)}, so at most a "
                         f"{possible}-gram can be used")
        if r.order < possible:
            notes.append(f"the {possible - 1}-token context never occurs in the training text, so the model "
                         f"backed off to a {r.order}-gram")
        if p.notice():
            notes.append(p.notice())
        text = (f"Context “{html.escape(shown)}” occurs {r.seen:,} times in training. "
                f"Sample: <i>{html.escape(self.prompt.value.strip())} <b>{html.escape(continuation)}</b></i>")
        if notes:
            text += "<br><small>Note: " + html.escape("; ".join(notes)) + "</small>"
        return text, {"prompt": self.prompt.value, "n": n, "T": T, "order": r.order}, view

    def why_unchanged(self, before, after):
        if after.get("n") != before.get("n"):
            return f"the bars come from a {after['order']}-gram both times (the note above says why)"
        return super().why_unchanged(before, after)
