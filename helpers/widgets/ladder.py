"""Notebook 08's explorers.

LadderExplorer   type a prompt, compare the next-word guesses of every rung of the ladder.
LensExplorer     the logit lens: type a prompt, pick a state of the residual stream (x0, x1, ...), see the next
                 words read from it as if the model ended there, and how the model's final guess rises state by state.
"""

from __future__ import annotations

import html

import torch

from helpers.interp.lens import logit_lens
from helpers.interp.patching import resid_places
from helpers.model import names
from helpers.model.transformer import Transformer
from helpers.ngrams import top_k
from helpers.plots import svg
from helpers.plots.palette import BLUE, ORANGE
from helpers.tokens import Tokenizer, prepare_prompt
from helpers.widgets.base import Explorer, choice, text_box


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
        text = (f"after '{html.escape(prompt.shown)}': "
                + "; ".join(f"{html.escape(k)} → <b>{html.escape(v)}</b>" for k, v in tops.items())
                + (f" <i>({html.escape(note)})</i>" if note else ""))
        return text, {"prompt": self.text.value.strip(), "n": len(prompt.ids)}, svg.row(*charts, gap=12)


def state_labels(model: Transformer) -> dict[str, str]:
    """{"x0": "the embedding", "x1": "+ layer 0 attention", ...}: what each residual-stream state has added."""
    said = {"embed": "the embedding", "attn": "attention", "mlp": "MLP"}
    return {names.resid(i): said[kind] if layer < 0 else f"+ layer {layer} {said[kind]}"
            for i, (layer, kind) in enumerate(resid_places(model))}


class LensExplorer(Explorer):
    """The logit lens on one model: p = softmax(W_U LN(x_i)) at the last position, for the state chosen."""

    def __init__(self, model: Transformer, tokenizer: Tokenizer, prompt: str = "and the children of", k: int = 5):
        if model.cfg.n_layers < 1:
            raise ValueError("the logit lens needs a model with layers: a zero-layer model has one state, x0")
        self.model, self.tokenizer, self.k = model, tokenizer, k
        self.tokenizer_words = getattr(tokenizer, "separator", " ") != ""  # a BPE's tokens are pieces, not words
        self.labels = state_labels(model)
        last = list(self.labels)[-1]
        self.text = text_box("prompt", prompt)
        self.state = choice("read from", list(self.labels), last, width="3.2em")
        super().__init__([self.text, self.state])

    def render(self):
        prompt = prepare_prompt(self.text.value, self.tokenizer, self.model.cfg.n_ctx)
        p = logit_lens(self.model, prompt.ids)  # (states, n_vocab): each state read at the last position
        chosen = list(self.labels).index(self.state.value)
        vocab = self.tokenizer.vocab
        final = int(p[-1].argmax())  # the model's own guess
        word = vocab[final]
        items = top_k(p[chosen], self.k, vocab)
        bars = svg.hbars(items, title=f"read from {self.state.value} ({self.labels[self.state.value]})",
                         xlabel="p", width=260, xmax=1.0)
        journey = [float(v) for v in p[:, final]]
        colors = [ORANGE if i == chosen else BLUE for i in range(len(journey))]
        per_bar = max(22, min(46, 560 // len(journey)))  # GPT-2 Small's 25 states fit in 610 px, as 9 states do
        rise = svg.vbars(list(self.labels), journey, title=f"p('{word}') from each state ({self.state.value} orange)",
                         ylabel="p",
                         ylim=(0.0, 1.0), colors=colors, width=60 + per_bar * len(journey), xlabel="state")
        tops = (p.argmax(-1) == final).nonzero()
        first = names.resid(int(tops[0]))  # never empty: the last state's top word is the model's guess
        stays = bool((p[int(tops[0]):].argmax(-1) == final).all())
        note = prompt.notice()
        unit = "word" if self.tokenizer_words else "token"
        text = (f"after '{html.escape(prompt.shown)}', read from {self.state.value} "
                f"({html.escape(self.labels[self.state.value])}): the likeliest next {unit} is "
                f"<b>{html.escape(items[0][0])}</b> (p = {items[0][1]:.2f}). The model's own guess, "
                f"<b>{html.escape(word)}</b>, has p = " + ", ".join(f"{v:.2f}" if v >= 0.005 else "nearly 0"
                                                        for v in journey)
                + f" from {list(self.labels)[0]} to {list(self.labels)[-1]}"
                + (f"; it is the top {unit} from {first} on" if stays else
                   f"; it is the top {unit} at {', '.join(names.resid(int(i)) for i in tops)}")
                + "." + (f" <i>({html.escape(note)})</i>" if note else ""))
        state = {"prompt": self.text.value.strip(), "state": self.state.value, "top": items[0][0], "final": word}
        return text, state, svg.row(bars, rise, gap=16)
