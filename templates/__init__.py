"""jinja2 templates: generated code blocks and HTML reports, rendered by name.

The templates ship inside the package (package data), so a plain, non-editable
install has them; jinja2 is imported only when something is rendered.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

FOLDER = Path(__file__).parent


@lru_cache(maxsize=None)
def _environment():
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(FOLDER),
        autoescape=jinja2.select_autoescape(("html", "html.j2")),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )


def render(name: str, **context) -> str:
    return _environment().get_template(name).render(**context)
