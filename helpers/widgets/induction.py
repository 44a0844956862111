"""Notebook 09's explorers (HTML, like the attention explorers: a redraw costs milliseconds).

InductionExplorer   type any sequence of the model's 64 characters; see the previous-token head and the
                    induction head side by side, with each query token's earlier occurrences framed
                    black and the tokens that followed them orange; below, the last token's weights.
TrainingExplorer    a slider over the training steps kept during training: both heads' patterns on a
                    repeated sequence and the loss curve, before, during and after the phase change.
"""

from __future__ import annotations

import html

import ipywidgets as W
import torch

from helpers.lessons.induction import ALPHABET, InductionRun, decode, encode
from helpers.interp.scores import duplicate_token_mask, induction_mask
from helpers.interp.validate import check_head
from helpers.model import names
from helpers.model.transformer import Transformer
from helpers.plots.attention import pattern_image_html, row_bars_html
from helpers.plots.induction import curve_svg, smooth
from helpers.plots.palette import AFTER, BLUE, EARLIER
from helpers.softmax import softmax
from helpers.widgets.base import Explorer, text_box


MARKED = {EARLIER: "an earlier copy of the last token", AFTER: "came after an earlier copy"}
# what the frames over a pattern mark, row by row, in the pattern's text alternative (helpers.plots.alt.pattern_text)
FRAMES = {EARLIER: "framed black, an earlier copy of the query's token",
          AFTER: "framed orange, the token after an earlier copy (where an induction head looks)"}


def _label(c: str) -> str:
    return "␣" if c == " " else c


def _two_heads(A0: torch.Tensor, A1: torch.Tensor, text: str, ids: torch.Tensor, titles: tuple[str, str]) -> str:
    """Both patterns side by side; in every row, the query token's earlier occurrences are framed black
    and the tokens that followed them orange (where an induction head should look)."""
    n = len(text)
    future = torch.ones(n, n, dtype=torch.bool).triu(1)
    marks = {EARLIER: duplicate_token_mask(ids).numpy(), AFTER: induction_mask(ids).numpy()}

    def one(A: torch.Tensor, title: str) -> str:
        return pattern_image_html(A, list(text), query=n - 1, masked=future, cell=9, marks=marks, label=title,
                                  mark_words=FRAMES)

    cells = "".join(f'<div><div style="font:12px sans-serif;text-align:center"><b>{html.escape(t)}</b></div>'
                    f"{one(A, t)}</div>" for A, t in zip((A0, A1), titles))
    return f'<div style="display:flex;flex-wrap:wrap;gap:16px">{cells}</div>'


