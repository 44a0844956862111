"""What the series needs to know about each notebook, in one place: one TOML file per notebook beside this module
(``01_bigrams.toml`` for ``notebooks/01_bigrams.ipynb``), read by everything that needs it.

    notebooks()          every notebook's entry, in the series' order
    notebook("05")       one entry, by number or name ("05_multiple_heads")

A file's keys, and who reads each:

    title                    the opening's heading, "# NN · <title>" (tests/tools/test_manifest.py holds the two
                             together)
    [readme]
    post_section             README's table: the post's section the notebook mirrors
    summary                  README's table: what you do and see, in a sentence or two
    in_detail                docs/notebooks.md: the same, in full (tools/series.py writes both tables)
    [learner_time]
    group                    README's learner time adds up the notebooks of one group (a run of consecutive
                             notebooks: 1 for 01-05, ...) (tools/learner_time.py)
    [site]
    section                  the caption of the course site's table of contents the page is listed under, in the
                             series' order (tools/site.py)
    [model_map]
    marked, faint, caption   the parts of the model map the notebook marks, the parts its models lack (drawn
                             faint) and the caption under the map (helpers/plots/model_map.py: ``show_map("NN")``)
    [idioms]
    shown                    the PyTorch operations the notebook shows first, each with the section that shows it
                             and what it does (helpers/idioms.py; tools/idioms.py and
                             tests/notebooks/test_torch_idioms.py
                             check them against the learner copies)
    [training]
    live                     whether the notebook trains a model while it runs (its claims then need margins)
    recipe_functions         the helpers whose source is part of that training recipe (the margins' recipe hash)
    [checks]
    tests                    the test files that hand wrong answers to its exercise checks (tests/unit/checks/:
                             test_check_messages.py measures their messages)
    [claims]
    ledger                   the ledger of its latest fresh read, claim by claim (tests/claims/)

Why the files live inside ``helpers``: the notebooks draw the model map and list the idioms at run time, also in a
regular install (Colab's) where only the package is on disk, so the manifest ships as the package's data; the
maintainers' tools read the same files. Reading TOML needs Python's ``tomllib`` (3.11+) or, on 3.10, ``tomli``,
which the series' requirements bring there (pytest depends on it). This module imports nothing else from
``helpers``, so a tool can load it alone (``load_file``)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
NAME = re.compile(r"\d\d_[a-z0-9_]+")

# table -> {key: type}; "" is the file's top level
KEYS: dict[str, dict[str, type]] = {
    "": {"title": str},
    "readme": {"post_section": str, "summary": str, "in_detail": str},
    "learner_time": {"group": int},
    "site": {"section": str},
    "model_map": {"marked": list, "faint": list, "caption": str},
    "idioms": {"shown": list},
    "training": {"live": bool, "recipe_functions": list},
    "checks": {"tests": list},
    "claims": {"ledger": str},
}
IDIOM_KEYS = ("name", "section", "does")
KINDS = {str: "a string", int: "a whole number", list: "a list", bool: "true or false"}


class ManifestError(ValueError):
    """A manifest file that lacks a key, has one it should not, or holds the wrong kind of value."""


@dataclass(frozen=True)
class Idiom:
    name: str      # as the learner writes it: ".sum", "torch.where", "dim=", "@"
    section: str   # the start of the heading of the section that first shows it
    does: str      # what it does, in a few words


@dataclass(frozen=True)
class Notebook:
    name: str                       # "01_bigrams"
    title: str
    post_section: str
    summary: str
    in_detail: str
    learner_time_group: int
    site_section: str
    map_marked: tuple[str, ...]
    map_faint: tuple[str, ...]
    map_caption: str
    idioms: tuple[Idiom, ...]
    trains_live: bool
    recipe_functions: tuple[str, ...]
    check_tests: tuple[str, ...]
    claims_ledger: str

    @property
    def number(self) -> str:
        return self.name[:2]

    @property
    def file(self) -> str:
        return f"{self.name}.ipynb"


def _checked(data: dict, where: str) -> dict:
    """``data`` with every key of KEYS present and of its type, and no other; a ManifestError names the file."""
    for table in KEYS:
        if table and not isinstance(data.get(table), dict):
            raise ManifestError(f"{where}: no table [{table}]")
    for table, keys in KEYS.items():
        part = data if table == "" else data[table]
        label = f"[{table}]" if table else "the top level"
        wanted = set(keys) | ({t for t in KEYS if t} if table == "" else set())
        extra, missing = set(part) - wanted, set(keys) - set(part)
        if extra or missing:
            raise ManifestError(f"{where}: {label} " + "; ".join(
                ([f"lacks {', '.join(sorted(missing))}"] if missing else [])
                + ([f"has unknown {', '.join(sorted(extra))}"] if extra else [])))
        for key, kind in keys.items():
            if not isinstance(part[key], kind) or (kind is int and isinstance(part[key], bool)):
                raise ManifestError(f"{where}: {label} {key} must be {KINDS[kind]}")
    for idiom in data["idioms"]["shown"]:
        if not isinstance(idiom, dict) or sorted(idiom) != sorted(IDIOM_KEYS):
            raise ManifestError(f"{where}: each idiom is {{ name = ..., section = ..., does = ... }}, not {idiom}")
    return data


def load_file(path: Path) -> Notebook:
    """One manifest file, checked."""
    path = Path(path)
    if not NAME.fullmatch(path.stem):
        raise ManifestError(f"{path.name}: a manifest is named like its notebook, NN_name.toml")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ManifestError(f"{path.name}: not valid TOML ({e})") from None
    d = _checked(data, path.name)
    return Notebook(
        name=path.stem, title=d["title"], post_section=d["readme"]["post_section"],
        summary=d["readme"]["summary"], in_detail=d["readme"]["in_detail"],
        learner_time_group=d["learner_time"]["group"], site_section=d["site"]["section"],
        map_marked=tuple(d["model_map"]["marked"]), map_faint=tuple(d["model_map"]["faint"]),
        map_caption=d["model_map"]["caption"],
        idioms=tuple(Idiom(**i) for i in d["idioms"]["shown"]),
        trains_live=d["training"]["live"], recipe_functions=tuple(d["training"]["recipe_functions"]),
        check_tests=tuple(d["checks"]["tests"]), claims_ledger=d["claims"]["ledger"])


def load(folder: Path = HERE) -> tuple[Notebook, ...]:
    """Every manifest in ``folder``, in the series' order (by number)."""
    return tuple(load_file(p) for p in sorted(Path(folder).glob("*.toml")))


@functools.cache
def notebooks() -> tuple[Notebook, ...]:
    """Every notebook of the series, in order."""
    found = load()
    if not found:  # an install that left the package's data out
        raise ManifestError(f"no notebook manifest (NN_name.toml) in {HERE}: the helpers package was installed without "
                            "its data files")
    return found


def notebook(key: str | int) -> Notebook:
    """One notebook's entry, by number ("05", 5) or name ("05_multiple_heads")."""
    key = str(key)
    number = key.zfill(2) if key.isdigit() else key[:2]
    for nb in notebooks():
        if nb.number == number and (key.isdigit() or nb.name == key):
            return nb
    raise KeyError(f"no notebook {key!r} in the series; its notebooks are "
                   f"{', '.join(nb.number for nb in notebooks())}")
