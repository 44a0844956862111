"""The series' colours stay apart for colour-blind readers and its text is readable.

Colour blindness is simulated with coloraide (its default method for full protanopia, deuteranopia and tritanopia);
differences are CIEDE2000; contrast is WCAG 2.1's. The thresholds and what they apply to are stated in
helpers/plots/palette.py. Text on the notebook's background is checked against JupyterLab's light and dark themes
as installed here, their CSS variables resolved from the themes' own stylesheets."""

from __future__ import annotations

import json
import re
from itertools import combinations
from pathlib import Path

import jupyterlab
import matplotlib
import pytest
from coloraide import Color

from helpers.plots import palette

ROOT = Path(__file__).resolve().parents[3]
VISIONS = (None, "protan", "deutan", "tritan")
APART, MASK_APART, AA = 20.0, 15.0, 4.5


def seen(colour, vision) -> Color:
    c = Color(colour) if isinstance(colour, str) else Color("srgb", list(colour[:3]))
    return c.filter(vision) if vision else c


def difference(a, b, vision) -> float:
    return seen(a, vision).delta_e(seen(b, vision), method="2000")


def samples(name: str, n: int = 64) -> list[tuple]:
    cmap = matplotlib.colormaps[name]
    return [cmap(i / (n - 1)) for i in range(n)]


@pytest.mark.parametrize("group", list(palette.GROUPS))
@pytest.mark.parametrize("vision", VISIONS, ids=["normal", "protanopia", "deuteranopia", "tritanopia"])
def test_colours_that_share_a_picture_stay_apart(group, vision):
    for a, b in combinations(palette.GROUPS[group], 2):
        assert difference(a, b, vision) >= APART, f"{group}: {a} and {b} differ by only " \
                                                  f"{difference(a, b, vision):.1f} under {vision or 'normal vision'}"


@pytest.mark.parametrize("name", palette.SEQUENTIAL)
@pytest.mark.parametrize("vision", VISIONS)
def test_a_sequential_map_reads_in_order_from_lightness_alone(name, vision):
    lightness = [seen(c, vision).convert("lab")["lightness"] for c in samples(name)]
    assert all(b < a for a, b in zip(lightness, lightness[1:])), f"{name} is not monotone under {vision}"
    assert lightness[0] - lightness[-1] > 50


@pytest.mark.parametrize("name", palette.DIVERGING)
@pytest.mark.parametrize("vision", VISIONS)
def test_a_diverging_maps_signs_differ_and_the_masked_grey_is_none_of_its_colours(name, vision):
    cmap = matplotlib.colormaps[name]
    for t in (0.15, 0.2, 0.3, 0.4, 0.5):   # +v and -v, from 30 % of the largest |value| on (near 0 both are white)
        assert difference(cmap(0.5 + t), cmap(0.5 - t), vision) >= APART, f"{name} at +-{2 * t:.0%} under {vision}"
    colours = samples(name, 256)
    lightness = [seen(c, vision).convert("lab")["lightness"] for c in colours]
    middle = max(range(len(lightness)), key=lightness.__getitem__)
    assert 0.4 < middle / len(colours) < 0.6, "the lightest colour (0) sits in the middle"
    closest = min(difference(palette.MASKED, c, vision) for c in colours)
    assert closest >= MASK_APART, f"MASKED is {closest:.1f} from a colour of {name} under {vision}"


@pytest.mark.parametrize("what", list(palette.TEXT_ON_WHITE))
def test_text_on_a_charts_white_background_meets_AA(what):
    assert Color(palette.TEXT_ON_WHITE[what]).contrast(palette.WHITE, method="wcag21") >= AA


def theme_variables(theme: str) -> dict[str, str]:
    css = Path(jupyterlab.__file__).parent / "themes" / "@jupyterlab" / f"theme-{theme}-extension" / "index.css"
    return dict(re.findall(r"(--[\w-]+):\s*([^;}]+)", css.read_text(encoding="utf-8")))


def resolve(value: str, variables: dict[str, str]) -> str:
    """A CSS colour value with var(--x, fallback) resolved the way the browser does."""
    value = value.strip()
    m = re.fullmatch(r"var\((--[\w-]+)\s*(?:,\s*(.+))?\)", value)
    if not m:
        return value
    name, fallback = m.groups()
    return resolve(variables[name], variables) if name in variables else resolve(fallback, variables)


def over(colour: str, background: Color) -> Color:
    """An rgba() text colour as the browser paints it over ``background``: alpha blending of the sRGB values."""
    c, bg = Color(colour).convert("srgb"), background.convert("srgb")
    a = c.alpha()
    return Color("srgb", [a * x + (1 - a) * y for x, y in zip(c.coords(), bg.coords())])


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("what", list(palette.TEXT_ON_THEME))
def test_text_on_the_notebooks_background_meets_AA_in_jupyterlabs_light_and_dark_themes(theme, what):
    variables = theme_variables(theme)
    background = Color(resolve("var(--jp-layout-color0)", variables))
    text = over(resolve(palette.TEXT_ON_THEME[what], variables), background)
    assert text.contrast(background, method="wcag21") >= AA, f"{what} text in the {theme} theme"
    fallback = re.search(r",\s*(#[0-9a-fA-F]{3,6})\)$", palette.TEXT_ON_THEME[what]).group(1)  # other front ends
    assert Color(fallback).contrast("white", method="wcag21") >= AA


def test_the_theme_reader_reads_the_installed_themes():
    assert Color(resolve("var(--jp-layout-color0)", theme_variables("dark"))).luminance() < 0.05
    assert Color(resolve("var(--jp-layout-color0)", theme_variables("light"))).luminance() > 0.9
    assert resolve("var(--not-a-variable, #123456)", {}) == "#123456"


COLOUR_LITERAL = re.compile(r"""#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b|tab:[a-z]+|color=["'](?:k|black|gray|grey|white|"""
                            r"""red|green|blue|orange|C\d)["']""")


def test_no_colour_is_written_outside_the_palette():
    for path in sorted((ROOT / "helpers").rglob("*.py")):
        if path.name == "palette.py" or "checks" in path.parts:
            continue
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found = COLOUR_LITERAL.search(line)
            assert not found, f"{path.relative_to(ROOT)}:{i} writes the colour {found.group(0)}: use " \
                              "helpers.plots.palette"


def test_every_colour_map_the_series_names_is_a_tested_one():
    named = set()
    for path in [*(ROOT / "helpers").rglob("*.py"), *(ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")]:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".ipynb":
            text = "\n".join("".join(c["source"]) for c in json.loads(text)["cells"] if c["cell_type"] == "code")
        named |= set(re.findall(r"""cmap(?:: str)?\s*=\s*["']([A-Za-z_]+)["']""", text))
    assert named, "found no colour map at all: is the pattern still right?"
    assert named <= set(palette.SEQUENTIAL) | set(palette.DIVERGING), named
