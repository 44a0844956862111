"""One map of the model: where each notebook's piece sits in a GPT-style Transformer.

The post builds its model piece by piece — tokens, the embedding that starts the residual stream, blocks of
attention and an MLP that read the stream and add to it, LayerNorm before each, the unembedding and softmax that
turn the last vector into next-token probabilities (its sections "A zero-layer Transformer", "Moving information
around", "The multilayer perceptron", "LayerNorm" and "Summing up"). This module draws that whole model once, as an
SVG, and each notebook opens with it, its own part marked.

    model_map_svg(parts)     the SVG string: ``parts`` (names in ``PARTS``) drawn marked, the rest plain
    map_text(parts, faint)   its text alternative: what is marked, what is missing, then the whole model in words
    show_map(notebook)       display the map of notebook "01" ... "11" in a cell, with its caption

Which parts each notebook marks, which its models lack and the caption under its map are in the notebook's manifest
(helpers/series/, the ``[model_map]`` table).

A marked part is told apart by more than colour: a thicker outline, bold text and a "this notebook" (or, on a small
box, "here") label; parts the notebook's models lack are drawn faint and dashed. The SVG carries ``role="img"``, a
``<title>`` (its name) and a ``<desc>`` (the text alternative, written in plain symbols a screen reader can say).
Drawn by hand (a few
boxes and arrows, no plotting library) so that the picture is text in the kernel's output, as every explorer's is.
"""

from __future__ import annotations

import html

from helpers import series
from helpers.plots.palette import BLUE, GREY, INK, MARK_FILL, MARK_STROKE, MARK_TEXT, PLAIN_FILL, WHITE

# part name -> what it is, in words for the text alternative
PARTS: dict[str, str] = {
    "tokens": "the tokens t1 to tn",
    "bigram": "notebook 01's bigram table, which goes from the last token straight to the next-token probabilities",
    "embed": "the embedding, x(0) = W_E t + W_pos",
    "stream": "the residual stream, one vector per token, which every block reads and adds to",
    "ln1": "the LayerNorm before attention",
    "attn": "attention (H heads, each with W_Q, W_K, W_V and W_O; their outputs are added to the stream)",
    "ln2": "the LayerNorm before the MLP",
    "mlp": "the MLP (W_1, ReLU, W_2; its output is added to the stream)",
    "layers": "the stack of blocks, each reading what earlier blocks wrote",
    "ln_final": "the final LayerNorm before the unembedding (GPT-2 and our full models have it; the post's table "
                "leaves it out)",
    "unembed": "the unembedding W_U, which gives one logit per vocabulary token",
    "probs": "the next-token probabilities (in a Transformer, softmax of each position's logits)",
}

WIDTH, HEIGHT = 904, 236
STREAM_Y = 160                      # the residual stream's line
PLAIN_STROKE = GREY                 # (colours: helpers.plots.palette; the marked label's text is 7:1 on white)
FAINT = 0.3                         # opacity of the parts this notebook's models do not have


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _check(parts) -> frozenset[str]:
    parts = frozenset(parts or ())
    unknown = sorted(parts - set(PARTS))
    if unknown:
        raise ValueError(f"no part of the model is called {', '.join(map(repr, unknown))}; "
                         f"the map's parts are {', '.join(PARTS)}")
    return parts


WHOLE = ("A GPT-style Transformer, read left to right. The tokens t1 to tn go into the embedding, "
         "x(0) = W_E t + W_pos, which starts the residual stream: one vector per token. A block reads the stream "
         "and adds to it twice: a LayerNorm, then attention with H heads, whose output is added to the stream; a "
         "LayerNorm, then the MLP, whose output is added to the stream. Blocks follow one another, n_layers of "
         "them. After the last block a final LayerNorm and the unembedding W_U give one logit per vocabulary "
         "token at every position, and softmax turns each position's logits into probabilities for the token "
         "after it.")


