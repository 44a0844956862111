"""Notebook 08's explorers.

LadderExplorer   type a prompt, compare the next-word guesses of every rung of the ladder.
LensExplorer     the logit lens: type a prompt, pick a state of the residual stream (x0, x1, ...), see the next
                 words read from it as if the model ended there, and how the model's final guess rises state by state.
                 (Also notebook 11's, on GPT-2 Small: the lens of the last few prompts is kept, and a new prompt on
                 the page is answered in two steps, helpers.widgets.later.TwoSteps.)
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
from helpers.plots.palette import BLUE, ORANGE, TEXT_MUTED
from helpers.tokens import Tokenizer, prepare_prompt
from helpers.widgets import kept, later
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


class LensExplorer(later.TwoSteps, Explorer):
    """The logit lens on one model: p = softmax(W_U LN(x_i)) at the last position, for the state chosen.

    What a redraw costs: one forward pass per new prompt (every state is read from it), kept for the last
    ``KEPT_PROMPTS`` prompts and keyed by the model's state as well (``helpers.widgets.kept``: a weight edited in place
    is seen), so choosing another state to read from runs no model. When that pass is long (``redraw_cost`` over
    ``SPLIT_ABOVE`` multiply-adds: GPT-2 Small's shapes on any prompt, never the series' own models or the stand-in),
    a new prompt typed on the page is answered in two steps (``later.TwoSteps``): at once the prompt as read, the
    caption saying the lens is being computed and a placeholder for the picture (``lens=coming`` in the state), then,
    once the kernel has replied, the lens.
    """

    KEPT_PROMPTS = 3  # lenses kept, the oldest dropped first (GPT-2 Small: 25 states x 50,257 tokens, 5 MB each)
    COMING = "lens"  # a split redraw's first step says lens=coming (later.TwoSteps)
    HEIGHT = 190  # px of the picture (its taller chart, the rise): the placeholder keeps the page from jumping

    def __init__(self, model: Transformer, tokenizer: Tokenizer, prompt: str = "and the children of", k: int = 5):
        if model.cfg.n_layers < 1:
            raise ValueError("the logit lens needs a model with layers: a zero-layer model has one state, x0")
        self.model, self.tokenizer, self.k = model, tokenizer, k
        self.tokenizer_words = getattr(tokenizer, "separator", " ") != ""  # a BPE's tokens are pieces, not words
        self.labels = state_labels(model)
        self._lenses: dict[tuple, torch.Tensor] = {}  # (model state, token ids) -> the lens, (states, n_vocab)
        last = list(self.labels)[-1]
        self.text = text_box("prompt", prompt)
        self.state = choice("read from", list(self.labels), last, width="3.2em")
        super().__init__([self.text, self.state])

    @staticmethod
    def redraw_cost(cfg, n: int) -> float:
        """Multiply-adds of a new prompt's lens: one forward pass over its n tokens (``later.pass_cost``), then every
        state of the stream (1 + 2 per layer, 1 + 1 without MLPs) unembedded at the last position. A count from the
        config: GPT-2 Small's is over 1e9 from one token on."""
        states = 1 + cfg.n_layers * (2 if cfg.d_mlp else 1)
        return later.pass_cost(cfg, n) + states * cfg.n_vocab * cfg.d_model

    def _width(self) -> int:
        """The rise chart's width: GPT-2 Small's 25 states fit in 610 px, as 9 states do."""
        return 60 + max(22, min(46, 560 // len(self.labels))) * len(self.labels)

    def _coming(self, prompt) -> tuple[str, dict, str]:
        """The first step of a split redraw: the prompt as the model reads it and a placeholder as large as the
        picture; the lens follows after the reply."""
        shown, note = html.escape(prompt.shown), prompt.notice()
        n = len(prompt.ids)
        text = (f"after '{shown}', read from {self.state.value} ({html.escape(self.labels[self.state.value])}): "
                f"the lens is being computed (one pass of the model over {n} token{'s' if n != 1 else ''}, then "
                f"each of the {len(self.labels)} states read at the last); the picture follows."
                + (f" <i>({html.escape(note)})</i>" if note else ""))
        view = (f'<div class="gt-coming" style="width:{260 + 16 + self._width()}px;height:{self.HEIGHT}px;'
                f'font:12px sans-serif;color:{TEXT_MUTED};display:flex;align-items:center;justify-content:center;'
                f'border:1px dashed {TEXT_MUTED}">computing the lens of &lsquo;{shown}&rsquo;&hellip;</div>')
        return text, {"prompt": self.text.value.strip(), "state": self.state.value, "lens": "coming"}, view

    def render(self):
        prompt = prepare_prompt(self.text.value, self.tokenizer, self.model.cfg.n_ctx)
        key = (kept.model_state(self.model), tuple(prompt.ids.tolist()))
        if key not in self._lenses:
            if self.leave_for_later(self.redraw_cost(self.model.cfg, len(prompt.ids))):
                return self._coming(prompt)
            # (states, n_vocab): each state read at the last position
            kept.keep(self._lenses, key, logit_lens(self.model, prompt.ids), self.KEPT_PROMPTS)
        p = self._lenses[key]
        chosen = list(self.labels).index(self.state.value)
        vocab = self.tokenizer.vocab
        final = int(p[-1].argmax())  # the model's own guess
        word = vocab[final]
        items = top_k(p[chosen], self.k, vocab)
        bars = svg.hbars(items, title=f"read from {self.state.value} ({self.labels[self.state.value]})",
                         xlabel="p", width=260, xmax=1.0)
        journey = [float(v) for v in p[:, final]]
        colors = [ORANGE if i == chosen else BLUE for i in range(len(journey))]
        rise = svg.vbars(list(self.labels), journey, title=f"p('{word}') from each state ({self.state.value} orange)",
                         ylabel="p",
                         ylim=(0.0, 1.0), colors=colors, width=self._width(), xlabel="state")
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
