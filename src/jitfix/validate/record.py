"""``--record COMMAND``: run the user's command (``pytest tests/``, ``python train.py``) with
a hook that saves the concrete arguments the functions under validation are called with."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from jitfix.validate.process import environment, run

HOOK = Path(__file__).with_name("recorder_hook.py")


@dataclass
class Recording:
    folder: str
    calls: int  # distinct calls saved
    returncode: int | None  # the command's exit code (None: it timed out)
    output: str


def record_calls(command: str, targets: dict[str, list[str]], folder: str, timeout: float,
                 pass_env: tuple[str, ...] = (), memory_limit: int | None = None, *, cwd: str | None = None,
                 extra_env: dict[str, str] | None = None) -> Recording:
    """Run ``command`` in a shell (in ``cwd``, with ``extra_env`` set); calls of ``targets``
    (file path -> function names) land in ``folder``."""
    hook_folder = Path(folder, "hook")
    calls_folder = Path(folder, "calls")
    hook_folder.mkdir(parents=True, exist_ok=True)
    calls_folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(HOOK, hook_folder / "sitecustomize.py")
    settings = Path(folder, "record.json")
    settings.write_text(json.dumps({"folder": str(calls_folder),
                                    "targets": {str(Path(p).resolve()): names for p, names in targets.items()}}))
    extra_env = dict(extra_env or {})
    python_path = os.pathsep.join(filter(None, [str(hook_folder), extra_env.pop("PYTHONPATH", None),
                                                os.environ.get("PYTHONPATH")]))
    env = environment({**extra_env, "JITFIX_RECORD": str(settings), "PYTHONPATH": python_path}, pass_env)
    # The whole process group goes at the time limit (a shell's children too, not the shell alone).
    outcome = run(command, shell=True, timeout=timeout, env=env, memory_limit=memory_limit, cwd=cwd)
    return Recording(str(calls_folder), len(list(calls_folder.glob("*.pkl"))), outcome.returncode,
                     outcome.stdout + outcome.stderr)

