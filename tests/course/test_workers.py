"""course.workers: functions run in worker processes, in order, their errors raised here."""
import operator
import os

import pytest

from course.workers import Pool, WorkerDied


def test_map_runs_in_other_processes_in_order():
    pool = Pool(2)
    try:
        assert pool.map(operator.add, [(i, 1) for i in range(6)]) == [1, 2, 3, 4, 5, 6]
        assert os.getpid() not in pool.map(os.getpid, [()] * 4)
    finally:
        pool.stop()


def test_an_exception_there_is_raised_here_and_the_worker_lives_on():
    pool = Pool(1)
    try:
        with pytest.raises(ZeroDivisionError):
            pool.call(operator.truediv, 1, 0)
        assert pool.call(operator.mul, 6, 7) == 42
    finally:
        pool.stop()


def test_a_dead_worker_is_reported_and_replaced():
    pool = Pool(1)
    try:
        with pytest.raises(WorkerDied, match="ended unexpectedly"):
            pool.call(os._exit, 3)
        assert pool.call(operator.neg, 5) == -5
    finally:
        pool.stop()
