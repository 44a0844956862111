"""Notebook 08: type a prompt, compare the next-word guesses of every rung of the ladder."""

from __future__ import annotations

import html

import torch

from helpers.ngrams import top_k
from helpers.plots import svg
from helpers.tokens import Tokenizer, prepare_prompt
from helpers.widgets.base import Explorer, text_box


class LadderExplorer(Explorer):
    """A text box; one panel per model with its top next words and their probabilities.

    models: {label: Transformer}; bigram: optional (n_vocab, n_vocab) column table P[:, a].
    """

    def __init__(self, models: dict, tokenizer: Tokenizer, bigram: torch.Tensor | None = None,
                 prompt: str = "and the lord said unto", k: int = 5):
        if not models:
            raise ValueError("give at least one model")
        self.models, self.tokenizer, self.bigram, self.k = models, tokenizer, bigram, k
        self.text = text_box("prompt", prompt)
        super().__init__([self.text])

    def render(self):
        n_ctx = min(m.cfg.n_ctx for m in self.models.values())
        prompt = prepare_prompt(self.text.value, self.tokenizer, n_ctx)
        panels = []
        if self.bigram is not None:
            panels.append(("bigram", self.bigram[:, int(prompt.ids[-1])]))
        for label, model in self.models.items():
            panels.append((label, model.next_token_probs(prompt.ids)))
        charts, tops = [], {}
        for label, p in panels:
            items = top_k(p, self.k, self.tokenizer.vocab)
            tops[label] = items[0][0]
            charts.append(svg.hbars(items, title=label, xlabel="p", width=200, xmax=1.0))
        note = prompt.notice()
        text = (f"after '{html.escape(' '.join(prompt.tokens))}': "
                + "; ".join(f"{html.escape(k)} → <b>{html.escape(v)}</b>" for k, v in tops.items())
                + (f" <i>({html.escape(note)})</i>" if note else ""))
        return text, {"prompt": self.text.value.strip(), "n": len(prompt.ids)}, svg.row(*charts, gap=12)
