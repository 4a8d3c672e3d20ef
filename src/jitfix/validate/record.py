"""``--record COMMAND``: run the user's command (``pytest tests/``, ``python train.py``) with
a hook that saves the concrete arguments the functions under validation are called with."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

HOOK = Path(__file__).with_name("recorder_hook.py")


@dataclass
class Recording:
    folder: str
    calls: int  # distinct calls saved
    returncode: int | None  # the command's exit code (None: it timed out)
    output: str


def record_calls(command: str, targets: dict[str, list[str]], folder: str, timeout: float) -> Recording:
    """Run ``command`` in a shell; calls of ``targets`` (file path -> function names) land in ``folder``."""
    hook_folder = Path(folder, "hook")
    calls_folder = Path(folder, "calls")
    hook_folder.mkdir(parents=True, exist_ok=True)
    calls_folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(HOOK, hook_folder / "sitecustomize.py")
    settings = Path(folder, "record.json")
    settings.write_text(json.dumps({"folder": str(calls_folder),
                                    "targets": {str(Path(p).resolve()): names for p, names in targets.items()}}))
    environment = dict(os.environ)
    environment["JITFIX_RECORD"] = str(settings)
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(hook_folder), environment.get("PYTHONPATH")]))
    environment.setdefault("JAX_PLATFORMS", "cpu")
    environment["PYTHONDONTWRITEBYTECODE"] = "1"
    try:
        process = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=timeout,
                                 env=environment, stdin=subprocess.DEVNULL)
        returncode, output = process.returncode, process.stdout + process.stderr
    except subprocess.TimeoutExpired as expired:
        returncode = None
        output = "".join(part.decode("utf-8", "replace") if isinstance(part, bytes) else (part or "")
                         for part in (expired.stdout, expired.stderr))
    return Recording(str(calls_folder), len(list(calls_folder.glob("*.pkl"))), returncode, output)

