"""Every notebook has its manifest (helpers/series/NN_name.toml), the manifest agrees with the notebook, and what is
made from the manifests is current: README's table of notebooks and docs/notebooks.md (tools/series.py). A manifest
with a missing, unknown or mistyped key is refused with the file and the key named."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import nbformat
import pytest

from helpers import series
from helpers.plots import model_map
from tools import learner_time, margins
from tools import notebooks as nbtool
from tools import series as series_tool

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
ENTRIES = {nb.name: nb for nb in series.notebooks()}
CHECK_CALL = re.compile(r"^checks\.(check_\w+)\(", re.M)


def test_one_manifest_per_notebook_and_one_notebook_per_manifest():
    assert sorted(ENTRIES) == [p.stem for p in NOTEBOOKS], "a manifest per notebook: helpers/series/NN_name.toml"
    assert [nb.name for nb in series.notebooks()] == sorted(ENTRIES), "in the series' order"
    assert sorted(p.stem for p in (ROOT / "learn").glob("*.ipynb")) == sorted(ENTRIES), "and a learner copy each"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_the_manifest_agrees_with_its_notebook(path):
    nb = ENTRIES[path.stem]
    opening = nbformat.read(path, as_version=4).cells[0].source
    assert opening.splitlines()[0] == f"# {nb.number} · {nb.title}", "the opening's heading is the manifest's title"
    assert nb.post_section and nb.summary and nb.in_detail and nb.site_section
    assert set(nb.map_marked) <= set(model_map.PARTS) and set(nb.map_faint) <= set(model_map.PARTS)
    assert nb.map_marked and not set(nb.map_marked) & set(nb.map_faint), "a part is marked or faint, not both"
    assert nb.map_caption.startswith(f"Notebook {nb.number} ")
    assert (ROOT / nb.claims_ledger).is_file(), f"{nb.claims_ledger}: the ledger of the notebook's latest fresh read"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_each_exercise_check_is_given_wrong_answers_by_a_test_the_manifest_names(path):
    """The manifest's [checks] tests are files of tests/ that call each check of the notebook's exercises (they hand
    it the wrong answers whose messages tests/unit/checks/test_check_messages.py measures)."""
    nb = ENTRIES[path.stem]
    cells = nbformat.read(path, as_version=4).cells
    checks = {CHECK_CALL.search(cells[e["cells"][2]].source)[1] for e in nbtool.exercises(path)}
    assert checks, f"{path.name} has no exercise check"
    texts = {}
    for name in nb.check_tests:
        found = sorted((ROOT / "tests").rglob(name))
        assert len(found) == 1, f"{nb.name}'s manifest names {name}, which is not one file of tests/"
        texts[name] = found[0].read_text(encoding="utf-8")
    for check in checks:
        assert any(check in text for text in texts.values()), \
            f"no test of {nb.name}'s manifest ([checks] tests: {nb.check_tests}) calls {check}"


def test_training_entries_are_what_the_margins_measure():
    """Which notebooks run live and the helpers in their recipes: the manifests hold them, tools/margins.py reads
    them, and a notebook makes claim(...) calls exactly when its manifest says it runs live."""
    live = {nb.name: list(nb.recipe_functions) for nb in series.notebooks() if nb.trains_live}
    assert live == margins.RECIPE_FUNCTIONS and list(live) == margins.LIVE
    for nb in series.notebooks():
        text = margins.notebook_path(nb.name).read_text(encoding="utf-8")
        assert ("claim(" in text) == nb.trains_live, \
            f"{nb.name}: [training] live = {nb.trains_live}, but it {'makes no' if nb.trains_live else 'makes'} claims"
    assert not any(nb.recipe_functions for nb in series.notebooks() if not nb.trains_live)
    for dotted in (d for functions in live.values() for d in functions):
        module, attr = dotted.rsplit(".", 1)
        assert callable(getattr(importlib.import_module(module), attr)), dotted


def test_learner_time_groups_are_runs_of_consecutive_notebooks(monkeypatch):
    groups = learner_time.groups()
    assert [g for g in groups][0][0] == "01" and groups[-1][1] == NOTEBOOKS[-1].name[:2]
    entries = list(series.notebooks())
    broken = [entries[0].__class__(**{**vars(e), "learner_time_group": 1 if i % 2 else 2}) for i, e in
              enumerate(entries)]
    monkeypatch.setattr(series, "notebooks", lambda: tuple(broken))
    with pytest.raises(ValueError, match="a group is a run of consecutive notebooks"):
        learner_time.groups()


def test_the_tables_made_from_the_manifests_are_current():
    stale = [str(p.relative_to(ROOT)) for p, text in series_tool.wanted().items()
             if p.read_text(encoding="utf-8") != text]
    assert not stale, f"{stale}: run `python -m tools.series --write` (or `python -m tools.learner_time --write`)"


def test_readme_rows_link_each_notebook_with_its_title():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for nb in series.notebooks():
        assert f"| {nb.number} | [{nb.title}](notebooks/{nb.file}) | " in readme, nb.name


# --- the loader ---------------------------------------------------------------------------------------------------
def write_copy(folder: Path, edit=lambda text: text, name: str = "01_bigrams") -> Path:
    text = (Path(series.HERE) / f"{name}.toml").read_text(encoding="utf-8")
    path = folder / f"{name}.toml"
    path.write_text(edit(text), encoding="utf-8")
    return path


def test_a_copy_of_a_manifest_loads_as_the_original(tmp_path):
    assert series.load_file(write_copy(tmp_path)) == series.notebook("01")
    assert series.notebook(1) == series.notebook("01_bigrams") == series.notebook("01")
    with pytest.raises(KeyError, match="no notebook '99' in the series"):
        series.notebook("99")


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace('title = "Bigrams and n-grams"\n', ""), r"01_bigrams.toml: the top level lacks title"),
    (lambda t: t.replace("[site]\n", "[site]\nplace = 3\n"), r"01_bigrams.toml: \[site\] has unknown place"),
    (lambda t: t.replace("group = 1", 'group = "one"'), r"\[learner_time\] group must be a whole number"),
    (lambda t: t.replace("live = false", "live = 0"), r"\[training\] live must be true or false"),
    (lambda t: t.replace("[claims]", "[claim]"), r"no table \[claims\]"),
    (lambda t: t.replace('{ name = ".float", ', "{ "), r"each idiom is \{ name = ..."),
    (lambda t: t.replace("[checks]", "[checks"), r"not valid TOML"),
])
def test_a_broken_manifest_is_refused_naming_the_file_and_key(tmp_path, edit, message):
    with pytest.raises(series.ManifestError, match=message):
        series.load_file(write_copy(tmp_path, edit))


def test_a_manifest_is_named_like_its_notebook(tmp_path):
    path = write_copy(tmp_path)
    path.rename(tmp_path / "bigrams.toml")
    with pytest.raises(series.ManifestError, match="named like its notebook"):
        series.load_file(tmp_path / "bigrams.toml")
    assert series.load(tmp_path / "empty") == ()
