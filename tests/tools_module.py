"""Import a script of tools/ (not a package) once, as the tests that check it need: ``tools_module("train_models")``."""

import importlib.util
import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parent.parent / "tools"


def tools_module(name: str):
    if name not in sys.modules:  # registered before it runs: its dataclasses look their module up
        spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]
