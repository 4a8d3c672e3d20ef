# Settings that nothing changes after import: read at trace time, they are what every call
# would read anyway. Works under jit as written.
LEARNING_RATE = 0.1
MODE = "train"