def map_text(parts=(), faint=()) -> str:
    """The map's text alternative: what is marked first (a screen reader hears it before the rest), what this
    notebook's models lack, then the whole model in words, in the post's order."""
    marked, absent = _check(parts), _check(faint)
    said = []
    if marked:
        said.append("Marked: " + "; ".join(PARTS[p] for p in PARTS if p in marked) + ".")
    if absent:
        said.append("Drawn faint, not in this notebook's models: "
                    + "; ".join(PARTS[p] for p in PARTS if p in absent) + ".")
    return " ".join(said + [WHOLE])


def _box(x, y, w, h, label, marked, faint, sub=None, note_above=False, note=True) -> str:
    fill, stroke, width, weight = ((MARK_FILL, MARK_STROKE, 3, "bold") if marked else
                                   (PLAIN_FILL, PLAIN_STROKE, 1, "normal"))
    dash = ' stroke-dasharray="4 3"' if faint else ""
    out = [f'<g opacity="{FAINT if faint else 1}"><rect x="{x}" y="{y}" width="{w}" height="{h}" rx="6" '
           f'fill="{fill}" stroke="{stroke}" stroke-width="{width}"{dash}/>']
    ty = y + h / 2 + (4 if sub is None else -3)
    out.append(f'<text x="{x + w / 2}" y="{ty}" text-anchor="middle" font-size="11" font-weight="{weight}" '
               f'fill="{INK}">{_e(label)}</text>')
    if sub is not None:
        out.append(f'<text x="{x + w / 2}" y="{y + h / 2 + 11}" text-anchor="middle" font-size="10" '
                   f'fill="{INK}">{_e(sub)}</text>')
    out.append("</g>")
    if marked and note:  # under the box, or above a small box whose arrow comes in from below
        ly = y - 5 if note_above else y + h + 13
        out.append(f'<text x="{x + w / 2}" y="{ly}" text-anchor="middle" font-size="10" font-weight="bold" '
                   f'fill="{MARK_TEXT}">{"this notebook" if w > 40 else "here"}</text>')
    return "".join(out)


def _arrow(x1, y1, x2, y2, uid, faint=False) -> str:
    return (f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{INK}" stroke-width="1.3" '
            f'opacity="{FAINT if faint else 1}" marker-end="url(#{uid}-head)"/>')


