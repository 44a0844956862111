"""The course site: the whole series as static web pages, built offline (``bash run.sh site``).

    python -m tools.site [--out build/site] [--work build/site-src] [--sphinx .venv-site/bin/sphinx-build]

1. Executes every learner copy (``learn/``: the exercises blank) top to bottom on a fresh kernel of this
   environment, one torch thread (nbclient; the widgets' state is kept).
2. Makes each one a page's notebook (``page_notebook``): the Colab cell dropped (it does nothing outside Colab), and
   the check cells (asserts kept collapsed in the notebook: tools/clean.py);
   every explorer's live widget replaced by the picture it drew on execution, its caption (the picture's text
   alternative), the control values it was drawn for and one line on how to move it live (``static_explorer``);
   after each exercise's check, the series' answer folded (``<details>``, closed: opened only by a reader who asks).
3. Writes the landing page (``landing``) from README.md's own text: the promise and who it is for, the model map
   with its text alternative, the notebooks' table and the learner-time estimate, so it cannot drift from README;
   its table of contents lists the pages in the series' order, under the caption each notebook's manifest names
   (helpers/series/, [site] section), then the pages of docs/ a reader may want (``DOC_PAGES``), their links into
   the repository made the site's (``site_links``).
4. Runs Sphinx (MyST-NB, sphinx-book-theme; ``site/conf.py``) from the site's own environment, with MathJax copied
   from npm (``site/node_modules``) into the pages' ``_static``: nothing is fetched at build or view time. The site
   holds only what a reader needs: Sphinx's cache stays with the sources, its build record and the themes' template
   files are taken out (``not_for_readers``).

The site's tools live outside the learner's .venv: ``bash run.sh site`` sets them up (site/requirements.txt into
.venv-site, ``npm ci`` in site/) and says in one sentence what is missing when it cannot."""

from __future__ import annotations

import argparse
import html
import json
import os
import posixpath
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat

from tools.clean import is_check_cell, is_colab_cell
from tools.cloud import binder_url, colab_url, repository

ROOT = Path(__file__).resolve().parent.parent
LEARN = ROOT / "learn"
SITE = ROOT / "site"
README = ROOT / "README.md"
DOCS = ROOT / "docs"
# The pages of docs/ the site shows after the notebooks, in this order (docs/margins.md and docs/check_limit.md are the
# maintainers' records: a link to them goes to the repository)
DOC_PAGES = ("notebooks", "teaching", "cloud", "site", "speed", "accessibility", "testing", "notation", "install")
MATHJAX = SITE / "node_modules" / "mathjax" / "es5"
# What the pages need of MathJax 3 (SVG output: its glyphs are inside the script, so no web font has to load,
# which Chromium refuses from file://): the combined component, and the parts it loads on demand
MATHJAX_PARTS = ("tex-svg.js", "input", "ui", "a11y", "sre", "output/svg")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
EXERCISE_ID = re.compile(r"ex(\d\d)_(\d+)_check")


class SiteError(Exception):
    """What stops the build, in one sentence for the person who ran it."""


# --- 1. execution ---------------------------------------------------------------------------------------------------
def execute(path: Path, timeout: int = 900) -> nbformat.NotebookNode:
    """``path`` run top to bottom on a fresh kernel (cwd: the learner copies' folder), its widget state stored."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=timeout, kernel_name="python3", store_widget_state=True,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return nb


# --- 2. the page's notebook -----------------------------------------------------------------------------------------
def _ref(value) -> str | None:
    return value[len("IPY_MODEL_"):] if isinstance(value, str) and value.startswith("IPY_MODEL_") else None


def _models(state: dict, model_id: str) -> list[dict]:
    """The widget ``model_id`` and every widget inside it, depth first, in the order they are shown."""
    model = state.get(model_id)
    if model is None:
        return []
    out = [model]
    for child in model["state"].get("children", []):
        ref = _ref(child)
        if ref:
            out += _models(state, ref)
    return out


def _control_value(s: dict) -> str | None:
    """A control's value as its readout shows it (None for what is not a control)."""
    if "index" in s and "_options_labels" in s:  # ToggleButtons, RadioButtons
        index = s["index"]
        return s["_options_labels"][index] if isinstance(index, int) else None
    value = s.get("value")
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, str):
        return f"“{value}”"
    if isinstance(value, (int, float)):
        return f"{value:g}" if isinstance(value, float) else str(value)
    if isinstance(value, list) and value and all(isinstance(v, (int, float)) for v in value):  # a range slider
        return " to ".join(f"{v:g}" for v in value)
    return None


