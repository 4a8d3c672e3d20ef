"""Running the user's code (validation children, ``--record`` commands) without letting it
take jitfix down with it.

Each command runs in a session (process group) of its own, so a timeout kills everything it
started, grandchildren included, and whatever it leaves running at its end is killed too, as
is every command still running when jitfix is interrupted or terminated (``stop_all``); its
output is read through a bounded buffer; its address space can be capped (not where an
accelerator's runtime is in reach: those reserve far more address space than they use); and
its environment holds what Python, JAX and the accelerator runtimes need, not the caller's
secrets, plus the variables the user names with ``--pass-env``. The platform is the user's:
``JAX_PLATFORMS`` passes through as it is (``--platform`` sets it).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from dataclasses import dataclass

OUTPUT_LIMIT = 1 << 20  # bytes kept of each stream; the rest is read and dropped
# What Python, JAX and a test runner need; everything else is left out unless passed on.
KEPT_VARIABLES = frozenset({"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TEMP", "TMP",
                            "SHELL", "TERM", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "CONDA_PREFIX",
                            "LD_LIBRARY_PATH", "SYSTEMROOT", "COMSPEC", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
                            "OMP_NUM_THREADS", "MKL_NUM_THREADS", "XLA_FLAGS", "CUDA_VISIBLE_DEVICES"})
KEPT_PREFIXES = ("LC_", "JAX_", "XLA_", "PYTEST_", "JITFIX_",
                 # the accelerator runtimes': without its TPU_* settings libtpu waits for a metadata server
                 "TPU_", "LIBTPU_", "PJRT_", "CUDA_", "NVIDIA_", "NCCL_", "ROCR_", "HIP_")
# Device files of an accelerator runtime JAX may load (TPU, NVIDIA, AMD).
ACCELERATOR_DEVICES = ("/dev/accel", "/dev/vfio", "/dev/nvidia", "/dev/kfd")


def default_memory_limit() -> int | None:
    """Half of the machine's memory, in bytes (None where it cannot be read)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError, AttributeError):
        return None


def accelerator_in_reach() -> bool:
    """Whether the user's code may run on an accelerator: ``JAX_PLATFORMS`` names one, or it
    is not set and the machine has an accelerator's device files. Such a child may hold the
    device (one at a time) and needs its address space uncapped."""
    platforms = os.environ.get("JAX_PLATFORMS", "").strip().lower()
    if platforms:
        return any(name.strip() not in ("cpu", "") for name in platforms.split(","))
    try:
        entries = os.listdir("/dev")
    except OSError:
        return False
    return any(f"/dev/{entry}".startswith(ACCELERATOR_DEVICES) for entry in entries)


def environment(extra: dict[str, str], pass_env: tuple[str, ...] = ()) -> dict[str, str]:
    kept = {name: value for name, value in os.environ.items()
            if name in KEPT_VARIABLES or name.startswith(KEPT_PREFIXES) or name in pass_env}
    kept["PYTHONDONTWRITEBYTECODE"] = "1"  # the user's code writes nothing, .pyc files included
    kept.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    kept.update(extra)
    return kept


@dataclass
class Outcome:
    returncode: int | None  # None: it ran past the time limit and was killed
    stdout: str
    stderr: str


class _Bounded(threading.Thread):
    """Reads a stream to its end, keeping the first ``OUTPUT_LIMIT`` bytes."""

    def __init__(self, stream):
        super().__init__(daemon=True)
        self.stream = stream
        self.kept = bytearray()
        self.dropped = 0

    def run(self) -> None:
        while chunk := self.stream.read(65536):
            room = OUTPUT_LIMIT - len(self.kept)
            self.kept += chunk[:max(room, 0)]
            self.dropped += max(len(chunk) - max(room, 0), 0)

    def text(self) -> str:
        text = self.kept.decode("utf-8", "replace")
        return text + (f"\n[... {self.dropped:,} more bytes of output dropped]\n" if self.dropped else "")


def run(command: list[str] | str, *, timeout: float, env: dict[str, str], memory_limit: int | None = None,
        shell: bool = False, cwd: str | None = None) -> Outcome:
    def limit_memory() -> None:  # in the child, before it runs anything
        if memory_limit:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))

    if not shell and isinstance(command, list):
        command = _program_found(command, cwd)
    if accelerator_in_reach():
        memory_limit = None
    with _LIVE_LOCK:  # (so that `stop_all` sees every command it must stop)
        process = subprocess.Popen(command, shell=shell, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                                   preexec_fn=limit_memory if memory_limit and os.name == "posix" else None)
        _LIVE.add(process)
    readers = [_Bounded(process.stdout), _Bounded(process.stderr)]
    for reader in readers:
        reader.start()
    try:
        returncode: int | None = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        returncode = None
    finally:  # a timeout, the end, or jitfix interrupted: nothing it started lives on
        _kill_group(process)
        with _LIVE_LOCK:
            _LIVE.discard(process)
    for reader in readers:
        reader.join(timeout=5)
    return Outcome(returncode, readers[0].text(), readers[1].text())


# The commands running now, each the leader of its own process group.
_LIVE: set[subprocess.Popen] = set()
_LIVE_LOCK = threading.Lock()


def stop_all() -> None:
    """Kill every command still running, with all it started: jitfix was interrupted or
    terminated while validation children or runs of the user's program were going (they are
    in sessions of their own, so the terminal's Ctrl-C never reached them)."""
    with _LIVE_LOCK:
        running = list(_LIVE)
    for process in running:
        _kill_group(process)


def _program_found(command: list[str], cwd: str | None) -> list[str]:
    """The command with a program named by a relative path (``../.venv/bin/python``) that the
    folder it runs in (a scratch copy of the project) lacks taken from where the user typed
    it: jitfix's own current folder."""
    program = command[0] if command else ""
    if cwd is None or os.sep not in program or os.path.isabs(program) or os.path.exists(os.path.join(cwd, program)):
        return command
    return [os.path.abspath(program), *command[1:]]


def _kill_group(process: subprocess.Popen) -> None:
    """Kill the command's whole process group (what it started in the background too)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
