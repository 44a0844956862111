"""No answer in view (issue 56, deliverable 1): no code cell a learner can see before passing an exercise computes
that exercise's answer — not a cell above it (tests/notebooks/test_exercises.py also traces the helpers called there), not a
cell below it on the same page, and not a cell of an earlier notebook. Later cells take such a result from a helper.

Compared by meaning, not by text. The solution and every code cell of the learner copies (learn/) are parsed and
their syntax trees normalised (`Meaning`): every variable name becomes `_`; a size (`W_Q.shape[0]`, `x.size(1)`,
`len(ids)`, `cfg.d_head`, and the square root of a name, a number or a size: `math.sqrt(d_head)`, `d_head ** 0.5`)
becomes one token, SIZE; the usual spellings of one operation become one: a square root (`torch.sqrt(e)`,
`e.sqrt()`, `e ** 0.5`), the Frobenius norm (`torch.linalg.matrix_norm(e)`, `e.norm()`), softmax (`torch.softmax(e,
dim=d)`, `softmax(e, dim=d)`, `e.softmax(d)`), ReLU (`torch.relu(e)`, `e.clamp(min=0)`), −∞ (`float("-inf")`,
`-math.inf`), a transpose (`.T`, `.mT`, `.t()`) and a product (`torch.matmul(a, b)`, `a @ b`); `float(e)`, `e.item()`,
`e.detach()` are `e`. So `q.T @ k / math.sqrt(d_head)` is `q.T @ k / math.sqrt(W_Q.shape[0])`.

The solution's *key expressions* are the values of its assignments and returns (each element of a tuple on its own),
with every variable it set once to a computation put back in (`reads = W_QK @ W_OV` then `norm(reads) / ...` is
`norm(W_QK @ W_OV) / ...`). A cell's expressions are taken as written and with the cell's own variables put back in,
one level, two levels, ... (`q, k = W_Q @ x0, W_K @ x0` then `q.T @ k / s`). A key expression is in view when a
cell's expression has its shape, where a blank of the key expression (an input of the solution) stands for a name,
a number or one call on them (the solution's `future` mask, made in a cell by `att.causal_mask(n)`).

A key expression counts only if it combines things (an operator, or a call with a computed argument) and does
at least `MIN_OPERATIONS` (`operations`): `_ * _[:, None]` or `logits[a] - logits[b]` say too little to be anyone's
answer. A shorter one still counts with its names kept, where every name is the post's (`W_O @ W_V` is 10.1's OV
circuit whatever cell writes it; `v @ A.T` names nothing).
"""

from __future__ import annotations

import ast
import builtins
import copy
import functools
import textwrap
from pathlib import Path

import nbformat
import pytest

from tools import notebooks as nbtool

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
MIN_OPERATIONS = 3
MAX_DEPTH = 6           # how many levels of a cell's variables are put back in
SIZE = "SIZE"
# the post's names for weights and circuits: an expression of these alone says what it computes even when short
POST_WEIGHTS = {"W_Q", "W_K", "W_V", "W_O", "W_QK", "W_OV", "W_E", "W_U", "W_pos", "W_1", "W_2"}
KEPT = set(dir(builtins))
_SIZE_ATTRS = ("d_", "n_")                 # config fields: cfg.d_model, model.cfg.n_heads, L.n_ctx


def _is(node, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _call(func: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Name(id=func, ctx=ast.Load()), args=list(args), keywords=[])


def _half(node) -> bool:
    """0.5, .5 or 1 / 2: the power of a square root."""
    if isinstance(node, ast.Constant) and node.value == 0.5:
        return True
    return (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.left, ast.Constant)
            and isinstance(node.right, ast.Constant) and node.left.value == 1 and node.right.value == 2)