def live_line(notebook: str) -> str:
    """The one line under an explorer's picture: how to move it."""
    repo, ref = repository()
    binder, colab = html.escape(binder_url(repo, ref, notebook)), html.escape(colab_url(repo, ref, notebook))
    return (f'<p class="gt-live"><strong>This picture was drawn when the page was built.</strong> To move the '
            f"controls: <code>git clone https://github.com/{repo}</code> then <code>bash run.sh lab</code> (README, "
            f'&ldquo;Two commands&rdquo;), or open this notebook on <a href="{binder}">Binder</a> '
            f'or in <a href="{colab}">Colab</a>.</p>')


def static_explorer(state: dict, model_id: str, notebook: str) -> str | None:
    """An explorer (a box with class gt-explorer) as a static figure: its controls' values as drawn, its pictures
    and caption exactly as the kernel wrote them, and how to move it live. None if ``model_id`` is no explorer."""
    models = _models(state, model_id)
    if not models or "gt-explorer" not in models[0]["state"].get("_dom_classes", []):
        return None
    controls, htmls = [], []
    for m in models[1:]:
        s, name = m["state"], m["model_name"]
        if name == "HTMLModel":
            htmls.append(s.get("value", ""))
        elif name not in ("HBoxModel", "VBoxModel", "BoxModel", "LabelModel") and s.get("description"):
            value = _control_value(s)
            if value is not None:
                controls.append(f"{html.escape(s['description'])} = {html.escape(value)}")
    parts = ['<div class="gt-static-explorer">']
    if controls:
        parts.append(f'<p class="gt-controls">Explorer, as drawn for: {"; ".join(controls)}.</p>')
    parts += htmls
    parts.append(live_line(notebook))
    parts.append("</div>")
    return "\n".join(parts)


def static_widget(state: dict, model_id: str, plain: str) -> str:
    """Any other widget (a progress bar): the words it showed at the end, else its text form."""
    words = []
    for m in _models(state, model_id):
        s = m["state"]
        if m["model_name"] == "HTMLModel" and s.get("value"):
            words.append(s["value"])
        elif m["model_name"] in ("FloatProgressModel", "IntProgressModel") and s.get("max"):
            words.append(f'<progress value="{s.get("value", 0)}" max="{s["max"]}" '
                         f'aria-label="{html.escape(s.get("description") or "progress")}"></progress>')
    if words:
        return '<div class="gt-static-widget">' + " ".join(words) + "</div>"
    return f"<pre>{html.escape(plain)}</pre>"


def answer_cell(number: str) -> nbformat.NotebookNode:
    """The series' answer to exercise ``number``, folded: a closed ``<details>`` (one HTML line, so that Markdown
    keeps it whole), as ``checks.answer`` gives it in a kernel after an attempt."""
    from helpers.checks.solutions import SOLUTIONS

    s = SOLUTIONS[number]
    code = html.escape(s["code"]).replace("\n", "&#10;")
    return nbformat.v4.new_markdown_cell(
        '<p class="gt-on-page">On this page the exercise is blank, as every learner starts it, so its check says '
        '"not written yet". Write it in your own copy of the notebook (<code>bash run.sh lab</code>, Binder or Colab: '
        'the links under each explorer), where the check runs on your code.</p>'
        f'<details class="gt-answer"><summary>The series\' answer to exercise {number} · {html.escape(s["title"])} '
        f"(try it first: in a notebook, <code>checks.answer(\"{number}\")</code> after an attempt shows the same)"
        f'</summary><pre class="gt-answer-code"><code>{code}</code></pre></details>')


def page_notebook(nb: nbformat.NotebookNode, notebook: str) -> nbformat.NotebookNode:
    """An executed learner copy made a static page's notebook (the module's docstring, step 2)."""
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    cells = []
    for cell in nb.cells:
        if is_colab_cell(cell) or is_check_cell(cell):   # a check cell: asserts, collapsed in the notebook
            continue
        if cell.cell_type == "code":
            cell.metadata.pop("widgets", None)
            for out in cell.get("outputs", []):
                data = out.get("data", {})
                if WIDGET_VIEW in data:
                    model_id = data[WIDGET_VIEW]["model_id"]
                    plain = "".join(data.get("text/plain", ""))
                    page = static_explorer(state, model_id, notebook) or static_widget(state, model_id, plain)
                    out["data"] = {"text/html": page, "text/plain": plain}
        cells.append(cell)
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        m = EXERCISE_ID.fullmatch(grade_id)
        if m:
            cells.append(answer_cell(f"{int(m[1])}.{m[2]}"))
    nb.cells = cells
    nb.metadata.pop("widgets", None)  # no widget state: MyST-NB then loads no widget manager (no require.js)
    return nb


# --- 3. the landing page --------------------------------------------------------------------------------------------
def readme_section(text: str, heading: str) -> str:
    """The body of README's section ``heading`` (e.g. "### Learner time"), up to the next heading of any level."""
    lines = text.splitlines()
    start = lines.index(heading) + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("#")), len(lines))
    return "\n".join(lines[start:end]).strip()


