"""Sphinx's settings for the course site. tools/site.py copies this file next to the pages it prepares and runs
sphinx-build from the site's own environment (site/requirements.txt): see ``bash run.sh site``."""

project = "Gentle Transformers"
author = "the Gentle Transformers authors"
html_title = "Gentle Transformers"
extensions = ["myst_nb"]
exclude_patterns = ["_build", "**.ipynb_checkpoints"]

# The notebooks arrive executed (tools/site.py ran them, once, with the exercises blank): never again here
nb_execution_mode = "off"
# Their widgets were made static pictures before Sphinx sees them: no widget manager, no require.js from a CDN
nb_ipywidgets_js = {}
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header", "mystnb.unknown_mime_type"]

# Math: MathJax 3 from npm (site/package.json), copied by tools/site.py into _static: nothing fetched to read a page
mathjax_path = "mathjax/tex-svg.js"
# Formulas are no tab stops (a screen reader reads MathJax's hidden MathML in reading order); site.js makes a displayed
# one that is wider than its column, and so scrolls, a tab stop named by its TeX
mathjax3_config = {"tex": {"inlineMath": [["\\(", "\\)"]], "displayMath": [["\\[", "\\]"]]},
                   "options": {"menuOptions": {"settings": {"inTabOrder": False}}}}

html_theme = "sphinx_book_theme"
html_static_path = ["_static"]
html_css_files = ["site.css"]
html_js_files = ["site.js"]
templates_path = ["_templates"]
# the theme's sidebar, its title inside a landmark (site/_templates/gt-home.html)
html_sidebars = {"**": ["gt-home.html", "icon-links.html", "search-button-field.html", "sbt-sidebar-nav.html"]}
html_favicon = "favicon.svg"  # site/favicon.svg, in the model map's colours
html_copy_source = False  # no second copy of every notebook in the site
html_show_sourcelink = False
html_last_updated_fmt = None
html_theme_options = {
    "home_page_in_toc": True,
    "show_toc_level": 2,
    "use_download_button": False,
    "use_fullscreen_button": False,
    "navigation_with_keys": False,
}
