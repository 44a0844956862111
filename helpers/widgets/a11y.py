"""What a screen reader needs from the explorers that ipywidgets 8.1 does not give, and how they get it.

Slider handles. An ipywidgets slider is a noUiSlider: its handle has role="slider" and its value (aria-valuenow), but no
accessible name, because its description is a separate <label> that points at nothing (for a <div> it cannot). A screen
reader says "slider, 3" and never which one; axe-core reports it as a serious violation (aria-input-field-name). A
SelectionSlider's handle says its index where the learner sees a word. No option of ipywidgets reaches the handle.

Slider readouts. The value beside a slider is a ``contenteditable`` <div>: a Tab stop with no role and no name, where a
screen reader says only "3" (or nothing). On an Int, Float or FloatLog slider it is a real input (type a value, Enter:
ipywidgets sets the slider to it), worth keeping for the keyboard: one typed number instead of dozens of arrow presses
(P = -30 in notebook 04 is 60 steps away). So it stays editable and becomes a named text box: role="textbox",
``aria-label`` "<description> value" and a tooltip (its description for a screen reader) that says to type a value and
press Enter. A SelectionSlider's readout is editable too, but what is typed there changes nothing
(jupyter-widgets/ipywidgets#2976): a Tab stop that can only mislead. ``mark_readouts`` gives such sliders the class
``gt-fixed-readout`` in the kernel, and the front-end code makes their readout plain text (``contenteditable=false``,
out of the Tab order); the handle's ``aria-valuetext`` already says the word it shows, and the word stays visible.

ToggleButtons. A choice's buttons say "0", "1" with nothing to tell "layer 0" from "head 0", and which one is chosen is
a CSS class, not a state a screen reader reads.

Caption and picture. An explorer's caption says in words what its picture shows now; the picture must be tied to it,
as aria-describedby does, so that a screen reader on the picture hears it. ipywidgets has no way to put an ARIA
attribute on a widget's own element, but an ``ipywidgets.HTML`` widget's value is HTML the kernel writes, ids and ARIA
attributes included, and ids resolve across the page. So ``helpers.widgets.base.Explorer`` writes its caption as
``<div class="gt-caption" id="gt-caption-<the caption widget's model id>">`` and its picture as ``<div class="gt-view"
role="figure" aria-describedby="<that id>">``: unique per explorer, the same on every redraw. If the same explorer is
shown twice (JupyterLab's "Create New View for Cell Output"), its two copies would share that id and the second
picture would point at the first caption; the front-end code gives a copy whose caption is not the first in the page an
id of its own and points its picture at it.

``SliderNames`` is a widget without a picture whose front-end code (an ES module, run in the page by anywidget, the
well-kept library for a widget's own front end) does all of this in the explorer it sits in: gives every slider's
handle the description as ``aria-label`` and the readout the learner sees as ``aria-valuetext``, names or fixes its
readout, makes each ToggleButtons a group named by its description, gives every toggle button ``aria-pressed``, and
keeps each copy's caption id its own; again whenever the page redraws them. Every explorer carries one
(helpers.widgets.base.Explorer); the browser tests check the result with axe-core, the page's accessibility tree and a
keyboard walk (Tab through every explorer: every stop has a role and a name).
"""

from __future__ import annotations

import anywidget
import ipywidgets as W

