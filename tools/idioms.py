"""The PyTorch idioms a learner meets in the series, read off the learner copies (the series assumes no PyTorch: each
operation is shown before a learner needs it).

    python -m tools.idioms              every idiom's first use, in the order a learner meets them
    python -m tools.idioms --solutions  the idioms of the series' own solutions, exercise by exercise

The list of where each is shown is helpers/idioms.py; tests/notebooks/test_torch_idioms.py holds the two against each
other.

What a learner reads as code: every code cell of a learner copy (learn/, the exercise scaffolds included: the
solutions are blank there), and the code spans of every folded ``<details>`` block (hints, answers), parsed as
Python where they parse (a span such as ``.sum(dim=0)`` is read as a method of some tensor). An *idiom* is:

- ``torch.X`` / ``F.X``: a name reached from ``torch`` (``torch.nn.functional`` written ``F``), called or not
  (``torch.arange``, ``torch.no_grad``, ``torch.Tensor``, ``torch.nn.Linear``), whatever the notebook's import alias;
- ``.X``: a method or attribute of a tensor, a module or an optimizer (``.sum``, ``.T``, ``.mT``, ``.parameters``,
  ``.backward``), from the names ``torch.Tensor``, ``torch.nn.Module`` and ``torch.optim.Optimizer`` have;
- ``dim=`` and ``keepdim=``: those keywords in a call of one of the above;
- ``@``: matrix multiplication; ``x[i] = v``: writing into entries of a tensor (a subscript assignment to a name
  not bound to a dict or list in that notebook).

Not idioms: anything reached from the series' own helpers (``helpers.*`` and what is imported from it), Python's own
operations, and methods on a string, list, dict or set (``", ".join``, ``text.split()``, ``d.values()``).
"""

from __future__ import annotations

import ast
import re
import textwrap
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
LEARN = ROOT / "learn"
DETAILS = re.compile(r"<details>\s*<summary>(.*?)</summary>(.*?)</details>", re.S)
CODE_SPAN = re.compile(r"`([^`\n]+)`")
KEYWORDS = {"dim", "keepdim"}


def _tensor_names() -> frozenset[str]:
    import torch

    names = set(dir(torch.Tensor)) | set(dir(torch.nn.Module)) | set(dir(torch.optim.Optimizer))
    return frozenset(n for n in names if not n.startswith("_") and n not in dir(object))


# left out: named tensors (`x.name` is common) and what strings, lists and sets have too and the series never does to
# a tensor (`", ".join`, `vocab.index(w)`, `text.split()`, `seen.add(w)`); `.values` counts only read, not called
# (a dict's `.values()`), `.sort` not on a name bound to a list
TENSOR_NAMES = _tensor_names() - {"name", "names", "index", "split", "add", "count"}


def _attributes() -> frozenset[str]:
    """Names read without a call: a tensor's properties (`.T`, `.shape`, `.grad`) and the fields of what
    `.max(dim=)`, `.topk`, `.sort` return (`.values`, `.indices`). A method (`.sum`) counts only when called, so a
    helper's field that happens to share a method's name (`history.step`, `dla.logit`) is not one."""
    import torch

    classes = (torch.Tensor, torch.nn.Module, torch.optim.Optimizer)
    return frozenset({n for n in TENSOR_NAMES if not any(callable(getattr(c, n, None)) for c in classes)
                      and not n[0].isupper()} | {"T", "values", "indices"})


ATTRIBUTES = _attributes()


@dataclass(frozen=True)
class Use:
    idiom: str
    cell: int  # index of the cell in the notebook
    where: str  # "code" or the summary of the <details> block ("Hint 1", "Answer", ...)
    line: str  # the line it was found in, for the message


