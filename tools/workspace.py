"""The learner's own workspace: a copy of every learner notebook (exercises blank) that updates never overwrite.

    python -m tools.workspace [FOLDER]     bring FOLDER (default: GT_WORK, else work/ in the clone) up to date

`bash run.sh lab` and `bash run.sh notebook` run it before opening the series in FOLDER. The series' learner copies
are learn/*.ipynb (made from notebooks/ by `python -m tools.notebooks clean`: the solutions cleared, as nbgrader
releases them). For each of them:

- not in the workspace yet (a new learner, a notebook added to the series, or a copy the learner deleted to start
  over): it is copied in;
- in the workspace, and the series' copy is the one it was made from: left alone;
- the series' copy changed since (a `git pull`, a new version) and the learner's file is still byte for byte the
  copy it was given (never saved): it is replaced by the new one, since nothing in it is the learner's;
- the series' copy changed and the learner's file is their own work: it is left as it is, and the new version is
  written beside it as NAME.new-XXXXXX.ipynb (XXXXXX from its content; -2, -3, ... added where that name is
  taken), to open and compare, or to delete (a new version deleted is not offered again; the next change is).
  Running cells counts as a change: Jupyter saves the outputs into the file.

What each file was made from is kept in FOLDER/.series.json (name -> sha256 of the copy given; and of the versions
offered beside). Nothing here ever writes over a file of the learner's.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LEARN = ROOT / "learn"
RECORD = ".series.json"
OFFERED = "offered beside"  # the record's entry: name -> {sha256, file} of the new version last put beside theirs


def default_folder() -> Path:
    return Path(os.environ.get("GT_WORK") or ROOT / "work").expanduser().resolve()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass
class Report:
    """What one sync did, file by file (names of the series' notebooks)."""
    copied: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    offered: dict[str, str] = field(default_factory=dict)  # name -> the new version's file, written beside it now
    waiting: dict[str, str] = field(default_factory=dict)  # name -> the new version's file, written there before
    kept: list[str] = field(default_factory=list)

    def lines(self, folder: Path) -> list[str]:
        out = []
        if self.copied:
            out.append(f"==> Your workspace {folder}: {len(self.copied)} notebook(s) copied in "
                       f"({', '.join(self.copied)})")
            if not (self.kept or self.updated or self.offered or self.waiting):
                out.append("    These are your own copies, with the exercises blank: work in them. Updating the series "
                           "never writes over them (README, \"Your own copies\").")
        for name in self.updated:
            out.append(f"==> {name}: the series' new version replaced your copy, which had not changed since it was "
                       "copied in")
        for name, beside in self.offered.items():
            out.append(f"==> {name} changed in the series. Your copy has changed too (edits, or outputs saved when "
                       f"cells ran), so it is left as it is; the new version is beside it as {beside}. Open both to "
                       "compare; to start over from the new one, rename yours.")
        for name, beside in self.waiting.items():
            out.append(f"==> {name}: your copy is kept; the series' newer version is still beside it as {beside}")
        if not out:
            out.append(f"==> Your workspace {folder} is up to date ({len(self.kept)} notebooks: your copies)")
        return out


def read_record(path: Path) -> dict:
    """The record, or {} if there is none or it cannot be read (a damaged one is kept as .series.json.bad): without
    it every copy that differs from the series counts as the learner's, so nothing is lost."""
    if not path.exists():
        return {}
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(record, dict):
            return record
    except (ValueError, UnicodeDecodeError):
        pass
    path.replace(path.with_name(path.name + ".bad"))
    return {}


def free_name(folder: Path, source: Path, new: str) -> Path:
    """NAME.new-XXXXXX.ipynb, or NAME.new-XXXXXX-2.ipynb, ... if that file exists (the learner may work in it)."""
    for n in range(1, 1000):
        beside = folder / f"{source.stem}.new-{new[:6]}{'' if n == 1 else f'-{n}'}{source.suffix}"
        if not beside.exists():
            return beside
    raise FileExistsError(f"{folder} holds 999 new versions of {source.name}: delete some")


def sync(folder: Path, series: Path = LEARN) -> Report:
    """Bring the workspace `folder` up to date with the learner copies in `series` (see the module's text)."""
    sources = sorted(series.glob("*.ipynb"))
    if not sources:
        raise FileNotFoundError(f"no learner notebooks in {series}: run `python -m tools.notebooks clean`")
    folder.mkdir(parents=True, exist_ok=True)
    record_path = folder / RECORD
    record = read_record(record_path)
    report = Report()
    for source in sources:
        name, new = source.name, digest(source)
        mine = folder / name
        if not mine.exists():
            shutil.copyfile(source, mine)
            report.copied.append(name)
        elif record.get(name) == new:
            report.kept.append(name)
            continue
        elif (have := digest(mine)) == new:  # already the series' version (a record lost, or a copy made by hand)
            report.kept.append(name)
        elif record.get(name) == have:  # untouched since it was copied in
            shutil.copyfile(source, mine)
            report.updated.append(name)
        else:  # the learner's work (or a copy made before this record existed): never written over
            offered = record.setdefault(OFFERED, {})
            if offered.get(name, {}).get("sha256") != new:
                beside = free_name(folder, source, new)
                shutil.copyfile(source, beside)
                offered[name] = {"sha256": new, "file": beside.name}
                report.offered[name] = beside.name
            elif (folder / offered[name]["file"]).exists():
                report.waiting[name] = offered[name]["file"]
            else:  # offered once and deleted by the learner: not offered again
                report.kept.append(name)
            continue  # the record keeps what the learner's own copy was made from
        record[name] = new
    tmp = record_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(record_path)
    return report


def earlier_edits(root: Path = ROOT) -> list[str]:
    """The series' notebooks a learner changed in place, before the series opened a workspace (git's view)."""
    try:
        run = subprocess.run(["git", "status", "--porcelain", "--", "notebooks"], cwd=root, capture_output=True,
                             text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return []
    return [line[3:] for line in run.stdout.splitlines() if "M" in line[:2]] if run.returncode == 0 else []


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    folder = Path(argv[0]).expanduser().resolve() if argv else default_folder()
    if folder.exists() and not folder.is_dir():
        print(f"workspace: {folder} is a file, not a folder; name another with GT_WORK=/path/to/folder",
              file=sys.stderr)
        return 2
    try:
        report = sync(folder)
    except OSError as e:
        print(f"workspace: could not write your workspace {folder}: {e.strerror or e}. Name another folder with "
              "GT_WORK=/path/to/folder", file=sys.stderr)
        return 1
    print("\n".join(report.lines(folder)))
    edited = earlier_edits() if report.copied else []
    if edited:
        print(f"==> Your earlier edits in the series' own notebooks ({', '.join(edited)}) stay there, untouched. The "
              f"series now opens your copies in {folder}; copy your answers across if you want them there. Before a "
              "`git pull`, `git stash` keeps those edits aside (`git stash pop` brings them back).")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