def promise(text: str) -> str:
    """README's opening (the promise and who it is for): after the badges, before "## Two commands"."""
    body = text.split("<!-- badges: end -->", 1)[1]
    return body.split("\n## ", 1)[0].strip()


LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")
REMOTE_IMAGE = re.compile(r"!\[([^\]]*)\]\((?:https?:)?//[^)\s]+\)")


def site_links(markdown: str, names: list[str], base: str = "") -> str:
    """Links into the repository made the site's; ``base`` is the folder they are written from ("" for README, "docs"
    for a page of docs/). A notebook (notebooks/NN.ipynb or learn/NN.ipynb) -> its page, or its name alone where the
    page is not built (a build of a few notebooks); a page of DOC_PAGES -> that page; README -> the landing page;
    docs/model_map.svg -> the site's copy; any other file -> the file in the repository on GitHub (the branch of
    pyproject.toml). Links to other hosts and to anchors of the same page stay as they are; an image from another host
    (a Binder or Colab badge) becomes its words, since the site loads nothing from elsewhere."""
    repo, ref = repository()

    def link(m: re.Match) -> str:
        bang, text, target = m[1], m[2], m[3]
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            return m[0]
        path, _, anchor = target.partition("#")
        path = posixpath.normpath(posixpath.join(base, path))
        hit = re.fullmatch(r"(?:notebooks|learn)/(\d\d_\w+)\.ipynb", path)
        if hit:
            return f"{bang}[{text}]({hit[1]}.ipynb)" if hit[1] in names else text
        hit = re.fullmatch(r"docs/(\w+)\.md", path)
        if hit and hit[1] in DOC_PAGES:
            return f"{bang}[{text}]({hit[1]}.md{'#' + anchor if anchor else ''})"
        if path == "README.md":
            return f"{bang}[{text}](index.md)"
        if path == "docs/model_map.svg":
            return f"{bang}[{text}](model_map.svg)"
        return f"{bang}[{text}](https://github.com/{repo}/blob/{ref}/{path}{'#' + anchor if anchor else ''})"
    markdown = REMOTE_IMAGE.sub(lambda m: m[1], markdown)
    return LINK.sub(link, markdown)


def doc_page(name: str, names: list[str]) -> str:
    """docs/NAME.md as the site's page NAME.md: its links made the site's."""
    return site_links((DOCS / f"{name}.md").read_text(encoding="utf-8"), names, base="docs")


def toctrees(names: list[str]) -> str:
    """The landing page's tables of contents: the notebooks built, in the series' order, under their manifests' [site]
    section captions; then the pages of docs/."""
    from helpers import series

    sections: dict[str, list[str]] = {}
    for nb in series.notebooks():
        if nb.name in names:
            sections.setdefault(nb.site_section, []).append(nb.name)
    missing = sorted(set(names) - {n for pages in sections.values() for n in pages})
    if missing:
        raise SiteError(f"no manifest (helpers/series/) for {', '.join(missing)}: its place on the site is unknown.")
    sections["About the series"] = list(DOC_PAGES)
    return "\n\n".join(f"```{{toctree}}\n:maxdepth: 1\n:caption: {caption}\n:hidden:\n\n" + "\n".join(pages) + "\n```"
                       for caption, pages in sections.items())


def landing(names: list[str]) -> str:
    """index.md: quoted from README.md (README's words, so they stay current), then the pages in series order."""
    text = README.read_text(encoding="utf-8")
    repo, ref = repository()
    notebooks = readme_section(text, "## The notebooks")
    map_line = next(line for line in notebooks.splitlines() if line.startswith("![") and "model_map.svg" in line)
    table = "\n".join(line for line in notebooks.splitlines() if line.startswith("|"))
    before_table, after_table = notebooks.split(table, 1) if table else (notebooks, "")
    before_table = before_table.split(map_line, 1)[1].strip()  # what README says under the map
    return "\n\n".join([
        "# Gentle Transformers",
        site_links(promise(text), names),
        map_line.replace("](docs/model_map.svg)", "](model_map.svg)"),
        "## The notebooks",
        "Each page is a notebook of the series, run from top to bottom when the site was built, with the exercises "
        "blank as a learner gets them (each check then says \"not written yet\"; the series' answer is folded under "
        "it). The explorers show the picture they drew then; to move them, run the series yourself: "
        f"`git clone https://github.com/{repo}` then `bash run.sh lab`, or open it on "
        f"[Binder]({binder_url(repo, ref)}) (README, \"Two commands\", and [Binder and Colab](cloud.md)).",
        site_links(before_table, names),
        # (a class for the site's CSS: on a phone, one block per notebook instead of a table 5 columns wide)
        "```{container} gt-notebooks\n" + site_links(table, names) + "\n```",
        site_links(after_table.strip(), names),
        "### Learner time",
        site_links(readme_section(text, "### Learner time"), names),
        toctrees(names),
    ]) + "\n"