class Meaning(ast.NodeTransformer):
    """Normalise a tree (children first): the spellings of one computation become one. With ``blank`` every
    variable name becomes "_" (builtins keep theirs); without it names stay, for the short expressions compared
    by name."""

    def __init__(self, blank: bool = True):
        self.blank = blank

    def visit_Name(self, node):
        if self.blank and node.id not in KEPT and node.id not in NORMAL:
            return ast.copy_location(ast.Name(id="_", ctx=ast.Load()), node)
        return ast.copy_location(ast.Name(id=node.id, ctx=ast.Load()), node)

    def visit_arg(self, node):
        return ast.copy_location(ast.arg(arg="_"), node) if self.blank else node

    def visit_Attribute(self, node):
        self.generic_visit(node)
        node.ctx = ast.Load()
        if node.attr in ("mT", "mH", "H"):
            node.attr = "T"
        if node.attr.startswith(_SIZE_ATTRS) and not isinstance(node.value, ast.Call):
            return ast.copy_location(ast.Name(id=SIZE, ctx=ast.Load()), node)
        return node

    def visit_Subscript(self, node):
        self.generic_visit(node)
        node.ctx = ast.Load()
        if isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
            return ast.copy_location(ast.Name(id=SIZE, ctx=ast.Load()), node)
        return node

    def visit_Starred(self, node):
        self.generic_visit(node)
        node.ctx = ast.Load()
        return node

    def visit_Tuple(self, node):
        self.generic_visit(node)
        node.ctx = ast.Load()
        return node

    visit_List = visit_Tuple

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.USub) and _infinity(node.operand) == "inf":
            return ast.copy_location(ast.Name(id=NEG_INF, ctx=ast.Load()), node)     # -math.inf, -float("inf")
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Pow) and _half(node.right):
            return self._sqrt(node.left, node)
        return node

    def visit_Call(self, node):
        f = node.func
        # which function, read before its name is blanked: softmax(e, dim) however it is called
        called = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        root = f.value if isinstance(f, ast.Attribute) else None
        while isinstance(root, ast.Attribute):
            root = root.value
        on_module = isinstance(root, ast.Name) and root.id in MODULES     # torch.softmax(e), not e.softmax(d)
        self.generic_visit(node)
        f, args = node.func, node.args
        attr = f.attr if isinstance(f, ast.Attribute) else None
        kw = {k.arg: k.value for k in node.keywords}
        if called == "softmax":
            operand_first = isinstance(f, ast.Name) or (on_module and args)     # softmax(e, d), torch.softmax(e, d)
            operand, rest = (args[0], args[1:]) if operand_first and args else (f.value, args) if attr else (None, [])
            if operand is not None:
                dim = kw.get("dim", rest[0] if rest else None)
                return ast.copy_location(_call("SOFTMAX", operand, *([dim] if dim is not None else [])), node)
        if called == "relu" and (args or attr):                    # torch.relu(e), F.relu(e), e.relu()
            return ast.copy_location(_call("RELU", args[0] if args else f.value), node)
        if called in ("clamp", "clamp_min") and _zero(kw.get("min", args[1] if len(args) > 1 else
                                                          args[0] if called == "clamp_min" and args else None)) \
                and "max" not in kw:                                  # torch.clamp(e, min=0), e.clamp(min=0)
            return ast.copy_location(_call("RELU", args[0] if on_module else f.value), node)
        if _infinity(node) == "-inf":                               # float("-inf")
            return ast.copy_location(ast.Name(id=NEG_INF, ctx=ast.Load()), node)
        if _is(f, "len") and len(args) == 1 or (attr in ("size", "numel") and len(args) <= 1 and not kw):
            return ast.copy_location(ast.Name(id=SIZE, ctx=ast.Load()), node)
        if (_is(f, "float") or _is(f, "int")) and len(args) == 1 and not kw \
                and not isinstance(args[0], ast.Constant):
            return args[0]
        if attr in ("item", "tolist", "detach") and not args and not kw:
            return f.value
        if attr == "sqrt" and len(args) == 1 and not kw:          # math.sqrt(e), torch.sqrt(e)
            return self._sqrt(args[0], node)
        if attr == "sqrt" and not args:                           # e.sqrt()
            return self._sqrt(f.value, node)
        if attr in ("matrix_norm", "norm") and len(args) == 1 and not kw:   # torch.linalg.matrix_norm(e)
            return ast.copy_location(_call("NORM", args[0]), node)
        if attr == "norm" and not args and not kw:                 # e.norm(): Frobenius for a matrix
            return ast.copy_location(_call("NORM", f.value), node)
        if attr == "t" and not args:
            return ast.copy_location(ast.Attribute(value=f.value, attr="T", ctx=ast.Load()), node)
        if attr == "matmul" and len(args) == 2:                   # torch.matmul(a, b)
            return ast.copy_location(ast.BinOp(left=args[0], op=ast.MatMult(), right=args[1]), node)
        if attr == "matmul" and len(args) == 1:                   # a.matmul(b)
            return ast.copy_location(ast.BinOp(left=f.value, op=ast.MatMult(), right=args[0]), node)
        return node

    @staticmethod
    def _sqrt(operand, node):
        if not does_something(operand) and not any(isinstance(n, ast.Subscript) and not _is(n, SIZE)
                                                   for n in ast.walk(operand)):
            return ast.copy_location(ast.Name(id=SIZE, ctx=ast.Load()), node)     # the square root of a size
        return ast.copy_location(_call("SQRT", operand), node)