class InductionExplorer(Explorer):
    """Type a sequence; see the previous-token head (layer 0) and the induction head (layer 1)."""

    def __init__(self, model: Transformer, previous_head: int, induction_head: int,
                 text: str = "Harry Potter and Harry Pott",
                 compare: dict[str, tuple[Transformer, int, int]] | None = None):
        """compare: {name: (another model, its previous-token head, its induction head)}, drawn below the first
        on the same sequence (notebook 10: the hand-built circuit beside the trained model). Every model must
        read the same 64 characters and n_ctx."""
        check_head(model, 0, previous_head)
        check_head(model, 1, induction_head)
        self.models = {"trained": (model, previous_head, induction_head)}
        for name, (other, prev, ind) in (compare or {}).items():
            check_head(other, 0, prev)
            check_head(other, 1, ind)
            if (other.cfg.n_vocab, other.cfg.n_ctx) != (model.cfg.n_vocab, model.cfg.n_ctx):
                raise ValueError(f"the model '{name}' has n_vocab {other.cfg.n_vocab} and n_ctx {other.cfg.n_ctx}, "
                                 f"the first {model.cfg.n_vocab} and {model.cfg.n_ctx}: they cannot read the same "
                                 "sequence")
            self.models[name] = (other, prev, ind)
        self.model, self.heads = model, (previous_head, induction_head)
        self.text = text_box("sequence", text, width="30em")
        super().__init__([self.text])

    def _one(self, model: Transformer, heads: tuple[int, int], text: str, ids: torch.Tensor, earlier: list[int],
             name: str | None):
        """One model's two patterns, its last query's bars and its words: (words, guess, share, html).
        earlier: the positions where the last token occurred before (the same for every model)."""
        _, cache = model.run_with_cache(ids)
        A0 = cache[names.key(0, "A")][heads[0]]  # (n, n)
        A1 = cache[names.key(1, "A")][heads[1]]
        p = softmax(cache[names.LOGITS][:, -1], dim=0)
        guess = ALPHABET[int(p.argmax())]
        after = [j + 1 for j in earlier]
        marks = {j: EARLIER for j in earlier} | {j: AFTER for j in after}
        who = f"{name}: " if name else ""
        view = _two_heads(A0, A1, text, ids, (f"{who}layer 0, head {heads[0]} (previous token)",
                                         f"{who}layer 1, head {heads[1]} (induction)"))
        bar0 = row_bars_html(A0[-1].numpy(), list(text), f"{who}previous-token head, last query", marks, MARKED)
        bar1 = row_bars_html(A1[-1].numpy(), list(text), f"{who}induction head, last query", marks, MARKED)
        bars = f'<div style="display:flex;gap:24px;margin-top:8px"><div>{bar0}</div><div>{bar1}</div></div>'
        the = f"the {name} model" if name else "the model"
        share = float(A1[-1, after].sum()) if earlier else 0.0
        if earlier:
            words = (f"The induction head of {the} puts {share:.2f} of the last query's weight there; {the} predicts "
                     f"'<b>{html.escape(_label(guess))}</b>' (p = {float(p.max()):.2f}).")
        else:
            words = (f"{the[0].upper()}{the[1:]} guesses '{html.escape(_label(guess))}' "
                     f"(p = {float(p.max()):.2f}).")
        heading = f'<h3 style="margin:12px 0 4px;font-size:1em">{html.escape(name)} model</h3>' if name else ""
        return words, guess, share, heading + view + bars

    def render(self):
        text = self.text.value
        ids = encode(text, self.model.cfg.n_ctx)
        n, last = len(ids), text[-1]
        earlier = [j for j in range(n - 1) if text[j] == last]
        several = len(self.models) > 1
        parts = {name: self._one(m, (prev, ind), text, ids, earlier, name if several else None)
                 for name, (m, prev, ind) in self.models.items()}
        if earlier:
            seen = ", ".join(f"'{_label(text[j + 1])}' (position {j + 2}"
                             + (", the last token itself)" if j + 1 == n - 1 else ")") for j in earlier)
            text_html = (f"The last token '{html.escape(_label(last))}' occurred before; "
                         f"<span style='border-bottom:3px solid {AFTER}'>what followed it then</span> (framed "
                         f"orange): {html.escape(seen)}. ")
        else:
            text_html = (f"The last token '{html.escape(_label(last))}' has not occurred before: there is nothing to "
                         "copy. Repeat part of the sequence to see the induction head work. ")
        text_html += " ".join(words for words, _, _, _ in parts.values())
        _, guess, share, _ = parts["trained"]
        state = {"text": text, "n": n, "guess": guess, "on_successor": f"{share:.2f}"}
        for name, (_, other_guess, other_share, _) in list(parts.items())[1:]:
            state[f"guess ({name})"] = other_guess
            state[f"on_successor ({name})"] = f"{other_share:.2f}"
        return text_html, state, "".join(view for _, _, _, view in parts.values())


class TrainingExplorer(Explorer):
    """Slide through the training steps kept by ``train_induction``: patterns and loss at each."""

    def __init__(self, model: Transformer, run: InductionRun, previous_head: int, induction_head: int,
                 text: str | None = None):
        if not run.snapshots:
            raise ValueError("this training run kept no snapshots: train with "
                             "helpers.lessons.induction.train_induction")
        check_head(model, 0, previous_head)
        check_head(model, 1, induction_head)
        self.run, self.heads = run, (previous_head, induction_head)
        self.model = type(model)(model.cfg)  # a private copy: sliding never touches the learner's model
        self.model.eval()
        half = model.cfg.n_ctx // 2
        self.text_value = text if text is not None else decode(torch.randperm(len(ALPHABET),
                                                               generator=torch.Generator().manual_seed(7))[:half]) * 2
        self.ids = encode(self.text_value, model.cfg.n_ctx)
        steps = run.eval_step
        self.step = W.SelectionSlider(options=steps, value=steps[-1], description="step",
                                      continuous_update=True, layout=W.Layout(width="34em"))
        super().__init__([self.step])

    def render(self):
        s = self.step.value
        k = self.run.eval_step.index(s)
        self.model.load_state_dict(self.run.snapshots[s])
        _, cache = self.model.run_with_cache(self.ids)
        A0 = cache[names.key(0, "A")][self.heads[0]]
        A1 = cache[names.key(1, "A")][self.heads[1]]
        view = _two_heads(A0, A1, self.text_value, self.ids,
                          (f"layer 0, head {self.heads[0]}", f"layer 1, head {self.heads[1]}"))
        loss = smooth(self.run.loss)
        chart = curve_svg(self.run.step, {"training loss": (loss, BLUE)}, marker=s, label="training loss")
        scores = curve_svg(self.run.eval_step, {"induction": (self.run.induction, AFTER),
                                                "previous token": (self.run.previous, EARLIER)},
                           marker=s, ymax=1.0, label="head scores")
        text = (f"Step {s}: training loss {loss[s - 1]:.2f}, induction score {self.run.induction[k]:.2f}, "
                f"previous-token score {self.run.previous[k]:.2f}. The sequence is 16 random characters "
                f"twice; an induction head's weight sits in the orange frames (the token after the earlier copy, "
                f"framed black), a diagonal stripe in the second half.")
        state = {"step": s, "induction": f"{self.run.induction[k]:.2f}"}
        return text, state, f'<div style="display:flex;gap:12px">{chart}{scores}</div>' + view
