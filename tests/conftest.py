import os

# Tests run JAX on the CPU, quietly, whatever the machine has.
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def pytest_addoption(parser):
    parser.addoption("--update-snapshots", action="store_true", default=False,
                     help="Rewrite the pinned findings of the fixtures (tests/fixtures/*/findings.snap) "
                          "from what jitfix reports now; review the diff.")
