"""The learner's own workspace (tools/workspace.py): `bash run.sh lab` opens copies with the exercises blank, and
updating the series never writes over the learner's work."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tools import notebooks as nbtool
from tools import workspace

ROOT = Path(__file__).resolve().parents[2]


def notebook(text: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(text, id="c0"), nbformat.v4.new_code_cell("x = 1", id="c1")]
    return nb


def put(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook(text), folder / name)
    return folder / name


def edit(path: Path, text: str) -> None:
    """What a learner does: change a cell and save."""
    nb = nbformat.read(path, as_version=4)
    nb.cells[1].source = text
    nbformat.write(nb, path)


def test_a_new_learner_gets_every_learner_copy(tmp_path):
    work = tmp_path / "work"
    report = workspace.sync(work)
    names = sorted(p.name for p in nbtool.LEARN.glob("*.ipynb"))
    assert sorted(report.copied) == names == sorted(p.name for p in work.glob("*.ipynb"))
    for name in names:
        assert (work / name).read_bytes() == (nbtool.LEARN / name).read_bytes()
    again = workspace.sync(work)
    assert (again.copied, again.updated, again.offered) == ([], [], {}) and sorted(again.kept) == names
    assert again.lines(work) == [f"==> Your workspace {work} is up to date ({len(names)} notebooks: your copies)"]
    assert "your own copies, with the exercises blank" in "\n".join(report.lines(work))


def test_an_update_never_writes_over_the_learners_work(tmp_path):
    series, work = tmp_path / "learn", tmp_path / "work"
    for name in ("01_a.ipynb", "02_b.ipynb", "03_c.ipynb"):
        put(series, name, f"# {name}, first version")
    workspace.sync(work, series)
    edit(work / "01_a.ipynb", "x = 'my answer'")            # the learner's work
    (work / "03_c.ipynb").unlink()                          # deleted, to start over

    put(series, "01_a.ipynb", "# 01, second version")      # the series changes 01 and 02 and adds 04
    put(series, "02_b.ipynb", "# 02, second version")
    put(series, "04_d.ipynb", "# 04, new")
    report = workspace.sync(work, series)

    assert "my answer" in (work / "01_a.ipynb").read_text()  # intact
    beside = work / report.offered["01_a.ipynb"]
    assert beside.name.startswith("01_a.new-") and "second version" in beside.read_text()
    assert report.updated == ["02_b.ipynb"] and "second version" in (work / "02_b.ipynb").read_text()  # 02: untouched

    assert sorted(report.copied) == ["03_c.ipynb", "04_d.ipynb"]
    text = "\n".join(report.lines(work))
    assert "01_a.ipynb changed in the series" in text and beside.name in text and "left as it is" in text

    again = workspace.sync(work, series)                     # the next start: a reminder, nothing written
    assert again.offered == {} and again.waiting == {"01_a.ipynb": beside.name}
    beside.unlink()                                          # seen and deleted: not offered again
    third = workspace.sync(work, series)
    assert third.offered == third.waiting == {} and not beside.exists()
    assert "my answer" in (work / "01_a.ipynb").read_text()
    record = json.loads((work / workspace.RECORD).read_text())
    assert record["02_b.ipynb"] == workspace.digest(series / "02_b.ipynb")

    put(series, "01_a.ipynb", "# 01, third version")        # a later change is offered again
    fourth = workspace.sync(work, series)
    assert "third version" in (work / fourth.offered["01_a.ipynb"]).read_text()
    assert "my answer" in (work / "01_a.ipynb").read_text()


def test_a_copy_from_before_the_record_is_treated_as_the_learners(tmp_path):
    series, work = tmp_path / "learn", tmp_path / "work"
    put(series, "01_a.ipynb", "# the series")
    put(work, "01_a.ipynb", "# something of the learner's")
    report = workspace.sync(work, series)
    assert "something of the learner's" in (work / "01_a.ipynb").read_text()
    assert list(report.offered) == ["01_a.ipynb"]


@pytest.mark.slow  # starts git
@pytest.mark.each_python
def test_git_pull_leaves_the_workspace_alone(tmp_path):
    """The real update: the learner's clone pulls a new version of the series; work/ is ignored by git."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "init.defaultBranch=main"]
    upstream, clone = tmp_path / "upstream", tmp_path / "clone"
    put(upstream / "learn", "01_a.ipynb", "# first version")
    shutil.copy(ROOT / ".gitignore", upstream / ".gitignore")
    for cmd in (["init", "-q"], ["add", "."], ["commit", "-qm", "v1"]):
        subprocess.run([*git, *cmd], cwd=upstream, check=True)
    subprocess.run([*git, "clone", "-q", str(upstream), str(clone)], check=True)
    work = clone / "work"
    workspace.sync(work, clone / "learn")
    edit(work / "01_a.ipynb", "x = 'my answer'")
    put(upstream / "learn", "01_a.ipynb", "# second version")
    put(upstream / "learn", "02_b.ipynb", "# new notebook")
    subprocess.run([*git, "add", "."], cwd=upstream, check=True)
    subprocess.run([*git, "commit", "-qm", "v2"], cwd=upstream, check=True)
    pulled = subprocess.run([*git, "pull", "-q"], cwd=clone, capture_output=True, text=True)
    assert pulled.returncode == 0, pulled.stderr
    status = subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True).stdout
    assert status == "", f"work/ must be ignored by git: {status}"
    report = workspace.sync(work, clone / "learn")
    assert "my answer" in (work / "01_a.ipynb").read_text()
    assert report.copied == ["02_b.ipynb"] and list(report.offered) == ["01_a.ipynb"]