NEG_INF = "NEG_INF"
NORMAL = (SIZE, "SQRT", "NORM", "SOFTMAX", NEG_INF, "RELU")


def _zero(node) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0


def _infinity(node) -> str | None:
    """"inf" for math.inf, torch.inf, float("inf"); "-inf" for float("-inf")."""
    if isinstance(node, ast.Attribute) and node.attr == "inf":
        return "inf"
    if isinstance(node, ast.Call) and _is(node.func, "float") and len(node.args) == 1 \
            and isinstance(node.args[0], ast.Constant) and str(node.args[0].value).lower() in ("inf", "-inf"):
        return str(node.args[0].value).lower()
    return None


def normalised(node: ast.AST, blank: bool = True) -> ast.AST:
    return Meaning(blank).visit(copy.deepcopy(node))


def operations(node: ast.AST) -> int:
    """How much a piece of code does: 2 for a call (it names what it does: softmax, masked_fill), 1 for an operator,
    a comparison, a transpose, or indexing that slices or adds a dimension (`x0[:, -1:]`, `b[:, None]`; a look-up
    such as `logits[right]` or `cache["x1"]` counts nothing)."""
    def reshapes(n: ast.Subscript) -> bool:
        return any(isinstance(m, ast.Slice) or (isinstance(m, ast.Constant) and m.value is None)
                   for m in ast.walk(n.slice))
    return sum(2 if isinstance(n, ast.Call) else 1 for n in ast.walk(node)
               if isinstance(n, (ast.BinOp, ast.Compare, ast.BoolOp, ast.Call))
               or (isinstance(n, ast.Subscript) and reshapes(n))
               or (isinstance(n, ast.UnaryOp) and not isinstance(n.operand, ast.Constant))
               or (isinstance(n, ast.Attribute) and n.attr == "T"))


def does_something(node: ast.AST) -> bool:
    """Combines things: an operator, a comparison or a comprehension, or a call with a computed argument.
    One call on names and numbers (`x.mean(dim=0, keepdim=True)`, `torch.ones(n, n).triu(1)`) or an index
    (`x0[:, -1:]`, `cache["x1"][:, -1]`) names a tool or a place, as notebook 01's PyTorch cell does."""
    simple = (ast.Name, ast.Constant, ast.Attribute, ast.UnaryOp)
    return any(isinstance(n, (ast.BinOp, ast.Compare, ast.BoolOp, ast.ListComp, ast.GeneratorExp))
               or (isinstance(n, ast.Call) and any(not isinstance(a, simple)
                                                   for a in [*n.args, *(k.value for k in n.keywords)]))
               for n in ast.walk(node))


