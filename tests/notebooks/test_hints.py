"""Hints that lead, not tell: no hint of an exercise holds code of that exercise's solution (the learner's view is
tested like the code: a hint is a step towards the answer, never the answer).

A hint is a folded ``<details><summary>Hint …</summary>`` block of the exercise's heading cell
(tools/notebooks.exercises finds the cells). A hint may ask a question, name the idea, give a shape or work a smaller
case on other numbers; it may not hand over the solution's code. The solution is what lies between the markers
(tools/notebooks.solution_body), comments left out. Two comparisons:

1. **Fragments, as written.** Every statement of the solution, the right-hand side of each assignment and return,
   and every sub-expression of them, each with its whitespace removed, must not occur in a hint (whitespace removed
   too, and not in the middle of a longer name). Trivial fragments do not count, because a hint must be able to name
   the tools the exercise is about: a fragment needs at least ``MIN_TOKENS`` Python tokens (5: ``q.T @ k``,
   ``ids[1:]`` and ``a[:, None]`` count; ``return x``, ``pass``, ``n = 5``, ``cache["x1"]`` do not), and it must *do*
   something: an operator, an index or a call with an argument. A chain of names and empty calls
   (``loss.backward()``, ``optimizer.step()``, ``model.unembed.W_U``) names a tool or a place, which a hint may do.
2. **A call with its arguments, whatever the names.** Every call of the solution whose arguments say something
   beyond variable names (a number, a keyword, a string such as ``"-inf"``), in the form ``name(arguments)`` with
   the receiver dropped and every variable name blanked out, must not be the same as a call written in a hint's
   code (its backticked spans, parsed). So ``M.masked_fill(mask, float("-inf"))`` or ``torch.ones(3, 3).triu(
   diagonal=1)`` in a hint give away ``scores.masked_fill(future, float("-inf"))`` and ``….triu(diagonal=1)``; a
   hint may still show ``triu`` on other arguments (``diagonal=0``), or ``.max(dim=1)`` where the solution
   takes ``.max(dim=0, keepdim=True)``. The same ``MIN_TOKENS`` applies (``float("-inf")`` alone, four tokens, is
   the way to write −∞, not a solution).

Formulas in LaTeX and numbers in prose are not code and are not compared: that a hint's formula or constant is not
the answer stays a reader's judgement (by that reading 2.2, 2.3, 3.2, 7.3, 8.1 and 10.4 were rewritten too). A
folded "No calculus?" block is not a hint: it is the way through for a learner without the prerequisite, and may
state a formula (7.3's does).
"""

from __future__ import annotations

import ast
import builtins
import io
import re
import textwrap
import tokenize
from pathlib import Path

import nbformat
import pytest

from tools import notebooks as nbtool

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
MIN_TOKENS = 5
HINT = re.compile(r"<details>\s*<summary>\s*(Hint[^<]*)</summary>(.*?)</details>", re.S)
CODE_SPAN = re.compile(r"`([^`\n]+)`")
KEPT_NAMES = {"torch", "math", "F", "nn", "np", *dir(builtins)}  # modules and builtins keep their names


def tokens(code: str) -> list[str]:
    """The Python tokens of a fragment, without comments, layout or an unterminated tail."""
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                            tokenize.ENDMARKER):
                continue
            out.append(tok.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return out


def squeezed(text: str) -> str:
    """Whitespace removed except one space between two words (`with ablated(...)` stays two words), one kind of
    quote (`ast.unparse` writes 'x1' where the solution has "x1")."""
    text = re.sub(r"\s+", " ", text).replace('"', "'")
    return re.sub(r" (?=\W)|(?<=\W) ", "", text)


def constant(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) or (isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant))


def does_something(node: ast.AST) -> bool:
    """An operator, a slice or a computed index, or a call with an argument, somewhere in the fragment. A name, an
    empty call or a look-up by a constant (`x.shape[-1]`, `cache["x1"]`, `model.blocks[0]`) names a tool or a place."""
    return any((isinstance(n, (ast.BinOp, ast.Compare, ast.BoolOp, ast.ListComp, ast.GeneratorExp))
                or (isinstance(n, ast.UnaryOp) and not constant(n))
                or (isinstance(n, ast.Subscript) and not constant(n.slice))
                or (isinstance(n, ast.Call) and (n.args or n.keywords))) for n in ast.walk(node))


