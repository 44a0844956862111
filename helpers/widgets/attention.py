"""Attention explorers.

LastTokenExplorer (notebook 03)  type a sentence: the last token's weights over the context for one
                                 head, and the next-token prediction with and without attention.
PaddingExplorer   (notebook 04)  softmax([1, 2, P]) as P goes to -inf.
HeadsExplorer     (notebooks 05, 11)  every head of one layer side by side; switch heads off and see the
                                 next-token guess and the loss change.
PatternExplorer   (notebook 04)  type text, pick layer, head and query; toggle the causal mask;
                                 see the pattern A as a heatmap with tokens on both axes. Positions are
                                 numbered from 1 as in the post: the "query i" slider, the caption and
                                 data-state all show the same i.

The causal mask is switched with ``helpers.model.transformer.mask_switched`` (used by ``_run``).

All are drawn as HTML / SVG (helpers.widgets.base says why).
"""

from __future__ import annotations

import contextlib
import html

import ipywidgets as W
import torch

from helpers.interp.ablation import ablated, given_means
from helpers.interp.loss import per_position_loss
from helpers.model import names
from helpers.model.transformer import Transformer, mask_switched
from helpers.plots import svg
from helpers.plots.alt import token_html
from helpers.plots.palette import TEXT_MUTED
from helpers.plots.attention import pattern_css, pattern_html, pattern_image_html, row_bars_html
from helpers.ngrams import top_k
from helpers.softmax import softmax
from helpers.tokens import Tokenizer, prepare_prompt
from helpers.widgets import kept, later
from helpers.widgets.base import Explorer, choice, chosen, text_box


def _notice(prompt) -> str:
    note = prompt.notice()
    return f'<br><span class="gt-notice" style="color:{TEXT_MUTED}">Note: {html.escape(note)}.</span>' if note else ""


def _tokens_line(tokens) -> str:
    return " ".join(f"<code>{html.escape(t if t != chr(10) else '⏎')}</code>" for t in tokens)


def _run(model: Transformer, ids: torch.Tensor, masked: bool = True):
    """run_with_cache with the causal mask on or off in every layer (restored afterwards)."""
    with mask_switched(model, bool(masked)):
        return model.run_with_cache(ids)


def _needs_attention(model: Transformer) -> None:
    if not model.cfg.n_layers:
        raise ValueError("this explorer needs a model with at least one attention layer")


class LastTokenExplorer(Explorer):
    """Notebook 03: the last token asks; which earlier tokens answer, and what does it change?"""

    def __init__(self, model: Transformer, tokenizer: Tokenizer, text: str = "and god said , let there be",
                 head: int = 0, top: int = 6):
        _needs_attention(model)
        self.model, self.tok, self.top = model, tokenizer, top
        self.text = text_box("text", text)
        # a one-head model (notebook 03's, like the post's) needs no head buttons
        self.head = choice("head", range(model.cfg.n_heads), head) if model.cfg.n_heads > 1 else None
        super().__init__([self.text] + ([self.head] if self.head else []))

    def render(self):
        prompt = prepare_prompt(self.text.value, self.tok, self.model.cfg.n_ctx)
        _, cache = self.model.run_with_cache(prompt.ids)
        h = self.head.value if self.head else 0
        who = f"head {h}: " if self.head else ""
        lead = f"Head {h}: the" if self.head else "The"
        a = cache[names.key(0, "A")][h, -1]  # the last token's weights over the context (n,)
        W_U = self.model.unembed.W_U.detach()
        p_without = softmax(W_U @ cache["x0"][:, -1])  # x0_n only: no attention
        p_with = softmax(W_U @ cache[cache.resid_names[-1]][:, -1])  # after attention: x1_n = x0_n + sum_h o^h_n

        def top(p):
            idx = p.topk(self.top).indices.tolist()
            return [self.tok.vocab[i] for i in idx], p[idx]

        (words_without, probs_without), (words_with, probs_with) = top(p_without), top(p_with)
        view = (f'<div style="display:flex;gap:28px;align-items:flex-start">'
                f'<div>{row_bars_html(a, prompt.tokens, f"{who}weights of the last token")}</div>'
                f'<div>{row_bars_html(probs_without, words_without, "next token without attention: W_U x0")}</div>'
                f'<div>{row_bars_html(probs_with, words_with, "next token with attention")}</div></div>')
        best = int(a.argmax())
        before, after = self.tok.vocab[int(p_without.argmax())], self.tok.vocab[int(p_with.argmax())]
        text = (f"Tokens: {_tokens_line(prompt.tokens)}<br>{lead} last token puts most weight "
                f"({float(a[best]):.2f}) on <code>{html.escape(prompt.tokens[best])}</code> (position {best + 1}). "
                f"Top next token without attention: <code>{html.escape(before)}</code>; with: "
                f"<code>{html.escape(after)}</code>.{_notice(prompt)}")
        return text, {"head": h, "n": len(prompt.ids), "text": self.text.value}, view