def _root(node: ast.AST) -> tuple:
    """What a match must agree on at the top: the kind of node and its operator or attribute."""
    return (type(node).__name__, type(getattr(node, "op", None)).__name__, getattr(node, "attr", None),
            getattr(getattr(node, "func", None), "id", None), getattr(getattr(node, "func", None), "attr", None))


def _stands_in(node: ast.AST) -> bool:
    """What a blank name of a solution may stand for in a cell: a name, a number, or one call on them (an input the
    cell computes in one go: `att.causal_mask(n)` for the solution's `future`) — not an operation of its own, and not
    a part picked out of something (`W_E[:, i]`)."""
    if isinstance(node, (ast.Name, ast.Constant, ast.Attribute)):
        return True
    simple = (ast.Name, ast.Constant, ast.Attribute, ast.UnaryOp)
    return isinstance(node, ast.Call) and all(isinstance(a, simple) for a in [*node.args,
                                                                              *(k.value for k in node.keywords)])


def matches(pattern: ast.AST, node: ast.AST) -> bool:
    """Is ``node`` the ``pattern``, where a blank name of the pattern stands for a name, a number or one call
    (`_stands_in`)?"""
    if isinstance(pattern, ast.Name) and pattern.id == "_":
        return _stands_in(node)
    if type(pattern) is not type(node):
        return False
    for field in pattern._fields:
        if field == "ctx":
            continue
        a, b = getattr(pattern, field, None), getattr(node, field, None)
        if isinstance(a, list):
            if not isinstance(b, list) or len(a) != len(b) or not all(
                    matches(x, y) if isinstance(x, ast.AST) else x == y for x, y in zip(a, b)):
                return False
        elif isinstance(a, ast.AST):
            if not isinstance(b, ast.AST) or not matches(a, b):
                return False
        elif a != b:
            return False
    return True


class _Inline(ast.NodeTransformer):
    """Put variables back in: each name of ``env`` becomes its value, itself put back in ``depth - 1`` more times
    (None: all the way)."""

    def __init__(self, env: dict[str, ast.expr], depth: int | None = None):
        self.env, self.depth = env, depth

    def visit_Name(self, node):
        if node.id not in self.env or self.depth == 0:
            return node
        deeper = None if self.depth is None else self.depth - 1
        return _Inline(self.env, deeper).visit(copy.deepcopy(self.env[node.id]))


def _once(tree: ast.AST) -> set[str]:
    """The names a piece of code sets exactly once, by a plain `name = value` (not in a loop, not augmented)."""
    count: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets, weight = node.targets, 1
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.comprehension, ast.With)):
            targets = [getattr(node, "target", None)] + [i.optional_vars for i in getattr(node, "items", [])]
            weight = 2
        elif isinstance(node, (ast.FunctionDef, ast.Lambda)):
            targets, weight = [ast.Name(id=a.arg) for a in node.args.args], 2
        else:
            continue
        for target in filter(None, targets):
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    count[name.id] = count.get(name.id, 0) + weight
    return {name for name, n in count.items() if n == 1}


MODULES = {"torch", "math", "np", "F", "nn", "helpers"}


def _computation(value: ast.expr) -> bool:
    """Is this value a computation (an operator, or a method of a variable: `x - mu`, `x.mean(0)`), not data or a
    thing looked up (`torch.tensor([...])`, `torch.randn(5)`, `model.embed.W_E`, `cache["x1"]`)? Only computations
    are put back in: the data a cell starts from stays a name, as a solution's arguments do."""
    if any(isinstance(n, (ast.BinOp, ast.Compare, ast.BoolOp)) for n in ast.walk(value)):
        return True
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        root = value.func.value
        while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
            root = root.func if isinstance(root, ast.Call) else root.value
        return isinstance(root, ast.Name) and root.id not in MODULES
    return False


