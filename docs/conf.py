"""Sphinx configuration of fastprox's manual: Markdown pages (MyST), the API by autodoc
with numpydoc docstrings, built with warnings as errors (tests/test_docs.py)."""
import re

# autodoc imports fastprox as Python finds it: the installed package (pip install ".[docs]"),
# or a checkout built in place with PYTHONPATH=src.

project = "fastprox"
author = "the fastprox developers"
copyright = "fastprox developers"
extensions = ["myst_parser", "sphinx.ext.autodoc", "numpydoc"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]
html_theme = "furo"
myst_heading_anchors = 3
numpydoc_show_class_members = False


def html_anchors_as_targets(app, docname, source):
    """The pages' HTML anchors (``<a id="x"></a>``, which GitHub renders) as MyST
    targets, so that their ``[...](#x)`` links resolve in the manual too. Sphinx's
    labels are global: a page's are prefixed with its name (``contract-x``), and
    its links to them with it."""
    prefix = docname.replace("/", "-")
    names = set(re.findall(r'^<a id="([^"]+)"></a>$', source[0], flags=re.M))
    text = re.sub(r'^<a id="([^"]+)"></a>$', rf"({prefix}-\1)=", source[0], flags=re.M)
    source[0] = re.sub(r"\]\(#([^)]+)\)", lambda m: f"](#{prefix}-{m.group(1)})" if m.group(1) in names
                       else m.group(0), text)


def sklearn_refs_as_text(app, what, name, obj, options, lines):
    """The methods inherited from scikit-learn (``score``) keep their docstrings, whose
    ``:ref:`` roles point into scikit-learn's manual: their text stands alone here."""
    if getattr(obj, "__module__", "").startswith("sklearn"):
        lines[:] = [re.sub(r":ref:`([^`<]+?)\s*(<[^>]*>)?`", r"\1", line) for line in lines]


def setup(app):
    app.connect("source-read", html_anchors_as_targets)
    app.connect("autodoc-process-docstring", sklearn_refs_as_text)
