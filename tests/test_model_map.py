"""The map of the model (helpers/plots/model_map.py): one drawing, each notebook's part marked, a text
alternative that says what is marked, and the copy the README shows kept current."""

from __future__ import annotations

import html as html_lib
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat
import pytest

from helpers.plots import model_map as mm

ROOT = Path(__file__).resolve().parents[1]
SVG = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def marked_labels(svg: str) -> list[str]:
    """The labels drawn bold: a marked part's box text (the stream's and the block's captions too)."""
    root = parse(svg)
    return [t.text for t in root.iter(f"{SVG}text") if t.get("font-weight") == "bold" and t.text
            and t.text != "this notebook" and not t.text.startswith("Where") and not t.text.startswith("A GPT")]


@pytest.mark.parametrize("notebook", sorted(mm.NOTEBOOK_PARTS))
def test_each_notebook_marks_its_parts_and_says_so(notebook):
    parts, caption = mm.NOTEBOOK_PARTS[notebook]
    html = mm.map_html(notebook)
    svg = html[html.index("<svg"):html.index("</svg>") + 6]
    root = parse(svg)                                                    # well-formed
    assert root.get("role") == "img"
    title, desc = root.find(f"{SVG}title"), root.find(f"{SVG}desc")
    assert root.get("aria-labelledby") == f"{title.get('id')} {desc.get('id')}"
    assert f"notebook {notebook}" in title.text
    said = desc.text.split(" Marked: ")[1]                               # the text alternative names what is marked
    if set(parts) == set(mm.PARTS):
        assert said == "every part."
    else:
        assert [p for p in mm.PARTS if mm.PARTS[p][1] in said] == [p for p in mm.PARTS if p in parts]
    boxes = [p for p in parts if p not in ("stream", "layers")]
    assert svg.count(">this notebook</text>") == len(boxes)              # one label under each marked box
    assert len(marked_labels(svg)) == len(parts)                          # bold: the marked parts, nothing else
    assert html_lib.escape(caption) in html and caption.startswith(f"Notebook {notebook} ")


def test_plain_map_marks_nothing_and_ids_are_per_notebook():
    svg = mm.model_map_svg()
    assert "this notebook" not in svg and marked_labels(svg) == [] and "Marked" not in mm.map_text()
    ids = [set(re.findall(r'id="([^"]+)"', mm.map_html(n))) for n in mm.NOTEBOOK_PARTS]
    assert all(not (a & b) for i, a in enumerate(ids) for b in ids[i + 1:])   # two maps on one page: no shared id


def test_unknown_part_or_notebook_is_named():
    with pytest.raises(ValueError, match="no part of the model is called 'decoder'"):
        mm.model_map_svg(["attn", "decoder"])
    with pytest.raises(ValueError, match="no notebook '12'"):
        mm.map_html("12")


def test_every_notebook_opens_with_its_map():
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        calls = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and "show_map(" in c.source]
        assert calls == [3], (path.name, calls)                          # right after the set-up cell, once
        assert f'show_map("{path.name[:2]}")' in nb.cells[3].source, path.name


def test_readme_shows_the_current_map_with_its_text():
    assert (ROOT / "docs" / "model_map.svg").read_text(encoding="utf-8") == \
        mm.model_map_svg(title="A GPT-style Transformer, end to end") + "\n"
    assert f"![{mm.map_text()}](docs/model_map.svg)" in (ROOT / "README.md").read_text(encoding="utf-8")
