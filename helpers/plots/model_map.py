"""One map of the model: where each notebook's piece sits in a GPT-style Transformer.

The post builds its model piece by piece — tokens, the embedding that starts the residual stream, blocks of
attention and an MLP that read the stream and add to it, LayerNorm before each, the unembedding and softmax that
turn the last vector into next-token probabilities (its sections "A zero-layer Transformer", "Moving information
around", "The multilayer perceptron", "LayerNorm" and "Summing up"). This module draws that whole model once, as an
SVG, and each notebook opens with it, its own part marked.

    model_map_svg(parts)     the SVG string: ``parts`` (names in ``PARTS``) drawn marked, the rest plain
    map_text(parts)          its text alternative: the whole model in words, then what is marked
    NOTEBOOK_PARTS           notebook number -> (parts marked, one sentence: what the notebook shows of them)
    show_map(notebook)       display the map of notebook "01" ... "10" in a cell, with its caption

A marked part is told apart by more than colour: a thicker outline, bold text and a "this notebook" label under
it; the SVG carries ``role="img"``, a ``<title>`` and a ``<desc>`` (the text alternative). Drawn by hand (a few
boxes and arrows, no plotting library) so that the picture is text in the kernel's output, as every explorer's is.
"""

from __future__ import annotations

import html

from helpers.plots.svg import BLUE, GREY, ORANGE

# part name -> (label in the picture, what it is, in words for the text alternative)
PARTS: dict[str, tuple[str, str]] = {
    "tokens": ("tokens t₁ … tₙ", "the tokens t₁ to tₙ"),
    "embed": ("embedding", "the embedding, x⁽⁰⁾ = W_E t + W_pos"),
    "stream": ("residual stream", "the residual stream that carries one vector per token from block to block"),
    "ln1": ("LN", "the LayerNorm before attention"),
    "attn": ("attention", "attention: H heads, each with W_Q, W_K, W_V and W_O, their outputs added to the stream"),
    "ln2": ("LN", "the LayerNorm before the MLP"),
    "mlp": ("MLP", "the MLP: W_1, ReLU, W_2, its output added to the stream"),
    "layers": ("× n_layers", "the stack of n_layers blocks, each reading what earlier blocks wrote"),
    "ln_final": ("LN", "the final LayerNorm"),
    "unembed": ("unembedding", "the unembedding W_U, which gives one logit per vocabulary token"),
    "probs": ("softmax → P(next)", "softmax, which turns the logits into next-token probabilities"),
}
LAYERNORMS = ("ln1", "ln2", "ln_final")

# notebook -> (parts marked, what the notebook shows of them)
NOTEBOOK_PARTS: dict[str, tuple[tuple[str, ...], str]] = {
    "01": (("tokens", "probs"),
           "Notebook 01 has no model in between yet: a bigram table goes from the last token straight to the "
           "next-token probabilities."),
    "02": (("tokens", "embed", "stream", "unembed", "probs"),
           "Notebook 02 builds the two ends: the embedding starts the residual stream and the unembedding reads "
           "it, with no block in between (a zero-layer Transformer)."),
    "03": (("attn",),
           "Notebook 03 opens the attention sub-layer for one query: the last token's."),
    "04": (("attn",),
           "Notebook 04 gives every token a query: the whole attention matrix, with the causal mask."),
    "05": (("attn",),
           "Notebook 05 splits attention into several heads whose outputs are added."),
    "06": (("mlp",),
           "Notebook 06 opens the MLP, which works on each token's vector alone."),
    "07": (LAYERNORMS,
           "Notebook 07 opens LayerNorm, before attention, before the MLP and before the unembedding."),
    "08": (tuple(PARTS),
           "Notebook 08 puts every piece together and measures what each one buys."),
    "09": (("attn", "layers"),
           "Notebook 09 stacks two layers of attention: a head in the second layer reads what a head in the "
           "first wrote (induction heads)."),
    "10": (("embed", "stream", "attn", "unembed"),
           "Notebook 10 reads attention heads as circuits from the embedding, through the residual stream, to "
           "the unembedding."),
}

WIDTH, HEIGHT = 904, 222
STREAM_Y = 160                      # the residual stream's line
MARK_FILL, MARK_STROKE = "#fee0b6", ORANGE
PLAIN_FILL, PLAIN_STROKE = "#f4f4f4", GREY
INK = "#222"


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _check(parts) -> frozenset[str]:
    parts = frozenset(parts or ())
    unknown = sorted(parts - set(PARTS))
    if unknown:
        raise ValueError(f"no part of the model is called {', '.join(map(repr, unknown))}; "
                         f"the map's parts are {', '.join(PARTS)}")
    return parts


