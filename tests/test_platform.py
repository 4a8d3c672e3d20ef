"""The user's platform reaches the code jitfix runs, and no run of it outlives jitfix: the
accelerator runtimes' variables pass through, the platform is the user's unless `--platform`
says otherwise, the output says which backend ran, and a terminated run leaves no child
holding a device."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jitfix.cli import app
from jitfix.validate.process import accelerator_in_reach, environment


def test_the_accelerator_runtimes_variables_pass_through_and_the_platform_stays_the_users(monkeypatch) -> None:
    monkeypatch.setenv("TPU_ACCELERATOR_TYPE", "v5litepod-1")
    monkeypatch.setenv("LIBTPU_INIT_ARGS", "--xla_tpu_example")
    monkeypatch.setenv("PJRT_DEVICE", "TPU")
    monkeypatch.setenv("CUDA_CACHE_PATH", "/tmp/cuda")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.delenv("JAX_PLATFORMS", raising=False)
    env = environment({})
    for name in ("TPU_ACCELERATOR_TYPE", "LIBTPU_INIT_ARGS", "PJRT_DEVICE", "CUDA_CACHE_PATH"):
        assert env[name] == os.environ[name]
    assert "AWS_SECRET_ACCESS_KEY" not in env  # secrets stay out
    assert "JAX_PLATFORMS" not in env  # JAX picks what the machine has, as it would for the user
    monkeypatch.setenv("JAX_PLATFORMS", "tpu")
    assert environment({})["JAX_PLATFORMS"] == "tpu" and accelerator_in_reach()
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    assert not accelerator_in_reach()


MODEL = '''import jax
import jax.numpy as jnp


@jax.jit
def relu(x):
    if x.sum() > 0:
        return x
    return jnp.zeros_like(x)
'''
MAIN = '''import os
import sys

import jax.numpy as jnp

import model

if os.environ.get("TPU_FAKE_TOPOLOGY") != "2x2" or os.environ.get("JAX_PLATFORMS") != "cpu":
    sys.exit(3)  # the variables did not reach the program
print(model.relu(jnp.array([1.0, 2.0])), model.relu(jnp.array([-1.0, 0.5])))
'''


def test_run_passes_the_platform_on_and_says_which_backend_validated(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TPU_FAKE_TOPOLOGY", "2x2")
    monkeypatch.delenv("JAX_PLATFORMS", raising=False)
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "main.py").write_text(MAIN)
    result = CliRunner().invoke(app, ["run", "--no-color", "--write", "--platform", "cpu", "--root", str(tmp_path),
                                      "--", sys.executable, "main.py"])
    assert "reference (JAX_DISABLE_JIT=1): exit 0" in result.stderr, result.output
    assert "validation on cpu (the arguments of an eager run as inputs)" in result.stderr, result.output
    assert result.exit_code == 0


def test_fix_validate_says_which_backend_it_validated_on(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text("import jax\n\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n"
                                       "    return -x\n")
    result = CliRunner().invoke(app, ["fix", "--no-color", "--validate", "--no-cache", str(tmp_path / "model.py")])
    assert "1 passed, 0 failed, 0 skipped in" in result.output and " s on cpu." in result.output, result.output


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_terminated_run_leaves_no_run_of_the_program_behind(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    (tmp_path / "main.py").write_text(f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
                                      "time.sleep(120)\n")
    run = subprocess.Popen([sys.executable, "-m", "jitfix", "run", "--timeout", "300", "--root", str(tmp_path), "--",
                            sys.executable, "main.py"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    program = int(pid_file.read_text())
    os.kill(run.pid, signal.SIGTERM)
    assert run.wait(timeout=20) == 143
    time.sleep(0.2)
    stat = Path(f"/proc/{program}/stat")
    assert not stat.exists() or stat.read_text().split(") ")[1].startswith("Z")  # gone (or a zombie reaped soon)
