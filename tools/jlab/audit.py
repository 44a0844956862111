"""axe-core in the page: after Run All, the notebook's own outputs — widgets, pictures, captions,
tables, markdown — are audited and counted by impact; JupyterLab's interface around them (toolbars, the file
browser, cell editors) is audited too but reported apart and not counted: it is not this series' to fix.

axe-core is the copy that ships inside ``axe-playwright-python`` (pinned in requirements.txt), injected into the page
from disk: nothing is fetched. Rules: axe's default set (WCAG 2.0/2.1 A and AA, and best practices)."""

from __future__ import annotations

IMPACTS = ("critical", "serious", "moderate", "minor")
OURS = (".jp-OutputArea-output", ".jp-MarkdownOutput")   # what the notebook shows; the rest is JupyterLab's


def _inject(page) -> str:
    from axe_playwright_python.base import AXE_SCRIPT

    if not page.evaluate("() => !!window.axe"):
        page.evaluate(AXE_SCRIPT)
    return page.evaluate("() => axe.version")


def _summary(result: dict) -> dict:
    counts = {impact: 0 for impact in IMPACTS}
    found = []
    for v in result["violations"]:
        counts[v["impact"] or "minor"] += len(v["nodes"])
        found.append({"rule": v["id"], "impact": v["impact"], "nodes": len(v["nodes"]), "help": v["help"],
                      "where": [" ".join(n["target"]) if isinstance(n["target"], list) else str(n["target"])
                                for n in v["nodes"][:3]]})
    return {"counts": counts, "violations": found}


def audit(page) -> dict:
    """Audit the current notebook panel's outputs and, apart, the page around them. Returns {"axe": version,
    "ours": {"counts": {impact: nodes}, "violations": [...]}, "jupyterlab": {...}}."""
    version = _inject(page)
    page.evaluate("() => window.jupyterapp.shell.currentWidget.node.setAttribute('data-gt-audit', '')")
    ours = {"include": [[f"[data-gt-audit] {sel}"] for sel in OURS]}
    rest = {"include": [["body"]], "exclude": [[sel] for sel in OURS]}
    options = {"resultTypes": ["violations"]}
    run = "([context, options]) => axe.run(context, options)"
    try:
        return {"axe": version, "ours": _summary(page.evaluate(run, [ours, options])),
                "jupyterlab": _summary(page.evaluate(run, [rest, options]))}
    finally:
        page.evaluate("() => window.jupyterapp.shell.currentWidget.node.removeAttribute('data-gt-audit')")


def serious(found: dict) -> list[str]:
    """The critical and serious violations in the notebook's own outputs, one line each."""
    return [f"{v['impact']}: {v['rule']} x{v['nodes']} ({v['help']}; e.g. {v['where'][0]})"
            for v in found["ours"]["violations"] if v["impact"] in ("critical", "serious")]