def map_text(parts=()) -> str:
    """The map's text alternative: the model in words, in the post's order, then which parts are marked."""
    marked = _check(parts)
    whole = ("A map of a GPT-style Transformer, read left to right. The tokens t₁ to tₙ go into the embedding, "
             "x⁽⁰⁾ = W_E t + W_pos, which starts the residual stream: one vector per token. A block reads the "
             "stream and adds to it twice: a LayerNorm, then attention (H heads) added to the stream; a LayerNorm, "
             "then the MLP added to the stream. n_layers blocks follow one another. After the last block a final "
             "LayerNorm and the unembedding W_U give one logit per vocabulary token, and softmax turns the last "
             "token's logits into the probabilities of the next token.")
    if not marked:
        return whole
    if marked == set(PARTS):
        return whole + " Marked: every part."
    names = [PARTS[p][1] for p in PARTS if p in marked]
    return whole + " Marked: " + "; ".join(names) + "."


def _box(x, y, w, h, label, marked, sub=None) -> str:
    fill, stroke, width, weight = ((MARK_FILL, MARK_STROKE, 3, "bold") if marked else
                                   (PLAIN_FILL, PLAIN_STROKE, 1, "normal"))
    out = [f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="6" fill="{fill}" stroke="{stroke}" '
           f'stroke-width="{width}"/>']
    ty = y + h / 2 + (4 if sub is None else -3)
    out.append(f'<text x="{x + w / 2}" y="{ty}" text-anchor="middle" font-weight="{weight}" fill="{INK}">'
               f'{_e(label)}</text>')
    if sub is not None:
        out.append(f'<text x="{x + w / 2}" y="{y + h / 2 + 11}" text-anchor="middle" font-size="10" '
                   f'fill="{INK}">{_e(sub)}</text>')
    if marked:
        out.append(f'<text x="{x + w / 2}" y="{y + h + 13}" text-anchor="middle" font-size="10" '
                   f'font-weight="bold" fill="{MARK_STROKE}">this notebook</text>')
    return "".join(out)


def _arrow(x1, y1, x2, y2, uid, color=INK, width=1.3) -> str:
    return (f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{color}" stroke-width="{width}" '
            f'marker-end="url(#{uid}-head)"/>')


def _add(x) -> str:
    """The ⊕ where a sub-layer's output is added to the stream."""
    return (f'<circle cx="{x}" cy="{STREAM_Y}" r="8" fill="#fff" stroke="{INK}" stroke-width="1.3"/>'
            f'<text x="{x}" y="{STREAM_Y + 4}" text-anchor="middle" font-size="13" fill="{INK}">+</text>')


