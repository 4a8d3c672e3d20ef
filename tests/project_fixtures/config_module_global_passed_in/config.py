LEARNING_RATE = 0.1


def set_lr(value):
    global LEARNING_RATE
    LEARNING_RATE = value


MODE = "train"


def evaluate():
    global MODE
    MODE = "eval"
