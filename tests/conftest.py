import os

# Tests run JAX on the CPU, quietly, whatever the machine has.
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