class Reader(ast.NodeVisitor):
    """The idioms of one piece of code. `aliases` maps a name bound by an import to the dotted path it names
    (``F`` -> ``torch.nn.functional``), across the cells of a notebook; `plain` holds the names bound to a dict,
    list, set or string literal (their item assignments and methods are Python's)."""

    def __init__(self, aliases: dict[str, str], plain: set[str]):
        self.aliases, self.plain, self.found, self.callees = aliases, plain, [], set()

    def add(self, idiom: str, node: ast.AST) -> None:
        self.found.append((idiom, getattr(node, "lineno", 1)))

    def visit_Import(self, node):
        for a in node.names:
            self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]

    def visit_ImportFrom(self, node):
        for a in node.names:
            self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"

    def visit_Assign(self, node):
        plain = isinstance(node.value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp,
                                        ast.JoinedStr)) or (isinstance(node.value, ast.Constant)
                                                            and isinstance(node.value.value, str)) or (
            isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
            and node.value.func.id in ("dict", "list", "set", "defaultdict", "sorted", "str"))
        for target in node.targets:
            if isinstance(target, ast.Name):
                (self.plain.add if plain else self.plain.discard)(target.id)
            self.write_into(target)
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self.write_into(node.target)
        self.generic_visit(node)

    def write_into(self, target):
        if isinstance(target, ast.Subscript):
            root = target.value
            while isinstance(root, (ast.Subscript, ast.Attribute)):
                root = root.value
            if not (isinstance(root, ast.Name) and root.id in self.plain) and not (
                    isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str)):
                self.add("x[i] = v", target)

    def visit_BinOp(self, node):
        if isinstance(node.op, ast.MatMult):
            self.add("@", node)
        self.generic_visit(node)

    def path(self, node) -> str | None:
        """The dotted path an attribute chain rooted at an imported name stands for (None: not rooted at one)."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.insert(0, node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.aliases:
            return ".".join([self.aliases[node.id], *parts])
        return None

    def visit_Attribute(self, node):
        full = self.path(node)
        if full is not None:
            if full.split(".")[0] == "torch":
                self.add(canonical(full), node)
                return  # one idiom per chain: torch.nn.functional.softmax, not also torch.nn
            return  # the series' helpers (helpers.*), Python's modules (math.exp, sys.modules): not torch
        receiver = node.value
        python_object = isinstance(receiver, (ast.Constant, ast.JoinedStr, ast.List, ast.Dict, ast.Set,
                                              ast.ListComp, ast.DictComp, ast.SetComp, ast.Tuple)) or (
            isinstance(receiver, ast.Name) and receiver.id in self.plain)
        called = node in self.callees
        if (node.attr in TENSOR_NAMES and not python_object and (called or node.attr in ATTRIBUTES)
                and not (node.attr == "values" and called)):
            self.add("." + node.attr, node)
        self.generic_visit(node)

    def visit_Name(self, node):
        full = self.aliases.get(node.id)
        if full and full.split(".")[0] == "torch" and full != "torch" and isinstance(node.ctx, ast.Load):
            self.add(canonical(full), node)

    def visit_Call(self, node):
        func = node.func
        self.callees.add(func)
        torchy = (isinstance(func, ast.Attribute) and (func.attr in TENSOR_NAMES or (self.path(func) or "")
                                                       .startswith("torch."))) or (
            isinstance(func, ast.Name) and self.aliases.get(func.id, "").startswith("torch."))
        if torchy and not (isinstance(func, ast.Attribute) and (self.path(func) or "").startswith("helpers")):
            for k in node.keywords:
                if k.arg in KEYWORDS:
                    self.add(f"{k.arg}=", k)
        self.generic_visit(node)


def canonical(path: str) -> str:
    return re.sub(r"^torch\.nn\.functional\b", "F", path)


def read_code(source: str, aliases: dict[str, str], plain: set[str]) -> list[tuple[str, int]] | None:
    """The idioms of a piece of code with their line numbers; None if it is not Python. A leading `.` (a method
    written alone in prose, `.sum(dim=0)`) is read on a tensor `x`; Jupyter's `%magic` and `!shell` lines are
    dropped."""
    text = "\n".join(ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!")))
    if text.strip().startswith("."):
        text = "x" + text.strip()
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    reader = Reader(aliases, plain)
    reader.visit(tree)
    return reader.found


def uses(nb: nbformat.NotebookNode) -> list[Use]:
    """Every idiom a learner meets in a notebook (a learner copy), in the order of its cells."""
    aliases: dict[str, str] = {"torch": "torch", "F": "torch.nn.functional", "nn": "torch.nn"}
    plain: set[str] = set()
    found = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            lines = cell.source.splitlines()
            for idiom, line in read_code(cell.source, aliases, plain) or []:
                found.append(Use(idiom, i, "code", lines[line - 1].strip() if line <= len(lines) else ""))
        elif cell.cell_type == "markdown":
            for summary, body in DETAILS.findall(cell.source):
                for span in CODE_SPAN.findall(body):
                    for idiom, _ in read_code(span, dict(aliases), set(plain)) or []:
                        found.append(Use(idiom, i, re.sub(r"\s+", " ", summary.strip()), span))
    return found


def mentions(cell: nbformat.NotebookNode, idiom: str, aliases: dict[str, str] | None = None) -> bool:
    """Whether a cell shows an idiom: its code uses it, or its text names it in a code span (or, for `@` and
    `x[i] = v`, in words)."""
    aliases = aliases or {"torch": "torch", "F": "torch.nn.functional", "nn": "torch.nn"}
    if cell.cell_type == "code":
        return any(i == idiom for i, _ in read_code(cell.source, dict(aliases), set()) or [])
    spans = CODE_SPAN.findall(cell.source)
    return any(i == idiom for span in spans for i, _ in read_code(span, dict(aliases), set()) or []) or any(
        idiom.lstrip(".") in span and idiom.startswith(".") for span in spans)


def solution_uses(path: Path) -> list[Use]:
    """The idioms of the series' own solution of each exercise of a notebook (read from notebooks/, what the
    learner copy blanks and `checks.answer` shows after an attempt), at the position of its solution cell: what an
    exercise needs is shown before it."""
    from tools import notebooks as nbtool

    nb = nbformat.read(path, as_version=4)
    aliases: dict[str, str] = {"torch": "torch", "F": "torch.nn.functional", "nn": "torch.nn"}
    plain: set[str] = set()
    found, solutions = [], {ex["cells"][1]: ex["number"] for ex in nbtool.exercises(path)}
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        body = nbtool.solution_body(cell.source) if i in solutions else None
        found_here = read_code(cell.source, aliases, plain) or []  # keeps the imports and plain names current
        if body is not None:
            lines = body.splitlines()
            for idiom, line in read_code(textwrap.dedent(body), dict(aliases), set(plain)) or []:
                found.append(Use(idiom, i, f"solution {solutions[i]}", lines[line - 1].strip()))
        del found_here
    return found


def learner_notebooks() -> list[Path]:
    return sorted(LEARN.glob("*.ipynb"))


def first_uses(paths: list[Path] | None = None) -> dict[str, tuple[str, Use]]:
    """Each idiom's first use in the series: (notebook stem, Use)."""
    first: dict[str, tuple[str, Use]] = {}
    for path in paths or learner_notebooks():
        for use in uses(nbformat.read(path, as_version=4)):
            first.setdefault(use.idiom, (path.stem, use))
    return first


def main(argv: list[str]) -> int:
    if "--solutions" in argv:
        for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
            for use in solution_uses(path):
                print(f"{path.stem[:2]} cell {use.cell:>2} {use.where:<12} {use.idiom:<28} {use.line[:80]}")
        return 0
    for idiom, (nb, use) in first_uses().items():
        print(f"{nb[:2]} cell {use.cell:>2} {use.where:<10} {idiom:<28} {use.line[:90]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