ESM = """
const FIXED = 'gt-fixed-readout';   // a slider whose readout is not an input (helpers.widgets.a11y.mark_readouts)
let copies = 0;                      // views of SliderNames in this page, to give a second copy of an explorer its ids

function setAttr(el, name, value) {
  if (value && el.getAttribute(name) !== value) el.setAttribute(name, value);
}

function describe(widget) {
  const label = widget.querySelector(':scope > .widget-label');
  return label ? (label.textContent.trim() || label.getAttribute('title') || '') : '';
}

function nameControls(root, copy) {
  nameSliders(root);
  for (const group of root.querySelectorAll('.widget-toggle-buttons')) {   // a ToggleButtons choice
    setAttr(group, 'role', 'group');
    setAttr(group, 'aria-label', describe(group));
  }
  for (const button of root.querySelectorAll('button.widget-toggle-button, .widget-toggle-buttons button')) {
    setAttr(button, 'aria-pressed', button.classList.contains('mod-active') ? 'true' : 'false');
  }
  tieCaption(root, copy);
}

function nameSliders(root) {
  for (const slider of root.querySelectorAll('.widget-slider')) {
    const handle = slider.querySelector('[role="slider"]');
    if (!handle) continue;
    const name = describe(slider);
    setAttr(handle, 'aria-label', name);
    const readout = slider.querySelector('.widget-readout');
    setAttr(handle, 'aria-valuetext', readout ? readout.textContent.trim() : '');
    if (readout) nameReadout(readout, name, slider.classList.contains(FIXED));
  }
}

// The value beside a slider: ipywidgets makes it contenteditable, a Tab stop with no role or name. Where typing a
// value sets the slider (Int, Float, FloatLog), keep that route for the keyboard and name it as the text box it is;
// where it changes nothing (a SelectionSlider: ipywidgets#2976), make it plain text, out of the Tab order (the
// handle's aria-valuetext says the same word). ipywidgets sets contenteditable again on some updates: the observer
// below watches that attribute.
function nameReadout(readout, name, fixed) {
  if (fixed) {
    setAttr(readout, 'contenteditable', 'false');
    return;
  }
  if (readout.getAttribute('contenteditable') !== 'true') {   // a disabled slider: its readout is plain text again
    if (readout.getAttribute('role') === 'textbox') readout.removeAttribute('role');
    return;
  }
  setAttr(readout, 'role', 'textbox');
  setAttr(readout, 'aria-label', name ? `${name} value` : '');
  setAttr(readout, 'title', 'type a value, then press Enter');
}

// The picture is described by its caption (aria-describedby, ids written in the kernel: helpers.widgets.base). A
// second view of the same explorer has the same ids: if another element of the page came first with this caption's
// id, this copy's caption takes an id of its own, and its picture follows.
function tieCaption(root, copy) {
  const cap = root.querySelector('.gt-caption[id]');
  const view = root.querySelector('.gt-view[aria-describedby]');
  if (!cap || !view) return;
  if (document.getElementById(cap.id) !== cap) cap.id = `${cap.id.replace(/-copy[0-9]+$/, '')}-copy${copy}`;
  setAttr(view, 'aria-describedby', cap.id);
}

export default {
  render({ el }) {
    el.style.display = 'none';
    const copy = ++copies;
    // ipywidgets renders a box's children before it puts them in the box: wait until this one is in its
    // explorer (or the box `named` made), then name its controls now and whenever the page redraws them.
    let observer = null, stopped = false;
    const start = () => {
      if (stopped) return;
      const root = el.closest('.gt-explorer') || el.parentElement;
      if (!root) { setTimeout(start, 20); return; }
      observer = new MutationObserver(() => nameControls(root, copy));
      observer.observe(root, { subtree: true, childList: true, characterData: true, attributes: true,
                               attributeFilter: ['aria-valuenow', 'class', 'contenteditable'] });
      nameControls(root, copy);
    };
    start();
    return () => { stopped = true; if (observer) observer.disconnect(); };
  },
};
"""


class SliderNames(anywidget.AnyWidget):
    """Names the controls of the explorer it sits in and ties its picture to its caption (see the module's text)."""

    _esm = ESM


FIXED_READOUT = "gt-fixed-readout"   # the class of a slider whose readout is not an input (the module's text says why)


def mark_readouts(widgets) -> None:
    """Give every SelectionSlider among ``widgets`` (and inside their boxes) the class ``gt-fixed-readout``: its
    readout looks editable but typing there changes nothing (ipywidgets#2976), so the front-end code takes it out of
    the Tab order."""
    for w in widgets:
        if isinstance(w, (W.SelectionSlider, W.SelectionRangeSlider)) and FIXED_READOUT not in w._dom_classes:
            w.add_class(FIXED_READOUT)
        mark_readouts(getattr(w, "children", ()))


def named(*widgets: W.Widget) -> W.VBox:
    """A box of controls shown outside an Explorer, with the same names for screen readers as an explorer's.

    ``display(named(W.IntSlider(description="n")))`` instead of the bare slider, whose handle has no name."""
    mark_readouts(widgets)
    return W.VBox([*widgets, SliderNames()])
