"""What a committed notebook holds, in one place (``python -m tools.notebooks clean`` writes it, the tests check it):
no execution counts, no widget state, no outputs, except in *checked* cells, tagged ``nbval-check-output``; those
keep exactly the text a fresh seeded run printed, which nbval (``--nbval-lax``) compares on every test run, and a
fixed execution count (the cell's position among the code cells, not counting the Colab cell at the top), without
which nbval would not compare them.

nbval's instructions live in cell tags, which nbval reads as it reads its comment markers, so that the learner never
sees them: a marker line written in a cell (``# NBVAL_CHECK_OUTPUT``, ``# NBVAL_IGNORE_OUTPUT``, ``# NBVAL_SKIP``,
``# NBVAL_RAISES_EXCEPTION``) is taken out of its source and becomes the cell's tag (``markers_to_tags``).

A *check cell*, tagged ``check``, holds the asserts that keep a notebook's words true of its numbers (nbval runs them
on every test run); it sits right after the cell whose results it checks and is kept collapsed
(``jupyter.source_hidden``, set here from the tag), out of the learner's way: the cells a learner reads compute and
show. The course site leaves check cells out. Check cells do not count in the checked cells' execution counts."""

from __future__ import annotations

from pathlib import Path

import nbformat

COLAB_HEAD = "# In Google Colab this cell installs what Colab lacks"
MARK = "# NBVAL_CHECK_OUTPUT"  # the comment nbval reads; a committed notebook holds CHECK_TAG instead
CHECK_TAG = "nbval-check-output"  # the tag that makes nbval compare a cell's output (``--nbval-lax``)
CHECK_CELL = "check"  # a collapsed cell of asserts after the cell it checks (the module's docstring)
# a check cell's first line: JupyterLab shows the first line of a collapsed cell, unwrapped, so it is short, and says
# what the cell is
CHECK_HEAD = "# the notebook's own checks of the cell above"
# nbval's comment markers (nbval/plugin.py's comment_markers) -> the cell tag nbval reads for the same instruction
# (its metadata_tags: the marker lower-cased with "-" for "_"; "raises-exception" is also JupyterLab's own tag)
MARKER_TAGS = {
    "NBVAL_CHECK_OUTPUT": CHECK_TAG,
    "NBVAL_IGNORE_OUTPUT": "nbval-ignore-output",
    "PYTEST_VALIDATE_IGNORE_OUTPUT": "nbval-ignore-output",
    "NBVAL_SKIP": "nbval-skip",
    "NBVAL_RAISES_EXCEPTION": "raises-exception",
}
NBGRADER_KEYS = ("grade", "grade_id", "locked", "points", "schema_version", "solution", "task")
KEEP_NB_METADATA = ("kernelspec", "language_info")
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def is_colab_cell(cell) -> bool:
    """The cell at the top of every notebook that installs what Colab lacks (``tools.cloud`` writes it)."""
    return cell.cell_type == "code" and cell.source.startswith(COLAB_HEAD)


def is_check_cell(cell) -> bool:
    """A collapsed cell of asserts that checks the cell above it (tagged ``check``)."""
    return cell.cell_type == "code" and CHECK_CELL in cell.metadata.get("tags", [])


def marker(line: str) -> str | None:
    """The nbval marker a source line is (as nbval reads one: a whole-line comment), or None."""
    line = line.strip()
    name = line.lstrip("#").strip() if line.startswith("#") else None
    return name if name in MARKER_TAGS else None


def markers_to_tags(cell) -> bool:
    """Move a code cell's nbval marker lines into its tags (in place; again on the same cell, nothing changes).
    Returns whether anything moved."""
    if cell.cell_type != "code":
        return False
    lines = cell.source.split("\n")
    found = [marker(line) for line in lines]
    if not any(found):
        return False
    cell.source = "\n".join(line for line, m in zip(lines, found) if not m)
    tags = list(cell.metadata.get("tags", []))
    tags += [t for t in dict.fromkeys(MARKER_TAGS[m] for m in found if m) if t not in tags]
    cell.metadata["tags"] = tags
    return True


def is_checked(cell) -> bool:
    """A code cell whose output nbval compares: tagged ``nbval-check-output`` (or, before ``clean`` has moved it,
    with the marker line in its source)."""
    return cell.cell_type == "code" and (CHECK_TAG in cell.metadata.get("tags", [])
                                         or any(marker(line) == "NBVAL_CHECK_OUTPUT"
                                                for line in cell.source.splitlines()))


def cleaned(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    nb.metadata = {k: v for k, v in nb.metadata.items() if k in KEEP_NB_METADATA}
    nb.metadata["kernelspec"] = KERNELSPEC
    nb.metadata["language_info"] = {"name": "python"}
    ordinal = 0
    for cell in nb.cells:
        # (the Colab cell, the same in every notebook, is not counted: adding it left every count as it was)
        ordinal += cell.cell_type == "code" and not is_colab_cell(cell) and not is_check_cell(cell)
        markers_to_tags(cell)
        meta = {k: v for k, v in cell.metadata.items() if k == "tags"}
        if is_check_cell(cell):
            meta["jupyter"] = {"source_hidden": True}
            if not cell.source.startswith(CHECK_HEAD):
                cell.source = CHECK_HEAD + "\n" + cell.source
        if "nbgrader" in cell.metadata:  # an exercise's solution or check cell (CONTRIBUTING, "Exercises")
            meta["nbgrader"] = {k: v for k, v in cell.metadata.nbgrader.items() if k in NBGRADER_KEYS}
        cell.metadata = meta
        cell.pop("id", None)
        if cell.cell_type != "code":
            if not cell.get("attachments"):
                cell.pop("attachments", None)
            continue
        cell.execution_count = None
        if is_checked(cell):
            # nbval only compares cells that have an execution count; use the cell's position,
            # which never changes between runs (unlike the kernel's counter).
            cell.execution_count = ordinal
            keep = []
            for out in cell.outputs:
                if out.output_type == "stream" and out.name == "stdout":
                    keep.append(out)
                elif out.output_type == "execute_result":
                    out.execution_count = ordinal
                    out.metadata = {}
                    out.data = {k: v for k, v in out.data.items() if k == "text/plain"}
                    keep.append(out)
            cell.outputs = keep
        else:
            cell.outputs = []
    nb.nbformat, nb.nbformat_minor = 4, 4
    return nb


def write(nb: nbformat.NotebookNode, path: Path) -> None:
    nbformat.validate(nb)
    path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")


def is_clean(path: Path) -> bool:
    text = path.read_text(encoding="utf-8")
    nb = nbformat.reads(text, as_version=4)
    return nbformat.writes(cleaned(nb)) + "\n" == text
