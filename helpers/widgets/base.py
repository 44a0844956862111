"""The pattern every explorer follows (HTML/SVG drawn in the kernel; helpers.plots.svg says why).

* Controls whose changes call ``update``: sliders (arrow keys), ``choice`` buttons (Tab to a button,
  Space), check boxes and toggles (Space), text boxes (typing). No dropdowns: in JupyterLab a focused
  ``<select>`` never sees ArrowDown or letters, because the notebook's command-mode shortcuts take
  them (a ``<select>`` is not ``:read-write``), so a learner without a mouse could not change it.
* A caption (``ipywidgets.HTML``) that says in words what is drawn: the picture's text alternative.
  Its element carries ``class="gt-caption"`` and ``data-state="key=value;..."`` naming the current
  control values, so a browser test can check that the *right* picture was drawn, and an ``id``
  (``gt-caption-`` and the caption widget's model id: one per explorer, the same on every redraw).
* The picture: HTML / inline SVG built in the kernel (``helpers.plots.svg``, ``helpers.plots.attention``)
  inside ``<div class="gt-view" data-state="..." role="figure" aria-describedby="<the caption's id>">``
  with the caption's state, so a test can check the picture shown belongs to the value shown, and a
  screen reader on the picture hears its caption (ipywidgets cannot put ARIA on a widget's own element;
  an HTML widget's value can carry it: ``helpers.widgets.a11y`` says more). A string costs about a
  millisecond to build where a matplotlib PNG cost 150-500 ms (measured on 2 cores; ``bash run.sh bench``
  prints every control).
* Every control has a name a screen reader says: a description on each (``SliderNames`` puts it on the
  slider handles and the editable readouts that ipywidgets leaves unnamed).
* Every update is synchronous and the kernel handles the front-end's changes in order, so however fast
  a learner types or holds an arrow key, the last value is drawn last: no stale picture.
* A change that leaves the picture as it was says so in the caption (and why, where the explorer knows).
* Bad input (empty text, unknown words, too long a prompt) never raises: the caption shows the
  problem in the post's terms with ``class="gt-caption gt-error"``, the picture is cleared (no stale
  picture), and the learner's text stays in its box.
"""

from __future__ import annotations

import html
import time

import ipywidgets as W

from helpers.plots.palette import TEXT_ERROR, TEXT_MUTED
from helpers.widgets.a11y import SliderNames, mark_readouts

# Errors a learner can cause by typing; anything else is a bug and should surface.
LEARNER_ERRORS = (ValueError, KeyError, IndexError, TypeError)


def state_string(state: dict) -> str:
    """``{"n": 3, "T": 1.0}`` -> ``"n=3;T=1.0"``: stable, readable, easy to match in a test."""
    return ";".join(f"{k}={v}" for k, v in state.items())


def chosen(slider: W.Widget) -> float:
    """The value a person chose on a float slider, without the float noise the browser adds
    (3.500000000000007 -> 3.5, 3.55e-15 -> 0.0): rounded to the slider's step, and a log slider's
    value to the 3 significant digits its readout shows."""
    if isinstance(slider, W.FloatLogSlider):
        return float(f"{slider.value:.3g}")
    step = getattr(slider, "step", None)
    if not step:
        return slider.value
    decimals = max(0, len(f"{step:.10f}".rstrip("0").split(".")[1]))
    value = round(round(slider.value / step) * step, decimals)
    return 0.0 if value == 0 else value


def choice(description: str, options, value, width: str = "2.6em") -> W.ToggleButtons:
    """A row of buttons for a few options (heads, layers, things): every option visible, and each one
    reachable from the keyboard (Tab, then Space), unlike a dropdown in JupyterLab."""
    return W.ToggleButtons(options=list(options), value=value, description=description,
                           style={"button_width": width}, layout=W.Layout(width="auto"))


class Explorer:
    """Base class: subclasses build the controls and implement ``render() -> (caption_html, state, view_html)``."""

    stylesheet: str = ""  # CSS the pictures share, shown once in a widget that never changes (not per redraw)

    def __init__(self, controls: list[W.Widget]):
        self.controls = controls
        self.caption = W.HTML()
        self.view = W.HTML()
        self.last_state: dict = {}
        self.last_error: str = ""
        self._last_view: str | None = None
        self.seconds: list[float] = []  # how long each redraw took in the kernel (compute + HTML)
        # the caption's id, which the picture's aria-describedby names (helpers.widgets.a11y says why an id)
        self.caption_id = f"gt-caption-{self.caption.model_id}"
        for c in controls:
            c.observe(self.update, names="value")
        mark_readouts(controls)
        parts = [W.HBox(controls, layout=W.Layout(flex_flow="row wrap")), self.caption, self.view, SliderNames()]
        self.box = W.VBox(([W.HTML(self.stylesheet)] if self.stylesheet else []) + parts)
        self.box.add_class("gt-explorer")
        self.update()

    @property
    def _tie(self) -> str:
        """The picture's attributes that tie it to the caption: a figure that the caption describes."""
        return f' role="figure" aria-describedby="{self.caption_id}"'

    def render(self) -> tuple[str, dict, str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def why_unchanged(self, before: dict, after: dict) -> str:
        """Why a change left the picture as it was; explorers that know more say more."""
        changed = [k for k in after if before.get(k) != after[k]]
        return f"changing {' and '.join(changed) or 'this'} does not change what is drawn here"

    def update(self, *_):
        """Redraw from the current control values (called on every change)."""
        start = time.perf_counter()
        try:
            text, state, view = self.render()
        except LEARNER_ERRORS as e:
            self.last_error, self.last_state, self._last_view = str(e), {"error": type(e).__name__}, None
            self.caption.value = (f'<div class="gt-caption gt-error" data-state="error" id="{self.caption_id}" '
                                  f'style="color:{TEXT_ERROR}">&#9888; {html.escape(str(e))}</div>')
            self.view.value = f'<div class="gt-view" data-state="error"{self._tie}></div>'  # no stale picture
            return
        if view == self._last_view and self.last_state and state != self.last_state:
            text += (f'<br><small class="gt-same" style="color:{TEXT_MUTED}">The picture is the same as before: '
                     f"{html.escape(self.why_unchanged(self.last_state, state))}.</small>")
        self.last_error, self.last_state, self._last_view = "", state, view
        s = html.escape(state_string(state))
        self.caption.value = f'<div class="gt-caption" data-state="{s}" id="{self.caption_id}">{text}</div>'
        # contain: the page lays out only this picture on a redraw, not the whole notebook around it
        self.view.value = f'<div class="gt-view" data-state="{s}"{self._tie} style="contain:content">{view}</div>'
        self.seconds.append(time.perf_counter() - start)

    def _repr_mimebundle_(self, **kwargs):
        return self.box._repr_mimebundle_(**kwargs)


def text_box(description: str, value: str, width: str = "28em") -> W.Text:
    """A text box that redraws as the learner types (continuous_update=False would wait for Enter,
    which learners miss)."""
    return W.Text(value=value, description=description, continuous_update=True,
                  layout=W.Layout(width=width))
