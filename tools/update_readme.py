"""Rewrite the README's rule table from the rule classes (``jitfix.rules.readme_table``).

    python tools/update_readme.py
"""

from __future__ import annotations

import re
from pathlib import Path

from jitfix.rules import readme_table

README = Path(__file__).resolve().parent.parent / "README.md"
TABLE = re.compile(r"\| code \| name \| fixable \| finds \|\n(?:\|.*\|\n)+")


def main() -> None:
    text = README.read_text(encoding="utf-8")
    updated, count = TABLE.subn(lambda match: readme_table(), text, count=1)
    if count != 1:
        raise SystemExit("README.md: no rule table found")
    README.write_text(updated, encoding="utf-8")


if __name__ == "__main__":
    main()
