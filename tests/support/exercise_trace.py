"""An IPython start-up file (tests/notebooks/test_exercises.py copies it into a throw-away IPYTHONDIR): inside each
kernel nbgrader starts, it wraps every helper that answers an exercise (the ``answered_by`` of each
``helpers.checks`` check) and writes one line to ``$GT_TRACE_DIR`` whenever a notebook cell calls one
directly — whatever name the cell imported it under. Calls made by other helpers (a model's forward
pass using a softmax, a widget) are not the notebook showing the computation, and are not written.
"""

import functools
import json
import os
import sys
import types
from pathlib import Path


def _install() -> None:
    import helpers
    from helpers import checks
    from helpers.checks.base import resolve

    helpers_dir = str(Path(helpers.__file__).resolve().parent)
    libraries = tuple({sys.prefix, sys.base_prefix, sys.exec_prefix})
    here = Path.cwd()  # nbgrader runs each notebook in autograded/<student>/<assignment>/
    out = Path(os.environ["GT_TRACE_DIR"]) / f"{here.parent.name}__{here.name}.jsonl"
    current = {"cell": ""}

    def before(info):
        current["cell"] = info.raw_cell

    get_ipython().events.register("pre_run_cell", before)  # noqa: F821 (an IPython start-up file)

    def from_notebook(frame) -> bool:
        """The nearest frame outside Python's and the packages' own code is a notebook cell's."""
        while frame is not None:
            name = frame.f_code.co_filename
            if name.startswith(helpers_dir):
                return False
            if not (name.startswith(libraries) or name.startswith("<frozen") or "site-packages" in name):
                return True
            frame = frame.f_back
        return False

    def traced(fn, dotted):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if from_notebook(sys._getframe(1)):
                with out.open("a", encoding="utf-8") as f:
                    f.write(json.dumps({"helper": dotted, "cell": current["cell"]}) + "\n")
            return fn(*args, **kwargs)
        return wrapper

    wanted = sorted({name for check in vars(checks).values() for name in getattr(check, "answered_by", ())})
    for dotted in wanted:
        owner_name, _, attr = dotted.rpartition(".")
        owner = resolve(owner_name)  # a module, or a class for "module.Class.method"
        original = getattr(owner, attr)
        wrapper = traced(original, dotted)
        setattr(owner, attr, wrapper)
        if not isinstance(owner, types.ModuleType):
            continue
        # names other helpers modules imported before now ("from helpers.softmax import softmax")
        for module in list(sys.modules.values()):
            if getattr(module, "__name__", "").startswith("helpers") and getattr(module, attr, None) is original:
                setattr(module, attr, wrapper)


if os.environ.get("GT_TRACE_DIR"):
    _install()
