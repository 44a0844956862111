"""The pattern every explorer follows.

* Controls (sliders, dropdowns, text boxes, toggles) whose changes call ``render``.
* One persistent matplotlib ``Figure`` drawn into an ``ipywidgets.Image`` as PNG. Reusing one
  figure and pushing bytes is about twice as fast as ``interact`` building a new figure per change
  (DESIGN.md section 7), and it leaves exactly one output in the cell.
* A caption (``ipywidgets.HTML``) that says in words what is drawn. Its element carries
  ``class="gt-caption"`` and ``data-state="key=value;..."`` naming the current control values, so
  a browser test can check that the *right* picture was drawn, not just that pixels changed.
* Bad input (empty text, unknown words, too long a prompt) never raises: the caption shows the
  problem in the post's terms with ``class="gt-caption gt-error"``, and the learner's text stays in
  its box.
"""

from __future__ import annotations

import html
import io
import ipywidgets as W
from matplotlib.figure import Figure  # not pyplot: nothing is shown twice, no global state

# Errors a learner can cause by typing; anything else is a bug and should surface.
LEARNER_ERRORS = (ValueError, KeyError, IndexError, TypeError)


def figure_png(fig: Figure, dpi: int = 80) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def state_string(state: dict) -> str:
    """``{"n": 3, "T": 1.0}`` -> ``"n=3;T=1.0"``: stable, readable, easy to match in a test."""
    return ";".join(f"{k}={v}" for k, v in state.items())


class Explorer:
    """Base class: subclasses build ``self.controls`` and implement ``draw(fig) -> (caption, state)``."""

    figsize = (8, 3.2)
    dpi = 80

    def __init__(self, controls: list[W.Widget]):
        self.controls = controls
        self.fig = Figure(figsize=self.figsize, layout="constrained")
        # natural size: without a width JupyterLab stretches the PNG to the page (blurry, huge fonts)
        self.image = W.Image(format="png", layout=W.Layout(width=f"{int(self.figsize[0] * self.dpi)}px"))
        self.caption = W.HTML()
        self.last_state: dict = {}
        self.last_error: str = ""
        for c in controls:
            c.observe(self.update, names="value")
        self.box = W.VBox([W.HBox(controls, layout=W.Layout(flex_flow="row wrap")), self.caption, self.image])
        self.update()

    def draw(self, fig: Figure) -> tuple[str, dict]:  # pragma: no cover - abstract
        raise NotImplementedError

    def update(self, *_):
        """Redraw from the current control values (called on every change)."""
        self.fig.clear()
        try:
            text, state = self.draw(self.fig)
        except LEARNER_ERRORS as e:
            self.last_error = str(e)
            self.last_state = {"error": type(e).__name__}
            self.caption.value = (f'<div class="gt-caption gt-error" data-state="error" '
                                  f'style="color:#b00020">&#9888; {html.escape(str(e))}</div>')
            self.image.value = figure_png(self.fig, self.dpi)  # blank: no stale picture
            return
        self.last_error = ""
        self.last_state = state
        self.caption.value = (f'<div class="gt-caption" data-state="{html.escape(state_string(state))}">'
                              f"{text}</div>")
        self.image.value = figure_png(self.fig, self.dpi)

    def _repr_mimebundle_(self, **kwargs):
        return self.box._repr_mimebundle_(**kwargs)


def text_box(description: str, value: str, width: str = "28em") -> W.Text:
    """A text box that redraws as the learner types (continuous_update=False would wait for Enter,
    which learners miss)."""
    return W.Text(value=value, description=description, continuous_update=True,
                  layout=W.Layout(width=width))