# --- 4. Sphinx ------------------------------------------------------------------------------------------------------
def copy_mathjax(static: Path) -> None:
    if not (MATHJAX / "tex-svg.js").is_file():
        raise SiteError("MathJax is missing (site/node_modules): run `npm ci` in site/, which `bash run.sh site` "
                        "does when npm is installed.")
    for part in MATHJAX_PARTS:
        src, dst = MATHJAX / part, static / "mathjax" / part
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            shutil.copy2(src, dst)


def not_for_readers(out: Path) -> list[Path]:
    """What Sphinx leaves in the site that no reader needs: its build record (.buildinfo), the themes' Jinja macro
    files, copied into _static as they are (unrendered: an HTML page whose links go nowhere), and the empty folder
    of page sources (there are none: html_copy_source is off)."""
    found = [out / ".buildinfo"] if (out / ".buildinfo").exists() else []
    found += [p for p in sorted((out / "_static").rglob("*.html"))
              if "{%" in p.read_text(encoding="utf-8", errors="replace")]
    return found + [p for p in [out / "_sources"] if p.is_dir() and not any(p.iterdir())]


def build(out: Path, work: Path, sphinx: Path, names: list[str] | None = None, log=print) -> dict:
    """The whole build; returns the seconds each step took."""
    if not sphinx.is_file():
        raise SiteError(f"the site's tools are not installed ({sphinx} is missing): `bash run.sh site` installs "
                        "site/requirements.txt into .venv-site, which needs the network once.")
    paths = sorted(LEARN.glob("*.ipynb"))
    if names:
        paths = [p for p in paths if p.stem in names or p.name in names]
    times: dict = {}
    if work.exists():
        shutil.rmtree(work)
    (work / "_static").mkdir(parents=True)
    copy_mathjax(work / "_static")
    shutil.copy2(SITE / "conf.py", work / "conf.py")
    shutil.copy2(SITE / "site.css", work / "_static" / "site.css")
    shutil.copy2(SITE / "site.js", work / "_static" / "site.js")
    shutil.copytree(SITE / "_templates", work / "_templates")
    shutil.copy2(SITE / "favicon.svg", work / "favicon.svg")
    shutil.copy2(ROOT / "docs" / "model_map.svg", work / "model_map.svg")
    start = time.perf_counter()
    for path in paths:
        t = time.perf_counter()
        nb = execute(path)
        times[path.name] = round(time.perf_counter() - t, 1)
        log(f"==> executed {path.name} in {times[path.name]} s")
        nbformat.write(page_notebook(nb, path.name), work / path.name)
    times["execute"] = round(time.perf_counter() - start, 1)
    (work / "index.md").write_text(landing([p.stem for p in paths]), encoding="utf-8")
    for name in DOC_PAGES:
        (work / f"{name}.md").write_text(doc_page(name, [p.stem for p in paths]), encoding="utf-8")
    t = time.perf_counter()
    if out.exists():
        shutil.rmtree(out)
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    # Sphinx's cache of the parsed pages (every answer in the clear) is kept with the sources, out of the site
    result = subprocess.run([str(sphinx), "-b", "html", "-q", "-W", "--keep-going", "-j", "1",
                             "-d", str(work / ".doctrees"), str(work), str(out)],
                            env=env, capture_output=True, text=True)
    times["sphinx"] = round(time.perf_counter() - t, 1)
    if result.returncode != 0:
        sys.stderr.write(result.stdout + result.stderr)
        raise SiteError(f"Sphinx stopped (exit {result.returncode}); its messages are above.")
    for path in not_for_readers(out):
        path.rmdir() if path.is_dir() else path.unlink()
    log(f"==> Sphinx wrote {out} in {times['sphinx']} s")
    return times


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.site", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "build" / "site"))
    parser.add_argument("--work", default=str(ROOT / "build" / "site-src"))
    parser.add_argument("--sphinx", default=str(ROOT / ".venv-site" / "bin" / "sphinx-build"))
    parser.add_argument("names", nargs="*", help="only these notebooks (e.g. 01_bigrams); default: all")
    args = parser.parse_args(argv)
    try:
        times = build(Path(args.out).resolve(), Path(args.work).resolve(), Path(args.sphinx), args.names)
    except SiteError as e:
        print(f"run.sh site: {e}", file=sys.stderr)
        return 1
    print(f"==> The course site is in {args.out}: open {Path(args.out) / 'index.html'} "
          f"(executing {times['execute']} s, Sphinx {times['sphinx']} s)")
    print(json.dumps(times), file=sys.stderr if os.environ.get("GT_SITE_QUIET") else sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
