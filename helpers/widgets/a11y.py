"""Names for the explorers' sliders: what a screen reader needs that ipywidgets 8.1 does not give.

An ipywidgets slider is a noUiSlider: its handle has role="slider" and its value (aria-valuenow), but no accessible
name, because its description is a separate <label> that points at nothing (for a <div> it cannot). A screen reader
says "slider, 3" and never which one; axe-core reports it as a serious violation (aria-input-field-name). A
SelectionSlider's handle says its index where the learner sees a word. No option of ipywidgets reaches the handle.

The same holds for a ToggleButtons choice: its buttons say "0", "1" with nothing to tell "layer 0" from "head 0",
and which one is chosen is a CSS class, not a state a screen reader reads.

``SliderNames`` is a widget without a picture whose front-end code (an ES module, run in the page by anywidget, the
well-kept library for a widget's own front end) finds every slider of its explorer and gives its handle the
description as ``aria-label`` and the readout the learner sees as ``aria-valuetext``; makes each ToggleButtons a
group named by its description, and gives every toggle button ``aria-pressed``; again whenever the page redraws
them. Every explorer carries one (helpers.widgets.base.Explorer); the browser tests check the result with
axe-core and the page's accessibility tree.
"""

from __future__ import annotations

import anywidget
import ipywidgets as W

ESM = """
function setAttr(el, name, value) {
  if (value && el.getAttribute(name) !== value) el.setAttribute(name, value);
}

function describe(widget) {
  const label = widget.querySelector(':scope > .widget-label');
  return label ? (label.textContent.trim() || label.getAttribute('title') || '') : '';
}

function nameControls(root) {
  nameSliders(root);
  for (const group of root.querySelectorAll('.widget-toggle-buttons')) {   // a ToggleButtons choice
    setAttr(group, 'role', 'group');
    setAttr(group, 'aria-label', describe(group));
  }
  for (const button of root.querySelectorAll('button.widget-toggle-button, .widget-toggle-buttons button')) {
    setAttr(button, 'aria-pressed', button.classList.contains('mod-active') ? 'true' : 'false');
  }
}

function nameSliders(root) {
  for (const slider of root.querySelectorAll('.widget-slider')) {
    const handle = slider.querySelector('[role="slider"]');
    if (!handle) continue;
    setAttr(handle, 'aria-label', describe(slider));
    const readout = slider.querySelector('.widget-readout');
    setAttr(handle, 'aria-valuetext', readout ? readout.textContent.trim() : '');
  }
}

export default {
  render({ el }) {
    el.style.display = 'none';
    // ipywidgets renders a box's children before it puts them in the box: wait until this one is in its
    // explorer (or the box `named` made), then name its controls now and whenever the page redraws them.
    let observer = null, stopped = false;
    const start = () => {
      if (stopped) return;
      const root = el.closest('.gt-explorer') || el.parentElement;
      if (!root) { setTimeout(start, 20); return; }
      observer = new MutationObserver(() => nameControls(root));
      observer.observe(root, { subtree: true, childList: true, characterData: true,
                               attributes: true, attributeFilter: ['aria-valuenow', 'class'] });
      nameControls(root);
    };
    start();
    return () => { stopped = true; if (observer) observer.disconnect(); };
  },
};
"""


class SliderNames(anywidget.AnyWidget):
    """Gives the sliders of the explorer it sits in an accessible name and value text (see the module's text)."""

    _esm = ESM


def named(*widgets: W.Widget) -> W.VBox:
    """A box of controls shown outside an Explorer, with the same names for screen readers as an explorer's.

    ``display(named(W.IntSlider(description="n")))`` instead of the bare slider, whose handle has no name."""
    return W.VBox([*widgets, SliderNames()])