@pytest.mark.slow  # starts a Python
@pytest.mark.each_python
def test_bad_workspace_folders_are_named(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    run = subprocess.run([sys.executable, "-m", "tools.workspace", str(afile)], cwd=ROOT, capture_output=True,
                         text=True)
    assert run.returncode == 2 and "is a file, not a folder" in run.stderr and "GT_WORK" in run.stderr
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("this user writes into read-only folders (root)")
        run = subprocess.run([sys.executable, "-m", "tools.workspace", str(locked / "work")], cwd=ROOT,
                             capture_output=True, text=True)
        assert run.returncode == 1 and "could not write your workspace" in run.stderr, run.stderr
    finally:
        locked.chmod(0o700)


def test_the_learner_copies_hold_no_solution(tmp_path):
    """Every committed learner copy (what the workspace, Binder and Colab open) has each exercise blank: no marker
    and no line of any solution, and as many "YOUR CODE HERE" as exercises."""
    for path in nbtool.notebooks([]):
        copy = nbformat.read(nbtool.LEARN / path.name, as_version=4)
        code = "\n".join(c.source for c in copy.cells if c.cell_type == "code")
        exercises = nbtool.exercises(path)
        assert nbtool.SOLUTION_START not in code and nbtool.SOLUTION_END not in code
        assert code.count("# YOUR CODE HERE") == len(exercises), path.name
        shown = [line for line in nbtool.solution_lines(path) if line in code]
        assert not shown, f"{path.name}: solution lines in the learner copy: {shown}"


def test_a_new_version_the_learner_works_in_is_never_written_over(tmp_path):
    """The learner works in the new version put beside their copy; the series moves on and back (a checkout of an
    older tag): each version goes to a file of its own."""
    series, work = tmp_path / "learn", tmp_path / "work"
    put(series, "01_a.ipynb", "# v1")
    workspace.sync(work, series)
    edit(work / "01_a.ipynb", "x = 'mine'")
    put(series, "01_a.ipynb", "# v2")
    v2 = work / workspace.sync(work, series).offered["01_a.ipynb"]
    edit(v2, "x = 'mine, in the new version'")
    put(series, "01_a.ipynb", "# v3")
    v3 = work / workspace.sync(work, series).offered["01_a.ipynb"]
    put(series, "01_a.ipynb", "# v2")                         # back to v2
    again = work / workspace.sync(work, series).offered["01_a.ipynb"]
    assert len({v2, v3, again}) == 3 and again.name.endswith("-2.ipynb")
    assert "mine, in the new version" in v2.read_text() and "mine" in (work / "01_a.ipynb").read_text()


def test_a_lost_record_does_not_offer_copies_of_what_is_already_there(tmp_path):
    series, work = tmp_path / "learn", tmp_path / "work"
    put(series, "01_a.ipynb", "# v1")
    put(series, "02_b.ipynb", "# v1")
    workspace.sync(work, series)
    (work / workspace.RECORD).unlink()
    report = workspace.sync(work, series)
    assert report.offered == {} and sorted(report.kept) == ["01_a.ipynb", "02_b.ipynb"]
    assert sorted(p.name for p in work.glob("*.ipynb")) == ["01_a.ipynb", "02_b.ipynb"]


@pytest.mark.slow  # starts git
@pytest.mark.each_python
def test_earlier_edits_in_the_series_notebooks_are_named(tmp_path):
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    put(tmp_path / "notebooks", "01_a.ipynb", "# v1")
    for cmd in (["init", "-q"], ["add", "."], ["commit", "-qm", "v1"]):
        subprocess.run([*git, *cmd], cwd=tmp_path, check=True)
    assert workspace.earlier_edits(tmp_path) == []
    edit(tmp_path / "notebooks" / "01_a.ipynb", "x = 'answered in place'")
    assert workspace.earlier_edits(tmp_path) == ["notebooks/01_a.ipynb"]


def test_a_damaged_record_loses_nothing(tmp_path):
    series, work = tmp_path / "learn", tmp_path / "work"
    put(series, "01_a.ipynb", "# v1")
    workspace.sync(work, series)
    edit(work / "01_a.ipynb", "x = 'mine'")
    (work / workspace.RECORD).write_text("{not json")
    put(series, "01_a.ipynb", "# v2")
    report = workspace.sync(work, series)
    assert "mine" in (work / "01_a.ipynb").read_text() and list(report.offered) == ["01_a.ipynb"]
    assert (work / (workspace.RECORD + ".bad")).read_text() == "{not json"


def test_the_check_command_names_a_stale_learner_copy_and_answer_file(tmp_path, monkeypatch, capsys):
    learn, solutions = tmp_path / "learn", tmp_path / "solutions.py"
    shutil.copytree(nbtool.LEARN, learn)
    solutions.write_text(nbtool.SOLUTIONS.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(nbtool, "LEARN", learn)
    monkeypatch.setattr(nbtool, "SOLUTIONS", solutions)
    assert nbtool.main(["check"]) == 0
    edit(learn / "01_bigrams.ipynb", "x = 'an answer written into the committed copy'")
    solutions.write_text("SOLUTIONS = {}\n", encoding="utf-8")
    assert nbtool.main(["check"]) == 1
    out = capsys.readouterr().out
    assert f"{learn / '01_bigrams.ipynb'} is not clean or not made from notebooks/01_bigrams.ipynb" in out
    assert f"{solutions} does not hold the solutions of notebooks/: run `python -m tools.notebooks clean`" in out
