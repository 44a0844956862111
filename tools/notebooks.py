"""Keep the committed notebooks clean and their checked outputs current.

    python tools/notebooks.py clean   [NOTEBOOK ...]   strip outputs and execution noise
    python tools/notebooks.py refresh [NOTEBOOK ...]   run on a fresh kernel, then clean
    python tools/notebooks.py check   [NOTEBOOK ...]   exit 1 if any notebook is not clean
    python tools/notebooks.py learner OUTDIR [NOTEBOOK ...]  copies without the exercise solutions

"Clean" means: no execution counts, no widget state, no outputs, except in cells whose source
contains ``# NBVAL_CHECK_OUTPUT``; those keep exactly the text a fresh seeded run printed, which
nbval (``--nbval-lax``) compares on every test run, and a fixed execution count (the cell's
position among the code cells), without which nbval would not compare them. Default: every notebook in notebooks/.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
MARK = "# NBVAL_CHECK_OUTPUT"
SOLUTION_START, SOLUTION_END = "# --- your code ---", "# --- end ---"
TODO = 'raise NotImplementedError("Exercise: write your code here, then run the cell")'
KEEP_NB_METADATA = ("kernelspec", "language_info")
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def notebooks(args: list[str]) -> list[Path]:
    return [Path(a) for a in args] if args else sorted((ROOT / "notebooks").glob("*.ipynb"))


def cleaned(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    nb.metadata = {k: v for k, v in nb.metadata.items() if k in KEEP_NB_METADATA}
    nb.metadata["kernelspec"] = KERNELSPEC
    nb.metadata["language_info"] = {"name": "python"}
    ordinal = 0
    for cell in nb.cells:
        ordinal += cell.cell_type == "code"
        cell.metadata = {k: v for k, v in cell.metadata.items() if k == "tags"}
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


def learner_copy(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Replace every solution between the exercise markers by a NotImplementedError line (same
    indentation), so the check that follows says "not written yet". Outputs are dropped."""
    nb = cleaned(nb)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        cell.outputs, cell.execution_count = [], None
        out, skipping = [], False
        for line in cell.source.splitlines():
            if line.strip() == SOLUTION_START:
                out.append(line)
                out.append(line[: len(line) - len(line.lstrip())] + TODO)
                skipping = True
            elif line.strip() == SOLUTION_END:
                out.append(line)
                skipping = False
            elif not skipping:
                out.append(line)
        cell.source = "\n".join(out)
    return nb


def write(nb: nbformat.NotebookNode, path: Path) -> None:
    nbformat.validate(nb)
    path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")


def is_clean(path: Path) -> bool:
    text = path.read_text(encoding="utf-8")
    nb = nbformat.reads(text, as_version=4)
    return nbformat.writes(cleaned(nb)) + "\n" == text


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("clean", "refresh", "check", "learner"):
        print(__doc__)
        return 2
    if argv[0] == "learner":
        if len(argv) < 2:
            print(__doc__)
            return 2
        outdir = Path(argv[1])
        outdir.mkdir(parents=True, exist_ok=True)
        for path in notebooks(argv[2:]):
            write(learner_copy(nbformat.read(path, as_version=4)), outdir / path.name)
            print(f"wrote {outdir / path.name}")
        return 0
    cmd, paths = argv[0], notebooks(argv[1:])
    bad = []
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        if cmd == "check":
            if not is_clean(path):
                bad.append(path)
            continue
        if cmd == "refresh":
            from nbclient import NotebookClient

            start = time.perf_counter()
            NotebookClient(nb, timeout=600, kernel_name="python3",
                           resources={"metadata": {"path": str(path.parent)}}).execute()
            print(f"{path.name}: ran in {time.perf_counter() - start:.1f} s")
        write(cleaned(nb), path)
    for path in bad:
        print(f"{path} is not clean: run `python tools/notebooks.py clean {path}`")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