class PatternExplorer(Explorer):
    """Notebook 04: the whole attention pattern of one head, every token a query."""

    stylesheet = pattern_css()

    def __init__(self, model: Transformer, tokenizer: Tokenizer,
                 text: str = "in the beginning god created the heaven and the earth .",
                 layer: int = 0, head: int = 0):
        _needs_attention(model)
        self.model, self.tok = model, tokenizer
        self.text = text_box("text", text)
        self.layer = choice("layer", range(model.cfg.n_layers), layer)
        self.head = choice("head", range(model.cfg.n_heads), head)
        self.mask = W.Checkbox(value=True, description="causal mask", indent=False, layout=W.Layout(width="9em"))
        # positions from 1, as in the post and the caption: the slider shows i, the row is A[i - 1]
        self.query = W.IntSlider(value=1, min=1, max=1, description="query i", layout=W.Layout(width="22em"))
        super().__init__([self.text, self.layer, self.head, self.mask, self.query])

    def render(self):
        prompt = prepare_prompt(self.text.value, self.tok, self.model.cfg.n_ctx)
        n = len(prompt.ids)
        if self.query.max != n:  # keep the query slider inside the context (the last token by default)
            at_end = self.query.value == self.query.max
            self.query.unobserve(self.update, names="value")
            self.query.max = n
            self.query.value = n if at_end else min(self.query.value, n)
            self.query.observe(self.update, names="value")
        L, h, i, masked = self.layer.value, self.head.value, self.query.value, self.mask.value
        row = i - 1  # query i (counted from 1) is row i - 1 of the tensor
        _, cache = _run(self.model, prompt.ids, masked)
        A = cache[names.key(L, "A")][h]  # (n, n)
        future = torch.ones(n, n, dtype=torch.bool).triu(1)
        table = pattern_html(A, prompt.tokens, query=row, masked=future if masked else None, css=False,
                             label=f"layer {L}, head {h}")
        view = (f'<div style="display:flex;gap:24px;align-items:flex-start">'
                f'{table}'
                f'<div>{row_bars_html(A[row], prompt.tokens, f"query {i}: {prompt.tokens[row]!r} attends to")}'
                f"</div></div>")
        peek = float(A[:, :].triu(1).sum(-1).mean())
        where = ("Mask on: query i only sees tokens 1..i (hatched cells are the future, weight 0)." if masked else
                 f"<b>Mask off</b>: every query sees the whole text; on average {peek:.2f} of each row's weight "
                 f"falls on <i>later</i> tokens — the model is peeking at the future.")
        j = int(A[row].argmax())
        text = (f"Layer {L}, head {h}, {n} tokens. {where} Query {i} "
                f"(<code>{html.escape(prompt.tokens[row])}</code>) puts most weight ({float(A[row, j]):.2f}) on "
                f"<code>{html.escape(prompt.tokens[j])}</code> (position {j + 1}).{_notice(prompt)}")
        state = {"layer": L, "head": h, "mask": "on" if masked else "off", "query": i, "text": self.text.value}
        return text, state, view