def values(code: str, every: bool = False) -> list[ast.expr]:
    """The values a solution assigns and returns, each element of a tuple on its own, with every variable it set
    exactly once to a computation put back in (and as written where it reads none of those: `x1_n` stands for the
    exercise's own step, and `softmax(W_U @ x1_n)` alone is notebook 02's read-out, not the answer).
    With ``every`` (a cell): every expression of the code, as written and with its variables put back in one level,
    two levels, ... all the way (`scores = q.T @ k / s` is `(W_Q @ x0).T @ (W_K @ x0) / s` one level in, even where
    `x0` was computed in the cell too)."""
    tree = ast.parse(textwrap.dedent(code))
    once = _once(tree)
    env: dict[str, ast.expr] = {}
    found: list[ast.expr] = []
    statements = sorted((n for n in ast.walk(tree) if isinstance(n, ast.stmt)), key=lambda n: (n.lineno, n.col_offset))
    for node in statements:   # in the order they are written
        pairs = []
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) \
                        and len(target.elts) == len(node.value.elts):
                    pairs += list(zip(target.elts, node.value.elts))
                else:
                    pairs.append((target, node.value))
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            pairs.append((node.target, node.value))
        elif isinstance(node, ast.Return) and node.value is not None:
            elts = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            pairs += [(None, e) for e in elts]
        elif every and isinstance(node, ast.Expr):
            pairs.append((None, node.value))
        for target, value in pairs:
            own = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)} & env.keys()
            if every:
                forms, depth = [value], 1
                while own and depth <= MAX_DEPTH:
                    forms.append(_Inline(env, depth).visit(copy.deepcopy(value)))
                    if ast.dump(forms[-1]) == ast.dump(forms[-2]):
                        break
                    depth += 1
                found += forms
            else:
                found += [_Inline(env).visit(copy.deepcopy(value))]
            if isinstance(target, ast.Name) and target.id in once and _computation(value):
                env[target.id] = value
    if every:   # what sits in a condition, a loop header or a with: as written
        found += [tree]
    return found


def key_forms(body: str) -> list[tuple[str, ast.AST, str]]:
    """(how it is compared, the normalised key expression, the solution's text of it) for every key expression:
    "blank" (names blanked, each blank standing for anything) or "named" (names kept, compared whole)."""
    forms, seen = [], set()
    for value in values(body):
        blanked = normalised(value)
        if not does_something(blanked):
            continue
        if operations(blanked) >= MIN_OPERATIONS:
            form = ("blank", blanked, ast.unparse(value))
        elif {n.id for n in ast.walk(value) if isinstance(n, ast.Name)} <= POST_WEIGHTS:
            form = ("named", normalised(value, blank=False), ast.unparse(value))
        else:
            continue
        if (form[0], ast.dump(form[1])) not in seen:
            seen.add((form[0], ast.dump(form[1])))
            forms.append(form)
    return forms


def cell_forms(source: str) -> dict[str, dict]:
    """Every expression of a cell, normalised, with the cell's own variables also put back in as for the
    solution (`centred = x - mu` then `(centred ** 2).mean(0)` is `((x - mu) ** 2).mean(0)`): "blank", by the
    kind of node at its top (for `matches`); "named", as dumps."""
    try:
        found = values(source, every=True)
    except SyntaxError:          # a cell of IPython magics
        return {"blank": {}, "named": set()}
    blank: dict[tuple, list] = {}
    for part in found:
        for n in ast.walk(normalised(part)):
            if isinstance(n, ast.expr):
                blank.setdefault(_root(n), []).append(n)
    named = {ast.dump(n) for part in found for n in ast.walk(normalised(part, blank=False)) if isinstance(n, ast.expr)}
    return {"blank": blank, "named": named}


def shown(form: tuple[str, ast.AST, str], cell: dict) -> bool:
    how, pattern, _ = form
    if how == "named":
        return ast.dump(pattern) in cell["named"]
    return any(matches(pattern, n) for n in cell["blank"].get(_root(pattern), ()))