def model_map_svg(parts=(), title: str = "Where this sits in the model", uid: str = "gt-map") -> str:
    """The map as an SVG string, ``parts`` marked (names in ``PARTS``; none: the plain map). ``uid`` prefixes
    its element ids: two maps on one page (two notebooks open in JupyterLab) must not share an id."""
    m = _check(parts)
    body = [f'<defs><marker id="{uid}-head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
            'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#222"/></marker></defs>',
            f'<text x="{WIDTH / 2}" y="16" text-anchor="middle" font-weight="bold" fill="{INK}">{_e(title)}</text>']
    # the residual stream: a wide band from the embedding to the final LayerNorm
    on = "stream" in m
    body.append(f'<line x1="202" y1="{STREAM_Y}" x2="682" y2="{STREAM_Y}" stroke="{MARK_STROKE if on else BLUE}" '
                f'stroke-width="{7 if on else 5}" stroke-opacity="0.55"/>')
    body.append(f'<text x="441" y="{STREAM_Y + 50}" text-anchor="middle" font-size="11" fill="{INK}" '
                f'font-weight="{"bold" if on else "normal"}">residual stream (the wide line): one vector per token, '
                f'x⁽⁰⁾ → x⁽¹⁾ → … → x⁽ᴸ⁾{" — this notebook" if on else ""}</text>')
    # the two ends
    body.append(_box(10, STREAM_Y - 22, 92, 44, PARTS["tokens"][0], "tokens" in m))
    body.append(_arrow(102, STREAM_Y, 116, STREAM_Y, uid))
    body.append(_box(118, STREAM_Y - 22, 84, 44, "embedding", "embed" in m, "W_E t + W_pos"))
    body.append(_box(684, STREAM_Y - 18, 30, 36, "LN", "ln_final" in m))
    body.append(_arrow(714, STREAM_Y, 724, STREAM_Y, uid))
    body.append(_box(726, STREAM_Y - 22, 80, 44, "unembedding", "unembed" in m, "W_U x"))
    body.append(_arrow(806, STREAM_Y, 816, STREAM_Y, uid))
    body.append(_box(818, STREAM_Y - 22, 80, 44, "softmax", "probs" in m, "P(next token)"))
    # one block: LN -> attention -> add, LN -> MLP -> add; a dashed frame, repeated n_layers times
    lay = "layers" in m
    body.append(f'<rect x="218" y="28" width="446" height="{STREAM_Y + 2}" rx="10" fill="none" '
                f'stroke="{MARK_STROKE if lay else GREY}" stroke-width="{3 if lay else 1.2}" stroke-dasharray="6 4"/>')
    body.append(f'<text x="654" y="44" text-anchor="end" font-size="11" font-weight="{"bold" if lay else "normal"}" '
                f'fill="{INK}">one block, repeated n_layers times{" — this notebook" if lay else ""}</text>')
    for x_ln, x_sub, w_sub, x_add, key_ln, key, label, sub, adds in (
            (232, 274, 150, 442, "ln1", "attn", "attention", "H heads: W_Q W_K W_V W_O", "adds Σₕ oʰ"),
            (458, 500, 114, 640, "ln2", "mlp", "MLP", "W_1 → ReLU → W_2", "adds m")):
        body.append(f'<polyline points="{x_ln + 15},{STREAM_Y - 4} {x_ln + 15},{98}" fill="none" stroke="{INK}" '
                    f'stroke-width="1.3" marker-end="url(#{uid}-head)"/>')
        body.append(_box(x_ln, 62, 30, 36, "LN", key_ln in m))
        body.append(_arrow(x_ln + 30, 80, x_sub - 2, 80, uid))
        body.append(_box(x_sub, 58, w_sub, 44, label, key in m, sub))
        body.append(f'<polyline points="{x_sub + w_sub},80 {x_add},80 {x_add},{STREAM_Y - 10}" fill="none" '
                    f'stroke="{INK}" stroke-width="1.3" marker-end="url(#{uid}-head)"/>')
        body.append(_add(x_add))
        body.append(f'<text x="{x_add - 14}" y="{STREAM_Y + 24}" text-anchor="end" font-size="10" fill="{INK}">'
                    f'reads x, {_e(adds)}</text>')
    desc = map_text(m)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
            f'height="{HEIGHT}" role="img" aria-labelledby="{uid}-title {uid}-desc" '
            f'style="font-family:sans-serif;font-size:12px;background:#fff;max-width:100%;height:auto">'
            f'<title id="{uid}-title">{_e(title)}</title><desc id="{uid}-desc">{_e(desc)}</desc>'
            + "".join(body) + "</svg>")


def map_html(notebook: str) -> str:
    """The map of one notebook ("01" ... "10") with its caption, as an HTML figure."""
    key = str(notebook).zfill(2)
    if key not in NOTEBOOK_PARTS:
        raise ValueError(f"no notebook {notebook!r} in the map; the series' notebooks are "
                         f"{', '.join(NOTEBOOK_PARTS)}")
    parts, caption = NOTEBOOK_PARTS[key]
    svg = model_map_svg(parts, title=f"Where notebook {key} sits in the model", uid=f"gt-map-{key}")
    return (f'<figure style="margin:0">{svg}<figcaption style="font-family:sans-serif;font-size:13px">'
            f'{_e(caption)} (The marked parts have a thick outline and say "this notebook".)</figcaption></figure>')


def show_map(notebook: str) -> None:
    """Display the map of ``notebook`` ("01" ... "10") in the cell's output."""
    from IPython.display import HTML, display

    display(HTML(map_html(notebook)))


# python -m helpers.plots.model_map docs/model_map.svg: writes the plain map the README shows
if __name__ == "__main__":
    import sys

    with open(sys.argv[1], "w", encoding="utf-8") as out:
        out.write(model_map_svg(title="A GPT-style Transformer, end to end") + "\n")
