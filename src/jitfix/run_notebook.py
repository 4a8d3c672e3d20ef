"""``jitfix run NOTEBOOK.ipynb``: run a notebook's code cells top to bottom in one process,
as a kernel would, for the run's hook to watch.

The cells run as the one module jitfix reads them as (``notebooks.code_view``), compiled
under the notebook's own path, so a failure's file and line are the view's: the same lines
the analysis plans its fixes on. IPython syntax is not Python: a line magic or shell escape
does nothing here, and a cell that starts with a cell magic is left out (as the analysis
leaves it out).

    python -m jitfix.run_notebook NOTEBOOK.ipynb
"""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

from jitfix import notebooks


def main(path: str) -> None:
    text = Path(path).read_text(encoding="utf-8")
    view = notebooks.code_view(notebooks.read(text, path))
    module = types.ModuleType("__main__")
    module.__file__ = path
    module.__dict__["__jitfix_magic__"] = lambda number: None  # a magic's placeholder: not run
    sys.modules["__main__"] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # as a kernel started in its folder
    exec(compile(view.text, os.path.realpath(path), "exec"), module.__dict__)


if __name__ == "__main__":
    main(sys.argv[1])
