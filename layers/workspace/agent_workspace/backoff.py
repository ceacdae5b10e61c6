"""Jittered exponential pause between retries of a write that lost a race."""

import random
import time


def back_off(attempt: int) -> None:
    time.sleep(random.uniform(0, 0.01 * 2**attempt))  # jittered: contenders spread out instead of colliding again
