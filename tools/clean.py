"""What a committed notebook holds, in one place (``python -m tools.notebooks clean`` writes it, the tests check it):
no execution counts, no widget state, no outputs, except in cells whose source contains ``# NBVAL_CHECK_OUTPUT``;
those keep exactly the text a fresh seeded run printed, which nbval (``--nbval-lax``) compares on every test run,
and a fixed execution count (the cell's position among the code cells, not counting the Colab cell at the top),
without which nbval would not compare them."""

from __future__ import annotations

from pathlib import Path

import nbformat

COLAB_HEAD = "# In Google Colab this cell installs what Colab lacks"
MARK = "# NBVAL_CHECK_OUTPUT"
NBGRADER_KEYS = ("grade", "grade_id", "locked", "points", "schema_version", "solution", "task")
KEEP_NB_METADATA = ("kernelspec", "language_info")
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def is_colab_cell(cell) -> bool:
    """The cell at the top of every notebook that installs what Colab lacks (``tools.cloud`` writes it)."""
    return cell.cell_type == "code" and cell.source.startswith(COLAB_HEAD)


def cleaned(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    nb.metadata = {k: v for k, v in nb.metadata.items() if k in KEEP_NB_METADATA}
    nb.metadata["kernelspec"] = KERNELSPEC
    nb.metadata["language_info"] = {"name": "python"}
    ordinal = 0
    for cell in nb.cells:
        # (the Colab cell, the same in every notebook, is not counted: adding it left every count as it was)
        ordinal += cell.cell_type == "code" and not is_colab_cell(cell)
        meta = {k: v for k, v in cell.metadata.items() if k == "tags"}
        if "nbgrader" in cell.metadata:  # an exercise's solution or check cell (CONTRIBUTING, "Exercises")
            meta["nbgrader"] = {k: v for k, v in cell.metadata.nbgrader.items() if k in NBGRADER_KEYS}
        cell.metadata = meta
        cell.pop("id", None)
        if cell.cell_type != "code":
            if not cell.get("attachments"):
                cell.pop("attachments", None)
            continue
        cell.execution_count = None
        if MARK in cell.source:
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
