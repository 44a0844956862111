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

from helpers.induction import ALPHABET, InductionRun, decode, encode
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


def _label(c: str) -> str:
    return "␣" if c == " " else c


def _two_heads(A0: torch.Tensor, A1: torch.Tensor, text: str, ids: torch.Tensor, titles: tuple[str, str]) -> str:
    """Both patterns side by side; in every row, the query token's earlier occurrences are framed black
    and the tokens that followed them orange (where an induction head should look)."""
    n = len(text)
    future = torch.ones(n, n, dtype=torch.bool).triu(1)
    marks = {EARLIER: duplicate_token_mask(ids).numpy(), AFTER: induction_mask(ids).numpy()}
    cells = "".join(f'<div><div style="font:12px sans-serif;text-align:center"><b>{html.escape(t)}</b></div>'
                    f"{pattern_image_html(A, list(text), query=n - 1, masked=future, cell=9, marks=marks, label=t)}"
                    "</div>"
                    for A, t in zip((A0, A1), titles))
    return f'<div style="display:flex;flex-wrap:wrap;gap:16px">{cells}</div>'


class InductionExplorer(Explorer):
    """Type a sequence; see the previous-token head (layer 0) and the induction head (layer 1)."""

    def __init__(self, model: Transformer, previous_head: int, induction_head: int,
                 text: str = "Harry Potter and Harry Pott"):
        check_head(model, 0, previous_head)
        check_head(model, 1, induction_head)
        self.model, self.heads = model, (previous_head, induction_head)
        self.text = text_box("sequence", text, width="30em")
        super().__init__([self.text])

    def render(self):
        text = self.text.value
        ids = encode(text, self.model.cfg.n_ctx)
        n, last = len(ids), text[-1]
        _, cache = self.model.run_with_cache(ids)
        A0 = cache[names.key(0, "A")][self.heads[0]]  # (n, n)
        A1 = cache[names.key(1, "A")][self.heads[1]]
        p = softmax(cache[names.LOGITS][:, -1], dim=0)
        guess = ALPHABET[int(p.argmax())]
        earlier = [j for j in range(n - 1) if text[j] == last]
        after = [j + 1 for j in earlier]
        marks = {j: EARLIER for j in earlier} | {j: AFTER for j in after}
        view = _two_heads(A0, A1, text, ids, (f"layer 0, head {self.heads[0]} (previous token)",
                                         f"layer 1, head {self.heads[1]} (induction)"))
        bars = (f'<div style="display:flex;gap:24px;margin-top:8px">'
                f'<div>{row_bars_html(A0[-1].numpy(), list(text), "previous-token head, last query", marks, MARKED)}'
                f'</div><div>{row_bars_html(A1[-1].numpy(), list(text), "induction head, last query", marks, MARKED)}'
                "</div></div>")
        if earlier:
            share = float(A1[-1, after].sum())
            seen = ", ".join(f"'{_label(text[j])}' (position {j + 1})" for j in after)
            text_html = (f"The last token '{html.escape(_label(last))}' occurred before; "
                         f"<span style='border-bottom:3px solid {AFTER}'>what followed it then</span> (framed "
                         f"orange): {html.escape(seen)}. "
                         f"The induction head puts {share:.2f} of the last query's weight there. "
                         f"The model predicts '<b>{html.escape(_label(guess))}</b>' (p = {float(p.max()):.2f}).")
        else:
            share = 0.0
            text_html = (f"The last token '{html.escape(_label(last))}' has not occurred before: there is nothing to "
                         f"copy, and the model is unsure (its guess '{html.escape(_label(guess))}', "
                         f"p = {float(p.max()):.2f}). Repeat part of the sequence to see the induction head work.")
        state = {"text": text, "n": n, "guess": guess, "on_successor": f"{share:.2f}"}
        return text_html, state, view + bars


class TrainingExplorer(Explorer):
    """Slide through the training steps kept by ``train_induction``: patterns and loss at each."""

    def __init__(self, model: Transformer, run: InductionRun, previous_head: int, induction_head: int,
                 text: str | None = None):
        if not run.snapshots:
            raise ValueError("this training run kept no snapshots: train with helpers.induction.train_induction")
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
