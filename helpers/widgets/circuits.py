"""Notebook 10's explorer: one token through one head's two circuits (HTML, a redraw costs milliseconds).

CircuitExplorer   pick a layer and a head and type a token (one character; of a longer text the last
                  one is shown, as in notebook 09's explorer): its row of the QK table
                  W_E^T W_QK W_E (which key tokens this query token scores highest) and its column of the
                  OV table W_U W_OV W_E (which tokens' logits attending to it raises), as top-token bars.
"""

from __future__ import annotations

import html

import torch

from helpers.lessons.induction import ALPHABET, encode
from helpers.interp.circuits import token_ov_table, token_qk_table
from helpers.interp.validate import check_head
from helpers.model.transformer import Transformer
from helpers.plots.attention import row_bars_html
from helpers.plots.palette import ORANGE
from helpers.widgets.base import Explorer, choice, text_box


def _label(c: str) -> str:
    return "␣" if c == " " else c


class CircuitExplorer(Explorer):
    """Layer, head and a query token: the top key tokens of its QK row and the top tokens its OV column writes."""

    def __init__(self, model: Transformer, layer: int = 1, head: int = 0, token: str = "a", top: int = 8):
        check_head(model, layer, head)
        if model.cfg.n_vocab != len(ALPHABET):
            raise ValueError(f"this explorer reads tokens as the {len(ALPHABET)} characters of notebook 09's model; "
                             f"this model has n_vocab = {model.cfg.n_vocab}")
        self.model, self.top = model, top
        self.layer = choice("layer", range(model.cfg.n_layers), layer)
        self.head = choice("head", range(model.cfg.n_heads), head)
        self.token = text_box("token", token, width="12em")
        self._tables: dict[tuple[int, int], tuple[torch.Tensor, torch.Tensor]] = {}
        super().__init__([self.layer, self.head, self.token])

    def tables(self, layer: int, head: int) -> tuple[torch.Tensor, torch.Tensor]:
        if (layer, head) not in self._tables:
            self._tables[layer, head] = (token_qk_table(self.model, layer, head),
                                         token_ov_table(self.model, layer, head))
        return self._tables[layer, head]

    def render(self):
        text = self.token.value
        ids = encode(text)  # an empty box or an unknown character gets the tokens' own message
        a = int(ids[-1])  # several characters: the last one is the query token, as in notebook 09's explorer
        char = ALPHABET[a]
        layer, head = self.layer.value, self.head.value
        qk, ov = self.tables(layer, head)
        row, col = qk[a], ov[:, a]  # scores of query a on every key token; logits written by attending to a
        top_k = row.topk(self.top).indices.tolist()
        top_o = col.topk(self.top).indices.tolist()
        keys = [_label(ALPHABET[i]) for i in top_k]
        outs = [_label(ALPHABET[i]) for i in top_o]
        mark = {k: ORANGE for k, i in enumerate(top_o) if i == a}
        qk_bars = row_bars_html((row[top_k] - row.mean()).numpy(), keys, "QK: key tokens it attends to (score − mean)")
        ov_bars = row_bars_html((col[top_o] - col.mean()).numpy(), outs, "OV: tokens it writes (logit − mean)", mark,
                                {ORANGE: "the attended token itself"})
        view = (f'<div style="display:flex;gap:28px;align-items:flex-start">'
                f"<div>{qk_bars}</div><div>{ov_bars}</div></div>")
        t = html.escape(_label(char))
        copies = top_o[0] == a
        several = (f"'{html.escape(text)}' is {len(text)} tokens; this shows the last one. " if len(text) > 1 else "")
        caption = (f"{several}Layer {layer}, head {head}, token '<b>{t}</b>'. As a query, '{t}' scores the key token "
                   f"'{html.escape(keys[0])}' highest; attended to, '{t}' raises the logit of "
                   f"'{html.escape(outs[0])}' most" + (" — itself: this head copies it." if copies else "."))
        state = {"layer": layer, "head": head, "text": text, "token": char, "top_key": ALPHABET[top_k[0]],
                 "top_written": ALPHABET[top_o[0]]}
        return caption, state, view
