"""Fault injection: bad input and hostile file systems, each met in a parallel run.

Every test runs ``jitfix`` as a user would (the console script, in a subprocess with a time
limit, ``-j 2``, at least four files), and asserts the exit code, the message naming the
file, that no byte of any file was lost, and that every other file was still processed.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers import BROKEN, FIXED, invoke

TIME_LIMIT = 120  # seconds: far above a normal run; reaching it means a hang


def jitfix(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jitfix", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=TIME_LIMIT, stdin=subprocess.DEVNULL)


def good_files(folder: Path, count: int = 4) -> list[Path]:
    """``count`` broken modules that jitfix fixes: proof that the other files were processed."""
    paths = []
    for index in range(count):
        path = folder / f"good_{index}.py"
        path.write_bytes(BROKEN)
        paths.append(path)
    return paths


def assert_fixed(paths: list[Path]) -> None:
    for path in paths:
        assert path.read_bytes() == FIXED, path


@pytest.mark.parametrize("name, data, message", [
    ("syntax.py", b"import jax\ndef b(:\n", "syntax.py:2"),
    ("encoding.py", b"import jax\nx = '\xff'\n", "encoding.py:2"),
    ("cookie.py", b"# coding: rot13\nimport jax\n", "unsupported encoding declaration"),
    ("nul.py", b"import jax\nx = 1\x00\n", "nul.py"),
    ("deep.py", b"import jax\nx = " + b"(" * 300 + b"1" + b")" * 300 + b"\n", "deep.py"),
    ("long_sum.py", b"import jax\n@jax.jit\ndef f(x):\n    return " + b"x+" * 30000 + b"x\n", "long_sum.py"),
    ("newer_syntax.py", b"import jax\ntype Vector = list[float]\n" if sys.version_info < (3, 12)
     else b"import jax\ndef f(:\n", "newer_syntax.py:2"),
])
def test_a_bad_file_in_a_parallel_run_is_named_and_the_others_are_fixed(
        tmp_path: Path, name: str, data: bytes, message: str) -> None:
    good = good_files(tmp_path)
    (tmp_path / name).write_bytes(data)
    result = jitfix("fix", "-j", "2", str(tmp_path), cwd=tmp_path)
    assert (tmp_path / name).read_bytes() == data
    assert_fixed(good)
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.returncode in (0, 2)  # a file jitfix can take in full is no error


def test_a_fifo_and_a_link_to_a_device_are_never_read(tmp_path: Path) -> None:
    good = good_files(tmp_path)
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    walked = jitfix("fix", "-j", "2", str(tmp_path), cwd=tmp_path)
    assert walked.returncode == 0, walked.stderr
    assert_fixed(good)
    named = jitfix("check", "-j", "2", str(tmp_path / "pipe.py"), str(tmp_path / "zero.py"), cwd=tmp_path)
    assert named.returncode == 2
    assert named.stderr.count("not a regular file") == 2


def test_an_oversized_file_is_refused_with_the_limit(tmp_path: Path) -> None:
    good = good_files(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.jitfix]\nmax-file-size = 1000\n")
    big = tmp_path / "big.py"
    big.write_bytes(BROKEN + b"# padding\n" * 200)
    result = jitfix("fix", "-j", "2", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 2
    assert "big.py: not read" in result.stderr and "max-file-size" in result.stderr
    assert_fixed(good)


def test_a_read_only_file_is_refused_and_the_others_are_written(tmp_path: Path) -> None:
    good = good_files(tmp_path)
    locked = tmp_path / "locked.py"
    locked.write_bytes(BROKEN)
    locked.chmod(0o444)
    result = jitfix("fix", "-j", "2", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 2
    assert "locked.py: not written: the file is read-only" in result.stderr
    assert locked.read_bytes() == BROKEN
    assert_fixed(good)


def test_hard_links_owner_and_mode_are_kept(tmp_path: Path) -> None:
    good = good_files(tmp_path)
    linked = tmp_path / "linked.py"
    linked.write_bytes(BROKEN)
    other_name = tmp_path / "other_name.txt"
    os.link(linked, other_name)
    linked.chmod(0o640)
    if os.geteuid() == 0:
        os.chown(good[0], 65534, 65534)
    result = jitfix("fix", "-j", "2", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert other_name.read_bytes() == FIXED  # the same inode, rewritten in place
    assert os.stat(linked).st_ino == os.stat(other_name).st_ino
    assert stat.S_IMODE(os.stat(linked).st_mode) == 0o640
    if os.geteuid() == 0:
        assert (os.stat(good[0]).st_uid, os.stat(good[0]).st_gid) == (65534, 65534)
    assert_fixed(good)


def test_a_hard_linked_file_whose_write_cannot_finish_is_left_whole(tmp_path: Path) -> None:
    import resource

    linked = tmp_path / "linked.py"
    linked.write_bytes(BROKEN)
    os.link(linked, tmp_path / "other_name.py")
    assert len(FIXED) > len(BROKEN)

    def small_files() -> None:  # no file may grow past the original: the fixed text does not fit
        resource.setrlimit(resource.RLIMIT_FSIZE, (len(BROKEN), len(BROKEN)))

    result = subprocess.run([sys.executable, "-m", "jitfix", "fix", "--no-cache", str(linked)], cwd=tmp_path,
                            capture_output=True, text=True, preexec_fn=small_files)
    assert result.returncode == 2 and "not written" in result.stderr, result.stderr
    assert linked.read_bytes() == BROKEN and (tmp_path / "other_name.py").read_bytes() == BROKEN
    assert sorted(path.name for path in tmp_path.iterdir()) == ["linked.py", "other_name.py"]  # no leftovers


def test_a_link_to_another_file_system_is_written_through(tmp_path: Path) -> None:
    if not Path("/dev/shm").is_dir() or os.stat("/dev/shm").st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("needs a second file system")
    good = good_files(tmp_path)
    elsewhere = Path("/dev/shm") / f"jitfix-test-{os.getpid()}.py"
    elsewhere.write_bytes(BROKEN)
    try:
        (tmp_path / "link.py").symlink_to(elsewhere)
        result = jitfix("fix", "-j", "2", str(tmp_path), cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert elsewhere.read_bytes() == FIXED
        assert (tmp_path / "link.py").is_symlink()
        assert_fixed(good)
    finally:
        elsewhere.unlink()


def test_an_ascii_file_whose_fix_needs_unicode_is_named_not_a_traceback(tmp_path: Path) -> None:
    good = good_files(tmp_path)
    source = (b"# -*- coding: ascii -*-\nimport jax\n\n\n@jax.jit\ndef f(x):\n"
              b"    print(f\"\\N{BULLET} {x}\")\n    return x\n")
    path = tmp_path / "ascii.py"
    path.write_bytes(source)
    result = jitfix("fix", "-j", "2", str(tmp_path), cwd=tmp_path)
    assert "Traceback" not in result.stderr
    assert_fixed(good)
    if path.read_bytes() != source:  # written only if the fix could be encoded
        path.read_bytes().decode("ascii")


def test_leftovers_of_a_killed_run_are_removed(tmp_path: Path) -> None:
    good = good_files(tmp_path)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    leftover = tmp_path / f".good_0.py.{dead.pid}.abc123.jitfix-tmp"
    leftover.write_bytes(b"half a file")
    live = tmp_path / f".good_1.py.{os.getpid()}.abc123.jitfix-tmp"  # a run still going
    live.write_bytes(b"in progress")
    result = jitfix("fix", "-j", "2", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert not leftover.exists() and live.exists()
    assert_fixed(good)


def test_the_same_file_named_twice_is_processed_once(tmp_path: Path) -> None:
    good = good_files(tmp_path)
    (tmp_path / "ff.py").write_bytes(b"import jax\n\n\n@jax.jit\ndef f(x):\n    y = x\n\x0c\n    print(x)\n    return y\n")
    relative = f"./{good[0].name}"
    result = jitfix("fix", "-j", "2", str(good[0]), str(tmp_path), relative, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "changed on disk" not in result.stderr
    assert_fixed(good)
    assert b"\x0c\n    jax.debug.print" in (tmp_path / "ff.py").read_bytes()  # a form feed in a block is kept


def test_bad_configuration_is_a_message(tmp_path: Path) -> None:
    good = good_files(tmp_path)
    (tmp_path / "pyproject.toml").write_text("tool = 3\n")
    result = jitfix("fix", "-j", "2", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 0, result.stderr  # no [tool.jitfix] table: the defaults
    assert_fixed(good)
    timeout = jitfix("check", "--validate-timeout", "nan", "--validate", str(tmp_path), cwd=tmp_path)
    assert timeout.returncode == 2 and "--validate-timeout" in timeout.stderr


def test_an_unreadable_folder_is_named(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads any folder")
    good = good_files(tmp_path)
    closed = tmp_path / "closed"
    closed.mkdir()
    (closed / "m.py").write_bytes(BROKEN)
    closed.chmod(0)
    try:
        result = jitfix("fix", "-j", "2", str(tmp_path), cwd=tmp_path)
    finally:
        closed.chmod(0o755)
    assert result.returncode == 2 and "cannot read folder" in result.stderr
    assert_fixed(good)


def test_every_error_type_survives_a_process_boundary() -> None:
    from jitfix.files import FileChangedError, InputError

    for error in (InputError("a.py", "bad", 3, 4), FileChangedError("b.py", "changed")):
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error) and copy.describe() == error.describe()


def test_a_worker_that_dies_is_reported_and_the_others_finish(tmp_path: Path) -> None:
    good = good_files(tmp_path, 6)
    (tmp_path / "killer.py").write_bytes(BROKEN)
    plugin = tmp_path / "sitecustomize.py"  # makes the worker that reads killer.py die
    plugin.write_text(
        "import os, jitfix.engine as e\n"
        "real = e.process_path\n"
        "def dying(path, *a):\n"
        "    if path.endswith('killer.py'):\n"
        "        os._exit(9)\n"
        "    return real(path, *a)\n"
        "e.process_path = dying\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    result = subprocess.run([sys.executable, "-m", "jitfix", "fix", "-j", "2", str(tmp_path)], cwd=tmp_path,
                            capture_output=True, text=True, timeout=TIME_LIMIT, env=env)
    assert result.returncode == 3, result.stderr
    assert "killer.py" in result.stderr and "worker process died" in result.stderr
    assert (tmp_path / "killer.py").read_bytes() == BROKEN
    assert_fixed(good)


def test_a_crafted_cache_index_runs_no_code_and_a_touched_edit_is_seen(tmp_path: Path) -> None:
    good = good_files(tmp_path)
    assert jitfix("check", str(tmp_path), cwd=tmp_path).returncode == 1
    [index] = list((tmp_path / ".jitfix_cache").glob("*/index.json"))
    json.loads(index.read_text())  # data, not a pickle
    marker = tmp_path / "pwned"

    class Exploit:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    (index.parent / "index").write_bytes(pickle.dumps(Exploit()))
    index.write_bytes(pickle.dumps(Exploit()))
    assert jitfix("check", str(tmp_path), cwd=tmp_path).returncode == 1
    assert not marker.exists()
    # An edit hidden by setting the modification time back is still seen (change time).
    clean = tmp_path / "good_0.py"
    assert jitfix("fix", str(tmp_path), cwd=tmp_path).returncode == 0
    before = os.stat(clean)
    assert jitfix("check", str(tmp_path), cwd=tmp_path).returncode == 0
    clean.write_bytes(BROKEN.replace(b"x * 2", b"x * 3"))  # same size as the fixed text? not needed
    os.utime(clean, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert jitfix("check", str(tmp_path), cwd=tmp_path).returncode == 1
    del good


@pytest.mark.parametrize("kind", ["fifo", "device", "nested"])
def test_a_cache_index_that_is_no_index_is_never_read_whole(tmp_path: Path, kind: str) -> None:
    good_files(tmp_path, count=1)
    assert jitfix("check", str(tmp_path), cwd=tmp_path).returncode == 1
    [index] = list((tmp_path / ".jitfix_cache").glob("*/index.json"))
    index.unlink()
    if kind == "fifo":
        os.mkfifo(index)  # reading it would wait for a writer for ever
    elif kind == "device":
        index.symlink_to("/dev/zero")  # reading it would never end
    else:
        index.write_text("[" * 100_000 + "]" * 100_000)  # JSON nested past Python's recursion limit
    done = subprocess.run([sys.executable, "-m", "jitfix", "check", str(tmp_path)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "good_0.py" in done.stdout, done.stderr


def test_a_concurrent_writer_loses_no_update(tmp_path: Path) -> None:
    """An editor saving (with a lock, as editors do) while jitfix fixes: none of its writes
    may be overwritten by a fix of an older text."""
    import fcntl

    paths = good_files(tmp_path, 4)
    stop = threading.Event()
    writes: dict[Path, int] = dict.fromkeys(paths, 0)
    variants = [BROKEN.replace(b"x * 2", f"x * {n}".encode()) for n in range(3, 9)]

    def editor() -> None:
        count = 0
        while not stop.is_set() and count < 1000:
            path = paths[count % len(paths)]
            with open(path, "r+b") as handle:
                fcntl.flock(handle, fcntl.LOCK_EX)
                if os.fstat(handle.fileno()).st_ino != os.stat(path).st_ino:
                    continue  # replaced while we waited: write the new file
                handle.seek(0)
                handle.write(variants[count % len(variants)])
                handle.truncate()
            writes[path] = count
            count += 1
            time.sleep(0.001)

    thread = threading.Thread(target=editor)
    thread.start()
    try:
        while thread.is_alive():
            jitfix("fix", "-j", "2", "--no-cache", str(tmp_path), cwd=tmp_path)
    finally:
        stop.set()
        thread.join()
    lost = 0
    for path, last in writes.items():
        expected = variants[last % len(variants)]
        fixed = expected.replace(b'print(f"x = {x}")', b'jax.debug.print("x = {x}", x=x)')
        lost += path.read_bytes() not in (expected, fixed)
    assert lost == 0


def test_a_diff_of_lines_holding_form_feeds_and_line_separators_applies(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    good = good_files(tmp_path)
    odd = tmp_path / "odd.py"
    odd.write_bytes(BROKEN.replace(b"import jax\n", "import jax\nSEP = '\x0c\u2028'  # \u2029\n".encode()))
    patch = jitfix("diff", "-j", "2", ".", cwd=tmp_path)
    assert patch.returncode == 1, patch.stderr
    (tmp_path / "jit.patch").write_text(patch.stdout, encoding="utf-8", newline="")
    applied = subprocess.run(["git", "apply", "jit.patch"], cwd=tmp_path, capture_output=True, text=True)
    assert applied.returncode == 0, applied.stderr
    assert_fixed(good)
    assert b"jax.debug.print" in odd.read_bytes() and "\x0c\u2028".encode() in odd.read_bytes()


def _validated_module(folder: Path, prelude: str) -> Path:
    path = folder / "mod.py"
    path.write_text(prelude + "\n" + BROKEN.decode())
    return path


def test_validation_kills_what_the_users_code_started_and_bounds_its_output(tmp_path: Path) -> None:
    marker = tmp_path / "grandchild-alive"
    grandchild = tmp_path / "grandchild.py"
    grandchild.write_text(f"import pathlib, time\ntime.sleep(8)\npathlib.Path({str(marker)!r}).write_text('alive')\n")
    prelude = (
        "import subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, {str(grandchild)!r}])\n"
        "sys.stdout.write('x' * (8 << 20))\n"  # 8 MiB of output
        "time.sleep(60)\n"
    )
    module = _validated_module(tmp_path, prelude)
    started = time.monotonic()
    result = jitfix("fix", "--validate", "--validate-timeout", "5", "--verbose", str(module), cwd=tmp_path)
    assert time.monotonic() - started < 60
    assert "timed out after 5 s" in result.stderr
    assert module.read_bytes().endswith(BROKEN)  # not validated: not written
    assert "validation could not run" in result.stderr
    assert len(result.stderr) < 3 << 20  # the 8 MiB were cut
    time.sleep(max(0.0, started + 12 - time.monotonic()))
    assert not marker.exists()  # the background process went with its group


def test_validation_passes_only_the_environment_python_needs(tmp_path: Path) -> None:
    probe = "import os\nassert 'API_SECRET' not in os.environ, 'secret leaked'\n"
    module = _validated_module(tmp_path, probe)
    env = {**os.environ, "API_SECRET": "s3cret"}

    def fix(*options: str) -> subprocess.CompletedProcess:
        module.write_text(probe + "\n" + BROKEN.decode())
        return subprocess.run([sys.executable, "-m", "jitfix", "fix", "--validate", "--verbose", *options,
                               str(module)], cwd=tmp_path, capture_output=True, text=True, timeout=TIME_LIMIT, env=env)

    kept_out = fix()
    assert kept_out.returncode == 0, kept_out.stderr
    assert module.read_bytes().endswith(FIXED)
    passed_on = fix("--pass-env", "API_SECRET")  # named: the user's code sees it (and here refuses to import)
    assert "secret leaked" in passed_on.stderr
    assert module.read_bytes().endswith(BROKEN)


def test_fix_validate_writes_only_what_passed_unless_allowed(tmp_path: Path) -> None:
    # A function validation cannot call (a method: skipped) is held back by default.
    source = BROKEN.decode() + "\n\nclass Model:\n    @jax.jit\n    def step(self, x):\n        print(x)\n        return x\n"
    module = tmp_path / "mod.py"
    module.write_text(source)
    held = jitfix("fix", "--validate", str(module), cwd=tmp_path)
    assert "not written" in held.stderr
    assert "    def step(self, x):\n        print(x)" in module.read_text()
    assert 'jax.debug.print("x = {x}", x=x' in module.read_text()  # f passed and is written
    allowed = jitfix("fix", "--validate", "--allow-unvalidated", str(module), cwd=tmp_path)
    assert allowed.returncode == 0, allowed.stderr
    assert "print(x)" not in module.read_text()


IF_ON_A_TRACER = "@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n    return -x\n"


@pytest.mark.parametrize("name, text", [
    ("form_feed", "import jax\n\x0c\n" + IF_ON_A_TRACER),  # a form feed before the line an import goes
    ("old_mac", ("import jax\n\n\n" + IF_ON_A_TRACER).replace("\n", "\r")),  # `\r` alone ends each line
])
def test_line_separators_python_reads_are_kept_and_fixed_through(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / f"{name}.py"
    path.write_bytes(text.encode())
    result = invoke("fix", str(path))
    assert result.exit_code == 0, result.stderr
    fixed = path.read_bytes().decode()
    assert "lax.cond(" in fixed and "from jax import lax" in fixed
    assert ("\n" not in fixed) if name == "old_mac" else ("\x0c" in fixed)
    compile(fixed, str(path), "exec")
    assert invoke("fix", str(path)).exit_code == 0 and path.read_bytes().decode() == fixed  # idempotent


def test_nesting_python_compiles_is_fixed_and_nesting_it_cannot_is_said_so(tmp_path: Path) -> None:
    nested = "import jax\n\n\n@jax.jit\ndef f(x):\n"
    for depth in range(90):
        nested += "    " * (depth + 1) + f"if x > {depth}:\n"
    nested += "    " * 91 + "x = x + 1\n    return x\n"
    (tmp_path / "nested.py").write_text(nested)
    result = invoke("fix", str(tmp_path / "nested.py"))
    assert result.exit_code == 0, result.stderr
    compile((tmp_path / "nested.py").read_text(), "nested.py", "exec")
    (tmp_path / "minus.py").write_text("import jax\n\n\n@jax.jit\ndef f(x):\n    return " + "-" * 10000 + "x\n")
    result = invoke("check", str(tmp_path / "minus.py"))
    assert result.exit_code == 2 and "Python's own parser cannot read it" in result.stderr
    assert "please report" not in result.stderr.lower()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc for the workers")
@pytest.mark.parametrize("signum, status", [(2, 130), (15, 143)])  # SIGINT, SIGTERM
def test_a_signal_ends_a_parallel_run_and_its_workers_promptly(tmp_path: Path, signum: int, status: int) -> None:
    source = b"import jax\n\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n    return -x\n"
    for index in range(1500):
        (tmp_path / f"m{index}.py").write_bytes(source)
    # As from a terminal: a test run started in the background (`nohup ... &`) ignores SIGINT,
    # and a child that inherits that never sees Ctrl-C.
    run = subprocess.Popen([sys.executable, "-m", "jitfix", "check", "--no-cache", "-j", "2", str(tmp_path)],
                           cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))

    def children() -> list[int]:
        found = []
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and (entry / "stat").read_text().split(") ")[1].split()[1] == str(run.pid):
                    found.append(int(entry.name))
            except OSError:
                pass
        return found

    deadline = time.monotonic() + 60
    while len(children()) < 2 and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = children()
    assert run.poll() is None and workers, "the run ended before it could be signalled"
    os.kill(run.pid, signum)
    started = time.monotonic()
    assert run.wait(timeout=10) == status
    assert time.monotonic() - started < 2.0
    time.sleep(0.2)
    assert not [pid for pid in workers if Path(f"/proc/{pid}").exists()
                and "Z" not in (Path(f"/proc/{pid}") / "stat").read_text().split(") ")[1][:1]]
    assert not list(tmp_path.glob("*.jitfix-tmp")) and not list(tmp_path.glob(".*jitfix*"))