def in_view(body: str, sources: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(where, the solution's expression) for every key expression of ``body`` that one of the ``sources``
    ((where, code) pairs) computes."""
    forms = key_forms(body)
    return [(where, form[2]) for where, code in sources for cell in [cell_forms(code)] for form in forms
            if shown(form, cell)]


@functools.cache
def learner_cells(name: str) -> list[tuple[str, dict]]:
    """(where, its forms) of every code cell of a learner copy."""
    copy_ = nbformat.read(nbtool.LEARN / name, as_version=4)
    return [(f"{Path(name).stem} cell {i}", cell_forms(c.source))
            for i, c in enumerate(copy_.cells) if c.cell_type == "code"]


def answer_in_view(number: str, body: str) -> list[tuple[str, str]]:
    """(where, the solution's expression) for every key expression of exercise ``number`` that a code cell
    computes which a learner sees before passing it: every cell of the learner copies of the earlier notebooks and
    of its own (its own solution cell is blank there)."""
    path = next(p for p in NOTEBOOKS if any(ex["number"] == number for ex in nbtool.exercises(p)))
    forms = key_forms(body)
    return [(where, form[2]) for earlier in NOTEBOOKS[:NOTEBOOKS.index(path) + 1]
            for where, cell in learner_cells(earlier.name) for form in forms if shown(form, cell)]


def all_exercises() -> list[tuple[str, str]]:
    """(number, solution body) of every exercise of the series."""
    found = []
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        for ex in nbtool.exercises(path):
            found.append((ex["number"], nbtool.solution_body(nb.cells[ex["cells"][1]].source)))
    return found


EXERCISES = all_exercises()
# Hits in cells being rewritten on another branch, with their replacement handed over: (exercise, notebook) -> the
# cell. Only these hits are let through, and each must still be one (the next test): delete the entry with the fix.
WAITING: dict[tuple[str, str], str] = {}


def _notebook(where: str) -> str:
    return where.split(" cell ")[0]


@pytest.mark.parametrize("number, body", EXERCISES, ids=[n for n, _ in EXERCISES])
def test_no_visible_cell_computes_an_exercises_answer_before_it_is_passed(number, body):
    hits = [hit for hit in answer_in_view(number, body) if (number, _notebook(hit[0])) not in WAITING]
    assert not hits, (f"exercise {number}'s answer is in view before a learner has passed it (use a helper, or put "
                      f"the cell after the notebook): {hits}")


@pytest.mark.parametrize("number, notebook", sorted(WAITING))
def test_a_waiting_hit_is_still_there(number, notebook):
    body = dict(EXERCISES)[number]
    assert any(_notebook(where) == notebook for where, _ in answer_in_view(number, body)), (
        f"{notebook} no longer shows exercise {number}'s answer: delete its entry from WAITING")


# --- the comparison itself, on the cases that made it ----------------------------------------------------

SCORES_41 = """
    q, k = W_Q @ x0, W_K @ x0
    return q.T @ k / math.sqrt(W_Q.shape[0])
"""
CIRCUITS_101 = """
    W_QK = W_Q.T @ W_K
    W_OV = W_O @ W_V
    return W_QK, W_OV
"""
K_COMPOSITION_102 = """
    reads = W_QK @ W_OV
    return torch.linalg.matrix_norm(reads) / (torch.linalg.matrix_norm(W_QK) * torch.linalg.matrix_norm(W_OV))
"""


CAUSAL_42 = """
    n = scores.shape[-1]
    future = torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)
    A = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    return W_O @ v @ A.T
"""
LAYER_NORM_71 = """
    mu = x.mean(dim=0, keepdim=True)
    var = ((x - mu) ** 2).mean(dim=0, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * gamma[:, None] + beta[:, None]
"""
HIDE_32 = """
    last = x0[:, -1:]
    s = (W_Q @ last).T @ (W_K @ x0) / math.sqrt(W_Q.shape[0])
    s[0, j] = float("-inf")
    a = softmax(s, dim=1)
    o_n = W_O @ (W_V @ x0) @ a.T
    return softmax(W_U @ (last + o_n), dim=0)
"""
PATCH_53 = """
    def diff(x_n):
        logits = W_U @ x_n
        return float(logits[right] - logits[wrong])
    return (diff(patched_n) - diff(x1_n)) / (diff(clean_n) - diff(x1_n))
"""


@pytest.mark.parametrize("body, cell", [
    (SCORES_41, "q, k, v = W_Q @ x0, W_K @ x0, W_V @ x0\nscores = q.T @ k / math.sqrt(d_head)"),   # 04, under 4.1
    (SCORES_41, "query = Wq @ x\nkey = Wk @ x\nS = query.T @ key / d_head ** 0.5"),
    (SCORES_41, "S = (W_Q @ x).mT @ (W_K @ x) / torch.tensor(cfg.d_head).sqrt()"),
    (SCORES_41, "q = W_Q @ x0\nk = W_K @ x0\nprint((q.T @ k / math.sqrt(d_head)).shape)"),
    (CIRCUITS_101, "W_QK, W_OV = W_Q.T @ W_K, W_O @ W_V"),               # 09, section 6
    (CIRCUITS_101, "qk = torch.matmul(W_Q.t(), W_K)"),
    (K_COMPOSITION_102, "score = float((W_QK @ W_OV).norm() / (W_QK.norm() * W_OV.norm()))"),   # 09, section 6
    (K_COMPOSITION_102, "s = torch.linalg.norm(M @ N) / (torch.linalg.norm(M) * torch.linalg.norm(N))"),
    # the mask made by a helper in place of the solution's `future`, and softmax by another name
    (CAUSAL_42, "A = softmax(scores.masked_fill(att.causal_mask(n), float('-inf')), dim=-1)"),
    (CAUSAL_42, "S = scores.masked_fill(mask, -math.inf)\nA = S.softmax(dim=-1)"),
    # written in steps of other names: the cell's own variables put back in
    (LAYER_NORM_71, "mu = x.mean(dim=0, keepdim=True)\ncentred = x - mu\n"
                    "var = (centred ** 2).mean(dim=0, keepdim=True)"),
])
def test_an_answer_is_found_whatever_its_spelling(body, cell):
    assert in_view(body, [("cell", cell)])


@pytest.mark.parametrize("body, cell", [
    (SCORES_41, "S = cache['L0.S']"),                                    # read from the model: no computation shown
    (SCORES_41, "scores = all_scores(x0, W_Q, W_K)"),
    (SCORES_41, "q, k = W_Q @ x0, W_K @ x0\nS = q.T @ k"),              # a part, unscaled
    (SCORES_41, "q_n = W_Q @ x0[:, -1:]\nk = W_K @ x0\ns = q_n.T @ k / math.sqrt(d_head)"),   # one query: notebook 03
    (CIRCUITS_101, "W_QK, W_OV = qk_circuit(model, 1, h), ov_circuit(model, 1, h)"),   # a helper
    (CIRCUITS_101, "r = v @ A.T"),                                       # short, and not of the post's weights
    (K_COMPOSITION_102, "score = composition_score(W_QK, W_OV)"),
    (CAUSAL_42, "A = att.softmax_star(scores)"),
    (LAYER_NORM_71, "mu = x.mean(dim=0, keepdim=True)"),                 # one step, as notebook 01 shows sum(dim=0)
    (LAYER_NORM_71, "y = x_hat * gamma[:, None] + beta[:, None]"),       # gamma and beta applied to a given x_hat
    # notebook 02's zero-layer prediction has the last line's shape, from parts picked out of W_E and W_pos
    (HIDE_32, "x0_n = W_E[:, ids[-1]] + W_pos[:, n - 1]\np = softmax(W_U @ x0_n, dim=0)"),
    (PATCH_53, "gap = float(logits[right] - logits[wrong])"),           # a logit difference, not a patching fraction
])
def test_a_cell_that_does_not_compute_the_answer_is_not_flagged(body, cell):
    assert not in_view(body, [("cell", cell)])