def model_map_svg(parts=(), faint=(), title: str = "Where this sits in the model", uid: str = "gt-map") -> str:
    """The map as an SVG string: ``parts`` marked, ``faint`` drawn faint (names in ``PARTS``; none: the plain
    map). ``uid`` prefixes its element ids: two maps on one page (two notebooks open in JupyterLab) must not
    share an id."""
    m, f = _check(parts), _check(faint)
    body = [f'<defs><marker id="{uid}-head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" '
            f'markerHeight="8" markerUnits="userSpaceOnUse" orient="auto-start-reverse">'
            f'<path d="M0,0 L10,5 L0,10 z" fill="{INK}"/></marker>'
            '</defs>',
            f'<text x="{WIDTH / 2}" y="16" text-anchor="middle" font-weight="bold" fill="{INK}">{_e(title)}</text>']
    # the residual stream: a wide band from the embedding to the final LayerNorm, x(0) -> x(1) -> x(2) per block
    on = "stream" in m
    body.append(f'<g opacity="{FAINT if "stream" in f else 1}">'
                f'<line x1="202" y1="{STREAM_Y}" x2="682" y2="{STREAM_Y}" stroke="{MARK_STROKE if on else BLUE}" '
                f'stroke-width="{7 if on else 5}" stroke-opacity="0.6" marker-end="url(#{uid}-head)"/>'
                f'<text x="208" y="{STREAM_Y - 7}" font-size="10" fill="{INK}">x⁽⁰⁾</text></g>')
    if "bigram" not in m:
        steps = ("x⁽⁰⁾, read directly by the unembedding (no block yet)" if "layers" in f else
                 "x⁽⁰⁾, then x⁽¹⁾ and x⁽²⁾ after each block’s two adds")
        body.append(f'<text x="441" y="{STREAM_Y + 62}" text-anchor="middle" font-size="11" '
                    f'fill="{MARK_TEXT if on else INK}" font-weight="{"bold" if on else "normal"}">'
                    f'{"this notebook: " if on else ""}the residual stream (the wide line), one vector per token: '
                    f'{steps}</text>')
    else:  # notebook 01: a table from the last token straight to the probabilities, under everything
        body.append(f'<polyline points="56,{STREAM_Y + 22} 56,{STREAM_Y + 50} 858,{STREAM_Y + 50} '
                    f'858,{STREAM_Y + 26}" fill="none" stroke="{MARK_STROKE}" stroke-width="3" '
                    f'stroke-dasharray="8 4" marker-end="url(#{uid}-head)"/>'
                    f'<text x="457" y="{STREAM_Y + 66}" text-anchor="middle" font-size="11" font-weight="bold" '
                    f'fill="{MARK_TEXT}">this notebook: the bigram table P(next token | last token)</text>')
    # the two ends
    table = "bigram" in m                # notebook 01: the table's own label says "this notebook"
    body.append(_box(10, STREAM_Y - 22, 92, 44, "tokens t₁ … tₙ", "tokens" in m, "tokens" in f, note=not table))
    body.append(_arrow(102, STREAM_Y, 116, STREAM_Y, uid, "embed" in f))
    body.append(_box(118, STREAM_Y - 22, 84, 44, "embedding", "embed" in m, "embed" in f, "W_E t + W_pos"))
    body.append(_box(684, STREAM_Y - 18, 30, 36, "LN", "ln_final" in m, "ln_final" in f, note_above=True))
    body.append(_arrow(714, STREAM_Y, 724, STREAM_Y, uid, "unembed" in f))
    body.append(_box(726, STREAM_Y - 22, 84, 44, "unembedding", "unembed" in m, "unembed" in f,
                     "W_U x" if "ln_final" in f else "W_U LN(x)"))
    body.append(_arrow(810, STREAM_Y, 820, STREAM_Y, uid, "unembed" in f))
    body.append(_box(822, STREAM_Y - 22, 76, 44, "P(next)", "probs" in m, "probs" in f,
                     "from the table" if table else "softmax", note=not table))
    # one block: LN -> attention -> add, LN -> MLP -> add; a dashed frame, repeated n_layers times
    lay = "layers" in m
    body.append(f'<g opacity="{FAINT if "layers" in f else 1}"><rect x="218" y="28" width="446" '
                f'height="{STREAM_Y + 2}" rx="10" fill="none" stroke="{MARK_STROKE if lay else GREY}" '
                f'stroke-width="{3 if lay else 1.2}" stroke-dasharray="6 4"/>'
                f'<text x="654" y="44" text-anchor="end" font-size="11" font-weight="{"bold" if lay else "normal"}" '
                f'fill="{MARK_TEXT if lay else INK}">{"this notebook: " if lay else ""}one block, repeated '
                f'n_layers times</text></g>')
    for x_ln, x_sub, w_sub, x_add, key_ln, key, label, sub, adds, x_new in (
            (232, 274, 150, 442, "ln1", "attn", "attention", "H heads: W_Q W_K W_V W_O", "adds Σₕ oʰ", "x⁽¹⁾"),
            (458, 500, 114, 640, "ln2", "mlp", "MLP", "W_1 → ReLU → W_2", "adds m", "x⁽²⁾")):
        ln_faint, sub_faint = key_ln in f, key in f
        body.append(f'<polyline points="{x_ln + 15},{STREAM_Y - 4} {x_ln + 15},{98}" fill="none" stroke="{INK}" '
                    f'stroke-width="1.3" opacity="{FAINT if sub_faint else 1}" marker-end="url(#{uid}-head)"/>')
        body.append(_box(x_ln, 62, 30, 36, "LN", key_ln in m, ln_faint, note_above=True))
        body.append(_arrow(x_ln + 30, 80, x_sub - 2, 80, uid, sub_faint))
        body.append(_box(x_sub, 58, w_sub, 44, label, key in m, sub_faint, sub))
        body.append(f'<g opacity="{FAINT if sub_faint else 1}"><polyline points="{x_sub + w_sub},80 {x_add},80 '
                    f'{x_add},{STREAM_Y - 10}" fill="none" stroke="{INK}" stroke-width="1.3" '
                    f'marker-end="url(#{uid}-head)"/>'
                    f'<circle cx="{x_add}" cy="{STREAM_Y}" r="8" fill="{WHITE}" stroke="{INK}" stroke-width="1.3"/>'
                    f'<text x="{x_add}" y="{STREAM_Y + 4}" text-anchor="middle" font-size="13" fill="{INK}">+</text>'
                    f'<text x="{x_add + 11}" y="{STREAM_Y - 7}" font-size="10" fill="{INK}">{x_new}</text>'
                    f'<text x="{x_add - 12}" y="{STREAM_Y + 22}" text-anchor="end" font-size="10" fill="{INK}">'
                    f'reads {"x" if ln_faint else "LN(x)"}, {_e(adds)}</text></g>')
    desc = map_text(m, f)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
            f'height="{HEIGHT}" role="img" aria-labelledby="{uid}-title" aria-describedby="{uid}-desc" '
            f'style="font-family:sans-serif;font-size:12px;background:{WHITE};max-width:100%;height:auto">'
            f'<title id="{uid}-title">{_e(title)}</title><desc id="{uid}-desc">{_e(desc)}</desc>'
            + "".join(body) + "</svg>")


