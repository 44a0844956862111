"""Every colour the series draws with, in one place, so that one test holds them all to account.

tests/unit/plots/test_palette.py checks, with ``coloraide``'s simulations of full protanopia, deuteranopia and
tritanopia:

- colours that must be told apart within one picture (each tuple of ``GROUPS``) differ by CIEDE2000 >= 20 under
  normal vision and each simulation (20 is a clearly visible difference; 2.3 is the smallest noticeable one);
- the colour maps: sequential ones (``SEQUENTIAL``) get darker monotonically from one end to the other under every
  simulation, so order reads from lightness alone; the diverging one is lightest at 0 and gives +v and -v colours
  that differ by >= 20 once |v| is 30 % of the largest (near 0 both are near white, as they should be); ``MASKED``
  (the causal mask's -inf cells) differs from every colour of the diverging map by >= 15 — those cells are also one
  whole triangle, named in the title and in the figure's words;
- text meets WCAG 2.1 AA, 4.5:1: text on a chart's own white background against white, text on the notebook's
  background (``TEXT_*``, JupyterLab theme variables with a fallback for other front ends) against JupyterLab's light
  and dark themes, resolved from the installed themes' CSS.

Heatmap cells and bars are data, not text: WCAG's text contrast does not apply to them. What does apply: a value is
never told by colour alone (every chart's words carry the numbers: ``alt``), lightness orders a colour map, and
the lines and frames that mark something (selected row, masked cells, induction frames) differ by more than colour
where they can (outline, hatching, dashes). The model map's marked part has a thick outline and bold text besides its
fill, so its outline is what the test compares.
"""

from __future__ import annotations

# ColorBrewer's RdBu / PuOr ends and a neutral grey: distinct under the three colour blindnesses (tested)
BLUE, ORANGE, GREY, RED = "#2166ac", "#e08214", "#878787", "#b2182b"
INK = "#222222"                 # near-black: frames and marks drawn over coloured cells, the model map's lines
AXIS = "#444444"                # axes and ticks of the SVG charts
WHITE = "#ffffff"               # the background every chart draws under itself (so a dark theme cannot change it)
MASKED = "#8c8c8c"              # cells the causal mask set to -inf (matplotlib heatmap)
HATCH = ("#eeeeee", "#dddddd", "#f6f6f6")  # masked cells of the HTML pattern: a hatched light grey
SELECTED = "#d62728"            # the outline of the selected query's row
MARK_FILL, MARK_STROKE, MARK_TEXT = "#fee0b6", "#b35806", "#8c4a00"   # the model map's marked part
PLAIN_FILL = "#f4f4f4"          # the model map's other parts

LINES = (BLUE, ORANGE, GREY, RED)   # curves or bar groups of one picture, in this order
EARLIER, AFTER = INK, ORANGE        # notebook 09's frames: earlier copies of the query token, and what followed them

GROUPS: dict[str, tuple[str, ...]] = {   # colours that share a picture and must be told apart
    "curves and bars (LINES)": LINES,
    "induction frames, over the pattern's blue and white cells": (EARLIER, AFTER, BLUE, WHITE),
    "the selected row's outline, over the pattern's cells": (SELECTED, BLUE, WHITE),
    "the model map: the marked part's outline, the others', lines": (MARK_STROKE, GREY, INK),
}
SEQUENTIAL = ("Blues", "Oranges")   # heatmaps of values >= 0 (patterns, grids)
DIVERGING = ("RdBu_r",)             # signed values centred at 0 (scores, circuits)

# Text drawn on a chart's white background, against WHITE
TEXT_ON_WHITE = {"chart text (SVG default)": "#000000", "axis ticks": AXIS, "model map labels": INK,
                 "model map marked label": MARK_TEXT}
# Text on the notebook's own background: the theme's colour where JupyterLab defines one (fallback elsewhere)
TEXT_MUTED = "var(--jp-content-font-color2, #595959)"   # secondary words: captions' notes, table headers
TEXT_ERROR = "var(--jp-error-color1, #b00020)"          # a widget's message about bad input
TEXT_ON_THEME = {"muted": TEXT_MUTED, "error": TEXT_ERROR}
