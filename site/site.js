/* The course site's one script (tools/site.py copies it into _static; site/conf.py loads it).

   1. Formulas are no tab stops (conf.py turns MathJax's "inTabOrder" off): a screen reader reads each from MathJax's
      hidden MathML in reading order, and the keyboard need not stop at every formula. A displayed formula wider than
      its column (on a phone) scrolls sideways in its own box, though, and a box the keyboard must scroll has to be
      reached by it: such a formula is made a tab stop, as the theme does for wide code, named by its TeX.
   2. A table wider than its column (in the text or in a cell's output) scrolls in the theme's box, which the theme
      then makes a tab stop: the box is made a named region too ("Table: " and its column headings), so that the
      keyboard's stop says what it is.
   3. On a narrow screen the landing page's table of notebooks reads as one block per notebook (site.css); each cell
      is labelled with its column's heading (data-label), which the CSS shows before it. */
(() => {
  const wideFormulas = () => {
    for (const item of MathJax.startup.document.math) {
      const box = item.typesetRoot;
      if (!item.display || !box) continue;
      if (box.scrollWidth > box.clientWidth + 1) {
        box.tabIndex = 0;
        box.setAttribute("role", "math");
        box.setAttribute("aria-label", item.math.replace(/\s+/g, " ").trim());
      } else if (box.getAttribute("role") === "math") {
        box.tabIndex = -1;
        box.removeAttribute("role");
        box.removeAttribute("aria-label");
      }
    }
  };

  const wideTables = () => {
    for (const box of document.querySelectorAll(".pst-scrollable-table-container, .cell_output > .output")) {
      const table = box.querySelector("table");
      if (!table) continue;
      const row = table.querySelector("thead tr") || table.querySelector("tr");
      const heads = row ? [...row.children].map((c) => c.textContent.trim()).filter(Boolean) : [];
      if (box.scrollWidth > box.clientWidth + 1 || box.scrollHeight > box.clientHeight + 1) {
        box.setAttribute("role", "region");
        box.setAttribute("aria-label", heads.length ? `Table: ${heads.join(", ")}` : "Table");
      } else {
        box.removeAttribute("role");
        box.removeAttribute("aria-label");
      }
    }
  };

  const labelCells = () => {
    for (const table of document.querySelectorAll(".gt-notebooks table")) {
      const heads = [...table.querySelectorAll("thead th")].map((th) => th.textContent.trim());
      for (const row of table.querySelectorAll("tbody tr")) {
        [...row.children].forEach((cell, i) => { if (heads[i]) cell.dataset.label = heads[i]; });
      }
    }
  };

  document.addEventListener("DOMContentLoaded", labelCells);
  window.addEventListener("load", () => {
    const math = window.MathJax && MathJax.startup && MathJax.startup.promise;
    const wide = () => { wideTables(); if (math) wideFormulas(); };
    (math ? MathJax.startup.promise : Promise.resolve()).then(() => {
      wide();
      let timer = null;
      window.addEventListener("resize", () => { clearTimeout(timer); timer = setTimeout(wide, 200); });
    });
  });
})();
