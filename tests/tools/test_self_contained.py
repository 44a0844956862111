"""The repository cites no file outside itself: a reader of a clone has everything it refers to. No file names a
planning document kept elsewhere, a path into a folder beside the clone, or a machine's own folders, and no relative
link in a markdown page leads out of the repository."""

from __future__ import annotations

import posixpath
import re
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # git ls-files lists the repository

ROOT = Path(__file__).resolve().parents[2]
TEXT = {".py", ".md", ".ipynb", ".toml", ".txt", ".yml", ".yaml", ".sh", ".cfg", ".json", ".js", ".css", ".html",
        ".in", ".ini", ""}
# What cites a file outside the repository (each pattern written in pieces, so this file does not cite one itself)
OUTSIDE = [
    ("a planning document kept outside the repository", re.compile(r"\b" + "DES" + r"IGN(\.md\b|\s*(§|section\b))")),
    ("a folder beside the clone", re.compile(r"\.\./" + "shared" + r"\b")),
    ("a folder of the machine the series was written on", re.compile(r"(?<![\w.~-])/" + "work" + r"/")),
]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def repository_files() -> list[Path]:
    """The files of the repository (git's, and new ones it does not ignore), text only."""
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    paths = [ROOT / p for p in out.split("\0") if p]
    # (.gitignore names the clone's own work/ folder, anchored at the root)
    return [p for p in paths if p.is_file() and p.suffix in TEXT and p.name != ".gitignore"]


def outside_references(text: str) -> list[str]:
    """What in ``text`` cites a file outside the repository."""
    return [f"{what}: {m.group(0)!r}" for what, pattern in OUTSIDE for m in pattern.finditer(text)]


def links_out(text: str, where: str) -> list[str]:
    """The relative links of a markdown file at ``where`` (a path inside the repository) that lead out of it."""
    found = []
    for target in LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith(("#", "/")):
            continue
        path = posixpath.normpath(posixpath.join(posixpath.dirname(where), target.split("#")[0]))
        if path == ".." or path.startswith("../"):
            found.append(f"a link out of the repository: {target}")
    return found


def test_no_file_cites_a_file_outside_the_repository():
    files = repository_files()
    assert len(files) > 100 and any(p.name == "CONTRIBUTING.md" for p in files)
    found = []
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        rel = path.relative_to(ROOT).as_posix()
        problems = outside_references(text) + (links_out(text, rel) if path.suffix == ".md" else [])
        found += [f"{rel}: {p}" for p in problems]
    assert not found, "say what it means in the repository's own words, or put it in a page of docs/:\n" + \
        "\n".join(found)


@pytest.mark.parametrize("text", [
    "Read the plan in ../" + "shared/DES" + "IGN.md first.",
    "as measured (DES" + "IGN.md section 7)",
    "the rule (DES" + "IGN §5, \"Test the learner's view\")",
    "see /" + "work/shared/notes.txt",
])
def test_a_reference_outside_is_found(text):
    assert outside_references(text)


def test_links_out_of_the_repository_are_found_and_links_inside_are_not():
    assert links_out("[plan](../../" + "elsewhere/plan.md)", "docs/page.md")
    assert links_out("[plan](../plan.md)", "README.md")
    assert not links_out("[README](../README.md) [speed](speed.md#gpt-2) [x](https://example.org/a/../b)",
                         "docs/page.md")
    assert not outside_references("the design of a check; /tmp/work/x; ~/work/ is the learner's; work/ folder")
