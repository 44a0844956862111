"""Every PyTorch operation the series uses, with the place that first shows it.

No PyTorch is assumed: each operation below is shown — on a tiny tensor, in a sentence, or in a comment beside its
first use — at or before the first cell, hint or exercise that uses it. To see the list in a notebook:

    from helpers import idioms
    idioms.table()                # every operation, in the order you meet them (a cell's last line: a table)
    idioms.table("05")            # those a notebook shows first

Each entry: (the operation, the notebook that first shows it, the section it is in, what it does), read from the
notebooks' manifests (helpers/series/). An operation written ``.name`` is a method or attribute of a tensor (or of a
model, or an optimizer); ``torch.name`` and ``F.name`` (``torch.nn.functional``) are functions; ``dim=`` and
``keepdim=`` are the arguments many of them take.
"""

from __future__ import annotations

from helpers import series

# (the operation, the notebook that first shows it, the section, what it does), in the series' order: each notebook's
# manifest lists those it shows first (helpers/series/, the [idioms] table)
IDIOMS: list[tuple[str, str, str, str]] = [(i.name, nb.number, i.section, i.does)
                                           for nb in series.notebooks() for i in nb.idioms]

WHERE = {idiom: (notebook, section) for idiom, notebook, section, _ in IDIOMS}


# sections whose heading goes on with a formula after the words kept here
CUT = {"How close is", "5. Why", "Why divide by", "Does a model without"}


class Table(str):
    """A markdown table that a notebook shows as a table when it is a cell's last line (``print`` gives the text)."""

    def _repr_markdown_(self) -> str:
        return str(self)


def table(notebook: str | None = None) -> Table:
    """The list as a markdown table (only what `notebook`, e.g. "05", shows first, if given); as a cell's last line
    it is shown as a table. A section named up to a formula in its heading ends in "…"."""
    rows = ["| PyTorch | what it does | first shown in |", "|---|---|---|"]
    for idiom, nb, section, says in IDIOMS:
        if notebook is None or nb == notebook:
            rows.append(f"| `{idiom}` | {says} | {nb} · {section}{' …' if section in CUT else ''} |")
    return Table("\n".join(rows))