class PaddingExplorer(Explorer):
    """Notebook 04: softmax([1, 2, P]) as P goes to -inf — which padding value acts as 'nothing'?"""

    def __init__(self, P: float = 0.0):
        self.P = W.FloatSlider(value=P, min=-30.0, max=5.0, step=0.5, description="P",
                               continuous_update=True, layout=W.Layout(width="28em"))
        super().__init__([self.P])

    def render(self):
        P = chosen(self.P)  # the value the learner chose, not 3.55e-15 from the browser's arithmetic
        p = softmax(torch.tensor([1.0, 2.0, P], dtype=torch.float64)).tolist()
        view = svg.vbars(["1", "2", "P"], p, title=f"softmax([1, 2, {P:g}])", ylabel="probability",
                         ylim=(0.0, 1.1), colors=[svg.BLUE, svg.BLUE, svg.ORANGE], fmt=".4f", width=260)
        text = (f"softmax([1, 2, {P:g}]) = [{p[0]:.4f}, {p[1]:.4f}, {p[2]:.4f}]. The post's target is "
                f"[0.2689, 0.7311, 0]: the padded entry only vanishes as P &rarr; &minus;&infin; "
                f"(e<sup>P</sup> &rarr; 0).")
        return text, {"P": P}, view


class HeadsExplorer(later.TwoSteps, Explorer):
    """Notebook 05 (and 11, GPT-2's 144 heads): every head of one layer side by side on the text you type, and a
    switch per head.

    A head switched off has its output o^h set to 0 (zero ablation, ``helpers.interp.ablation``), or, given
    ``means`` (``mean_activations`` pooled over positions, for every head), to its mean output o^h := mean (mean
    ablation: what notebook 11 argues for in a model with LayerNorms, GPT-2's): its pattern is still drawn (greyed),
    but nothing it reads about this text reaches the residual stream. Beside the
    patterns: the model's next-token guesses after the last token with every head on and with the
    switched-off heads removed, and the loss on the typed text both ways — what the heads are *for*,
    measured, not read off a pattern. Switches are kept per layer; changing the layer shows its own.

    What a redraw costs: one forward pass per new text (every layer's patterns, the guesses and the loss come from
    it, and are kept for the last few texts), so moving to another layer runs no model at all; switching heads off
    runs the model from the first layer with a head off, starting from the stream the kept pass had there (the
    layers before it are unchanged), and each set of switched-off heads is kept too. The patterns are images
    (``pattern_image_html``): as tables they cost the browser ~40 ms. With more than four heads (GPT-2's 12) they
    are drawn small, in a grid, without the tokens along their sides (``compact``): a layer of GPT-2 fits in
    two or three rows instead of twelve pictures one above the other.

    When that run is long (a pass with every head on costs more than ``SPLIT_ABOVE`` multiply-adds, ``pass_cost``:
    GPT-2 Small's shapes on a text of 9 tokens or more, never the series' small models or the stand-in), a press on
    the page is answered in two steps (``helpers.widgets.later.TwoSteps``): at once the pattern greyed and the guesses
    marked as coming (``guesses=coming`` in the state), then, once the kernel has replied, the guesses and the loss
    without the head (the state as before, without ``guesses``).
    """

    KEPT = 8  # results kept, the oldest dropped first: sets of switched-off heads (over all texts) ...
    KEPT_TEXTS = 3  # ... and texts (every layer's patterns and streams: about 60 MB for 300 tokens of GPT-2)
    COMING = "guesses"  # a split redraw's first step says guesses=coming (later.TwoSteps)
    pass_cost = staticmethod(later.pass_cost)

    def __init__(self, model: Transformer, tokenizer: Tokenizer,
                 text: str = "and god said , let there be light : and there was light .", layer: int = 0,
                 top: int = 5, compact: bool | None = None, means: dict | None = None):
        _needs_attention(model)
        self.model, self.tok, self.top = model, tokenizer, top
        self.means = means
        if means is not None:  # every head's mean, pooled over positions (a typed text can be any length)
            given_means(means, [("head", L, h) for L in range(model.cfg.n_layers) for h in range(model.cfg.n_heads)],
                        None, None)
            if any(means["head", L, h].dim() != 1 for L in range(model.cfg.n_layers) for h in range(model.cfg.n_heads)):
                raise ValueError("the heads explorer needs each head's mean pooled over positions (d_model,): the text "
                                 "you type can be any length (mean_activations with per_position=False)")
        self.compact = model.cfg.n_heads > 4 if compact is None else bool(compact)
        self.off: set[tuple[int, int]] = set()  # (layer, head) pairs switched off
        self._runs: dict[tuple, dict] = {}  # token ids -> patterns, stream states, guesses with every head on
        self._without: dict[tuple, tuple] = {}  # (token ids, switched-off heads) -> guesses without them
        self.text = text_box("text", text)
        self.layer = choice("layer", range(model.cfg.n_layers), layer)
        # pressed = on (the caption and the greyed pattern say which are off); a fixed label keeps a press cheap
        self.switches = [W.ToggleButton(value=True, description=f"head {h}", tooltip=f"switch head {h} on or off",
                                        layout=W.Layout(width="6em")) for h in range(model.cfg.n_heads)]
        self._syncing = False
        for h, sw in enumerate(self.switches):
            sw.observe(lambda change, h=h: self._switch(h, change["new"]), names="value")
        self.layer.observe(self._show_layer_switches, names="value")
        super().__init__([self.text, self.layer, *self.switches])

    def _switch(self, h: int, on: bool) -> None:
        if not self._syncing:
            (self.off.discard if on else self.off.add)((self.layer.value, h))

    def _show_layer_switches(self, change) -> None:
        """Set the buttons to the new layer's switches without counting that as a learner's change."""
        self._syncing = True
        try:
            for h, sw in enumerate(self.switches):
                sw.value = (change["new"], h) not in self.off
        finally:
            self._syncing = False

    def update(self, *args):
        if self._syncing:  # one redraw per learner change, not one per button the layer change sets
            return
        super().update(*args)  # (later.TwoSteps: a long run pressed on the page is answered in two steps)

    def _off(self, heads: list[tuple[int, int]]):
        """The heads switched off: zeroed, or set to their means when the explorer was given them."""
        if self.means is None:
            return ablated(self.model, heads=heads)
        return ablated(self.model, heads=heads, how="mean", means=self.means)

    def _how_off(self) -> str:
        return "output o<sup>h</sup> = 0" if self.means is None else "output o<sup>h</sup> = its mean"

    def _head_label(self, layer: int, h: int) -> str:
        return f"layer {layer}, head {h}" + (" (switched off)" if (layer, h) in self.off else "")

    def _model_state(self) -> tuple:
        """The model's state as ``kept.model_state`` reads it: a weight changed in place, a mask switched or an
        intervention attached changes it, and results kept from before are then not used."""
        return kept.model_state(self.model)

    def _guesses(self, logits: torch.Tensor, ids: torch.Tensor, off=()) -> tuple[torch.Tensor, torch.Tensor | None]:
        """logits (n_vocab, n) -> p after the last token (n_vocab,), and the mean loss on the text's next tokens
        (None for one token). With every causal mask on, column i guesses token i + 1 from tokens 0 ... i only, so the
        columns 0 ... n - 2 of the same pass are the text's loss (``per_position_loss``, which runs the first n - 1
        tokens); with a mask off a column sees its own answer, so the loss is computed the long way."""
        p = softmax(logits[:, -1])
        if len(ids) < 2:
            return p, None
        if not all(b.attn.masked for b in self.model.blocks):
            with self._off(list(off)) if off else contextlib.nullcontext():
                return p, per_position_loss(self.model, ids).mean()
        logp = torch.log_softmax(logits[:, :-1], dim=0)  # (n_vocab, n - 1)
        return p, -logp.gather(0, ids[None, 1:]).mean()

    @torch.no_grad()
    def _all_on(self, ids: torch.Tensor) -> dict:
        """One forward pass with every head on: every layer's patterns, the stream entering every block, guesses."""
        key = (self._model_state(), tuple(ids.tolist()))
        if key in self._runs:
            return self._runs[key]
        model = self.model
        into = [model.stream_into(layer) for layer in range(model.cfg.n_layers)]
        A = [names.key(layer, "A") for layer in range(model.cfg.n_layers)]
        acts = model.activations(ids, A + into + [names.LOGITS])
        run = {"A": [acts[k] for k in A], "into": [acts[k] for k in into], "key": key}
        run["p"], run["loss"] = self._guesses(acts[names.LOGITS], ids)
        return kept.keep(self._runs, key, run, self.KEPT_TEXTS)

    @torch.no_grad()
    def _switched_off(self, ids: torch.Tensor, run: dict, off: list[tuple[int, int]]):
        """The guesses with the heads ``off`` zeroed: the model run from the first layer with a head off, on the
        stream the every-head-on pass had there. ``run`` is _all_on's answer of this redraw, so its key holds the
        model's state as it is (not read a second time)."""
        key = (*run["key"], tuple(off))
        if key not in self._without:
            first = min(layer for layer, _ in off)
            with self._off(off):
                logits = self.model.run_from(first, run["into"][first][None])[0]  # (n_vocab, n)
            kept.keep(self._without, key, self._guesses(logits, ids, off), self.KEPT)
        return self._without[key]

    def _patterns(self, A: torch.Tensor, tokens: list[str], L: int, run: dict) -> str:
        n = len(tokens)
        future = torch.ones(n, n, dtype=torch.bool).triu(1)
        cell = max(2, min(14, 120 // n)) if self.compact else 14
        drawn = run.setdefault("drawn", {})  # (layer, head, off) -> its picture: a layer seen before is not redrawn

        def one(h: int) -> str:
            off = (L, h) in self.off
            if (L, h, off) not in drawn:
                image = pattern_image_html(A[h], tokens, masked=future, cell=cell, label=self._head_label(L, h),
                                           labels=not self.compact)
                drawn[L, h, off] = (f'<div style="{"opacity:0.35" if off else ""}"><div style="font:12px sans-serif;'
                                    f'text-align:center"><b>head {h}</b>{" (off)" if off else ""}</div>{image}</div>')
            return drawn[L, h, off]
        gap = 10 if self.compact else 16
        return f'<div style="display:flex;flex-wrap:wrap;gap:{gap}px">{"".join(one(h) for h in range(len(A)))}</div>'

    def render(self):
        prompt = prepare_prompt(self.text.value, self.tok, self.model.cfg.n_ctx)
        L, n = self.layer.value, len(prompt.ids)
        run = self._all_on(prompt.ids)
        A = run["A"][L]  # (n_heads, n, n)
        off = sorted(self.off)
        p_all, loss_all = p_off, loss_off = run["p"], run["loss"]
        coming = (bool(off) and self.leave_for_later(self.pass_cost(self.model.cfg, n))
                  and (*run["key"], tuple(off)) not in self._without)
        if off and not coming:
            p_off, loss_off = self._switched_off(prompt.ids, run, off)
        vocab = self.tok.vocab
        best = int(p_all.argmax())
        which = ", ".join(f"layer {a} head {b}" for a, b in off)
        heads_off = f"{len(off)} head{'s' if len(off) != 1 else ''} off"
        without = (f'<div class="gt-coming" style="width:260px;font:12px sans-serif;color:{TEXT_MUTED}">'
                   f"<b>next token, {heads_off}</b><br>running the model without them&hellip;</div>" if coming else
                   svg.hbars(top_k(p_off, self.top, vocab), width=260,
                             title=f"next token, {heads_off}" if off else "next token, every head on",
                             color=svg.ORANGE if off else svg.BLUE))
        view = (self._patterns(A, prompt.tokens, L, run)
                + svg.row(svg.hbars(top_k(p_all, self.top, vocab), title="next token, every head on", width=260),
                          without))
        where = ("hover a pattern for its strongest weights; the tokens: " + _tokens_line(prompt.tokens)
                 if self.compact else "hover a query token for its largest weights")
        text = (f"Layer {L}: all {len(A)} heads on the same {n} tokens (row = query, column = key; {where}). ")
        if coming:
            text += (f"Switched off ({self._how_off()}): {which}. The model is running from layer "
                     f"{off[0][0]} on without {'it' if len(off) == 1 else 'them'}: the guesses and the loss follow.")
        elif off:
            text += (f"Switched off ({self._how_off()}): {which}. "
                     f"p(<code>{token_html(vocab[best])}</code>) after the last token: {float(p_all[best]):.2f} "
                     f"&rarr; {float(p_off[best]):.2f}; top guess "
                     f"<code>{token_html(vocab[int(p_off.argmax())])}</code>")
            if loss_all is not None:
                text += f"; loss on this text {float(loss_all):.2f} &rarr; {float(loss_off):.2f} nats/token"
            text += "."
        else:
            text += (f"Every head is on: the top guess after the last token is <code>{token_html(vocab[best])}</code> "
                     f"(p = {float(p_all[best]):.2f}). Switch a head off to see what it contributes.")
        state = {"layer": L, "n": n, "text": self.text.value} | {
            f"head{h}": "off" if (L, h) in self.off else "on" for h in range(len(A))} | {
            "off": ",".join(f"{a}:{b}" for a, b in off) or "none"}  # layer:head
        if coming:
            state["guesses"] = "coming"
        return text + _notice(prompt), state, view