def fragments(solution: str) -> set[str]:
    """Every statement of the solution, each assignment's and return's value, and every sub-expression, as
    written (whitespace removed), that has MIN_TOKENS tokens and does something."""
    tree = ast.parse(textwrap.dedent(solution))
    found = set()
    for node in ast.walk(tree):
        parts = []
        if isinstance(node, ast.stmt) and not isinstance(node, (ast.FunctionDef, ast.For, ast.While, ast.If,
                                                                 ast.With)):
            parts.append(node)
        if isinstance(node, ast.expr):
            parts.append(node)
        for part in parts:
            code = ast.unparse(part)
            if len(tokens(code)) >= MIN_TOKENS and does_something(part):
                found.add(squeezed(code))
        if isinstance(node, ast.BinOp):  # `W_O @ v @ A.T` is `(W_O @ v) @ A.T`: `v @ A.T` is a part of it too
            found |= sub_chains(node)
    return found


def sub_chains(node: ast.BinOp) -> set[str]:
    """Every run of two or more neighbouring operands of a chain of one operator, as written."""
    operands, op = [], type(node.op)
    while isinstance(node, ast.BinOp) and isinstance(node.op, op):
        operands.insert(0, node.right)
        node = node.left
    operands.insert(0, node)
    sign = {ast.MatMult: "@", ast.Mult: "*", ast.Add: "+"}.get(op)
    if sign is None:
        return set()
    runs = {f" {sign} ".join(ast.unparse(o) if not isinstance(o, ast.BinOp) else f"({ast.unparse(o)})"
                              for o in operands[i:j])
            for i in range(len(operands)) for j in range(i + 2, len(operands) + 1)}
    return {squeezed(r) for r in runs if len(tokens(r)) >= MIN_TOKENS}


class Blank(ast.NodeTransformer):
    """Every variable name becomes "_" (modules and builtins keep theirs): `M.masked_fill(mask, 0)` ~
    `scores.masked_fill(future, 0)`."""

    def visit_Name(self, node):
        if node.id in KEPT_NAMES:
            return node
        return ast.copy_location(ast.Name(id="_", ctx=ast.Load()), node)


def call_forms(tree: ast.AST) -> set[str]:
    """`name(arguments)` of every call whose arguments say more than variable names, names blanked: once with
    its arguments as written, once with every argument that is not a constant blanked too (so
    `softmax(S, dim=-1)` ~ `softmax(scores.masked_fill(...), dim=-1)`)."""
    tree = Blank().visit(tree)
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func.attr if isinstance(node.func, ast.Attribute) else ast.unparse(node.func)
        written = [ast.unparse(a) for a in node.args] + [ast.unparse(k) for k in node.keywords]
        shallow = [ast.unparse(a) if constant(a) else "_" for a in node.args] + \
                  [f"{k.arg}={ast.unparse(k.value) if constant(k.value) else '_'}" for k in node.keywords]
        for args in (written, shallow):
            if not any(set(tokens(a)) - {"_", "(", ")", "[", "]", ",", ":", "."} for a in args):
                continue  # only variables: `torch.linalg.matrix_norm(M)` names a tool
            form = f"{func}({', '.join(args)})"
            if len(tokens(form)) >= MIN_TOKENS:
                found.add(squeezed(form))
    return found


def hint_calls(hint: str) -> set[str]:
    found = set()
    for span in CODE_SPAN.findall(hint):
        try:
            tree = ast.parse(span.strip(), mode="eval")
        except SyntaxError:
            try:
                tree = ast.parse(span.strip())
            except SyntaxError:
                continue
        found |= call_forms(tree)
    return found


def leaks(solution: str, hint: str) -> list[str]:
    """What of the solution a hint gives away (empty: nothing)."""
    flat = squeezed(hint)
    found = []
    for frag in sorted(fragments(solution), key=len, reverse=True):
        edge = r"(?<![\w.])" if re.match(r"\w", frag) else ""
        if re.search(edge + re.escape(frag) + (r"(?!\w)" if re.search(r"\w$", frag) else ""), flat) \
                and not any(frag in longer for longer in found):
            found.append(frag)
    solution_calls = call_forms(ast.parse(textwrap.dedent(solution)))
    found += [f"call {c}" for c in sorted(solution_calls & hint_calls(hint))]
    return found


