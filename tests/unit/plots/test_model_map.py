"""The map of the model (helpers/plots/model_map.py): one drawing, each notebook's part marked and the parts its
models lack drawn faint, a text alternative that says both first, and the copy the README shows kept current."""

from __future__ import annotations

import html as html_lib
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat
import pytest

from helpers import series
from helpers.plots import model_map as mm

ROOT = Path(__file__).resolve().parents[3]
SVG = "{http://www.w3.org/2000/svg}"


def bold_texts(svg: str) -> list[str]:
    return [t.text for t in ET.fromstring(svg).iter(f"{SVG}text") if t.get("font-weight") == "bold" and t.text]


def faint_groups(svg: str) -> int:
    return sum(1 for g in ET.fromstring(svg).iter(f"{SVG}g") if g.get("opacity") == str(mm.FAINT))


NUMBERS = [nb.number for nb in series.notebooks()]


@pytest.mark.parametrize("notebook", NUMBERS)
def test_each_notebook_marks_its_parts_and_says_so(notebook):
    entry = series.notebook(notebook)  # its manifest's [model_map]
    parts, faint, caption = entry.map_marked, entry.map_faint, entry.map_caption
    assert not set(parts) & set(faint)                                   # a part is marked or missing, not both
    m = mm.ModelMap(notebook)
    svg = m.svg()
    root = ET.fromstring(svg)                                            # well-formed
    assert root.get("role") == "img"
    title, desc = root.find(f"{SVG}title"), root.find(f"{SVG}desc")
    assert root.get("aria-labelledby") == title.get("id") and root.get("aria-describedby") == desc.get("id")
    assert title.text == f"Where notebook {notebook} sits in the model"
    # the text alternative: what is marked first, then what is missing, in the map's own order, then the model
    marked_said = re.match(r"Marked: (.*?)\.( Drawn faint|  ?A GPT)", desc.text).group(1)
    assert marked_said == "; ".join(mm.PARTS[p] for p in mm.PARTS if p in parts)
    if faint:
        faint_said = re.search(r"Drawn faint, not in this notebook's models: (.*?)\. A GPT", desc.text).group(1)
        assert faint_said == "; ".join(mm.PARTS[p] for p in mm.PARTS if p in faint)
        assert faint_groups(svg) >= len(faint)
    else:
        assert "Drawn faint" not in desc.text and faint_groups(svg) == 0
    assert desc.text.endswith(mm.WHOLE)
    assert not re.search(r"[⁽⁾₀-₉ₙ]", desc.text)                      # plain symbols a screen reader can say
    # marked parts: bold, and a "this notebook" / "here" label (01's two ends share the table's label)
    labels = svg.count(">this notebook</text>") + svg.count(">here</text>")
    boxes = [p for p in parts if p not in ("stream", "layers", "bigram")]
    assert labels == (0 if "bigram" in parts else len(boxes))
    spans = set(parts) & {"stream", "layers", "bigram"}                  # marked without a box: a bold caption
    assert sum(t.startswith("this notebook:") for t in bold_texts(svg)) == len(spans)
    assert html_lib.escape(caption) in m._repr_html_() and caption.startswith(f"Notebook {notebook} ")
    assert repr(m).startswith(caption) and mm.map_text(parts, faint) in repr(m)   # text where HTML is not shown


def test_plain_map_marks_nothing_and_ids_are_per_notebook():
    svg = mm.model_map_svg()
    assert "this notebook" not in svg and bold_texts(svg) == ["Where this sits in the model"]
    assert mm.map_text() == mm.WHOLE and faint_groups(svg) == 0
    ids = [set(re.findall(r'id="([^"]+)"', mm.map_html(n))) for n in NUMBERS]
    assert all(not (a & b) for i, a in enumerate(ids) for b in ids[i + 1:])   # two maps on one page: no shared id


def test_unknown_part_or_notebook_is_named():
    with pytest.raises(ValueError, match="no part of the model is called 'decoder'"):
        mm.model_map_svg(["attn", "decoder"])
    with pytest.raises(ValueError, match="no notebook '99'"):
        mm.map_html("99")


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