class ModelMap:
    """One notebook's map as a display object: HTML (the picture, its caption) where a notebook shows HTML, and
    the caption with the text alternative where only text is shown (a terminal, nbconvert to text)."""

    def __init__(self, notebook: str):
        key = str(notebook).zfill(2)
        entry = next((nb for nb in series.notebooks() if nb.number == key), None)
        if entry is None:
            raise ValueError(f"no notebook {notebook!r} in the map; the series' notebooks are "
                             f"{', '.join(nb.number for nb in series.notebooks())}")
        self.notebook = key
        self.parts, self.faint, self.caption = entry.map_marked, entry.map_faint, entry.map_caption

    def svg(self) -> str:
        return model_map_svg(self.parts, self.faint, title=f"Where notebook {self.notebook} sits in the model",
                             uid=f"gt-map-{self.notebook}")

    def _repr_html_(self) -> str:
        faint = " Faint parts: not in this notebook's models." if self.faint else ""
        return (f'<figure style="margin:0">{self.svg()}<figcaption style="font-family:sans-serif;font-size:13px">'
                f'{_e(self.caption)} (Marked parts are drawn thick and bold and say "this notebook".{faint})'
                "</figcaption>"
                "</figure>")

    def __repr__(self) -> str:
        return f"{self.caption}\n{map_text(self.parts, self.faint)}"


def map_html(notebook: str) -> str:
    """The map of one notebook ("01" ... "11") with its caption, as an HTML figure."""
    return ModelMap(notebook)._repr_html_()


def show_map(notebook: str) -> None:
    """Display the map of ``notebook`` ("01" ... "11") in the cell's output."""
    from IPython.display import display

    display(ModelMap(notebook))


# python -m helpers.plots.model_map docs/model_map.svg: writes the plain map the README shows
if __name__ == "__main__":
    import sys

    with open(sys.argv[1], "w", encoding="utf-8") as out:
        out.write(model_map_svg(title="A GPT-style Transformer, end to end") + "\n")