def hints_of(source: str) -> list[tuple[str, str]]:
    return [(title.strip(), body) for title, body in HINT.findall(source)]


def exercises_with_hints() -> list[tuple[str, str, str, list[tuple[str, str]]]]:
    rows = []
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        for ex in nbtool.exercises(path):
            heading, solution, _ = ex["cells"]
            hints = hints_of(nb.cells[heading].source)
            assert len(hints) == ex["hints"], f"every hint of exercise {ex['number']} is read: {ex['hints']}"
            rows.append((path.stem, ex["number"], nbtool.solution_body(nb.cells[solution].source), hints))
    return rows


EXERCISES = exercises_with_hints()


@pytest.mark.parametrize("name, number, solution, hints", EXERCISES, ids=[f"{r[1]}" for r in EXERCISES])
def test_no_hint_holds_code_of_its_solution(name, number, solution, hints):
    assert hints, f"exercise {number} ({name}) has at least one hint"
    given = {title: leaks(solution, body) for title, body in hints}
    given = {title: found for title, found in given.items() if found}
    assert not given, f"exercise {number}'s hints give away its solution: {given}"


def test_every_exercise_is_read():
    assert len(EXERCISES) >= 30 and all(solution.strip() for _, _, solution, _ in EXERCISES)


# --- the checker itself -------------------------------------------------------------------------------------

SOLUTION = """
    n = scores.shape[-1]
    future = torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)          # key j after query i
    A = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)  # softmax*
    loss.backward()
    return W_O @ v @ A.T
"""


@pytest.mark.parametrize("hint, given", [
    ("Then `r = v @ A.T`, and return `W_O @ v @ A.T`.", "W_O@v@A.T"),             # a line, as written
    ("The product is `W_O@v@A.T`", "W_O@v@A.T"),                                    # whitespace does not hide it
    ("Inside `with torch.no_grad():` return `W_O @ v @ A.T`", "W_O@v@A.T"),          # nor a word before it
    ("The result is `v @ A.T`, times W_O.", "v@A.T"),                               # part of a line
    ("`M.masked_fill(mask, float('-inf'))` puts −∞ where the mask is True.", "call masked_fill(_, float('-inf'))"),
    ("Try `torch.ones(3, 3).triu(diagonal=1)` on a 3 × 3.", "call triu(diagonal=1)"),
    ("Build `torch.ones(m, m, dtype=torch.bool)` first.", "call ones(_, _, dtype=torch.bool)"),
    ("Normalise with `torch.softmax(S, dim=-1)`.", "call softmax(_, dim=-1)"),
])
def test_the_checker_catches_a_planted_leaking_hint(hint, given):
    found = leaks(SOLUTION, hint)
    assert found and squeezed(given) in [squeezed(f) for f in found], found


@pytest.mark.parametrize("hint", [
    "Which entries must become −∞: those above the diagonal or below it? Along which dimension does each row run?",
    "`torch.ones(3, 3).triu(diagonal=0)` keeps the diagonal too; compare `.tril()`.",  # the tool, other arguments
    "`masked_fill` returns a copy with a value wherever a boolean mask is True.",     # the tool's name
    "Call `loss.backward()` before the step; `torch.linalg.matrix_norm(M)` is ‖M‖.",  # names of tools
    "Check the shapes: `v` is d_head × n and `A` is n × n; what must `r` be?",         # a shape
    "On a smaller case: with scores (0, 0, 0) every weight is 1/3.",                   # a worked case, other numbers
    "Here `n = scores.shape[-1]` is the number of tokens.",                            # a trivial line
])
def test_the_checker_lets_a_leading_hint_through(hint):
    assert leaks(SOLUTION, hint) == []


def test_a_name_inside_a_longer_name_is_not_a_leak():
    assert leaks("    return q.T @ k\n", "`xq.T @ k2` is another product") == []
    assert leaks("    return q.T @ k\n", "`q.T @ k` is the product") == ["q.T@k"]
