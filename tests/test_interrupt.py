"""Long solves can be interrupted (Ctrl-C raises KeyboardInterrupt), traces and histories are sized
by what is used, and results do not keep the solver's workspace alive."""
import _thread
import signal
import threading
import time

import numpy as np
import pytest

import mbdcp
from mbdcp.examples import sphere_on_plane


def murty(n):
    """Murty's example: Lemke with covering vector e needs 2^n pivots."""
    return np.tril(np.full((n, n), 2.0), -1) + np.eye(n), -np.ones(n)


@pytest.fixture(autouse=True)
def _python_handles_sigint():
    """A process started in the background (nohup, CI runners) may inherit SIGINT as ignored; then
    Ctrl-C, and _thread.interrupt_main, do nothing. These tests are about Python's own handler."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _interrupt_after(seconds):
    timer = threading.Timer(seconds, _thread.interrupt_main)
    timer.start()
    return timer


@pytest.mark.parametrize("trace", [False, True])
def test_ctrl_c_stops_a_long_lemke_solve(trace):
    M, q = murty(30)  # 2^30 pivots: many minutes
    timer = _interrupt_after(0.3)
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        mbdcp.lemke(M, q, max_iter=2 ** 31 - 1, trace=trace)
    timer.join()
    assert time.perf_counter() - t0 < 5.0


def test_ctrl_c_stops_a_long_ccp_solve():
    # a disk wedged between a floor and a wall with mu = 1: the cone problem has no solution, so
    # the iteration would go on to the limit
    M = np.eye(3)
    Wn = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 0.0]])
    Wt = np.zeros((3, 4))
    Wt[0, 0], Wt[1, 2] = 1.0, 1.0
    timer = _interrupt_after(0.3)
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        while True:  # whichever way the solver ends, the interrupt arrives during a solve
            mbdcp.ccp(M, Wn, Wt, 1.0, np.zeros(3), 0.1, p_ext=[0, -1.0, 0], method="pgs", tol=1e-300,
                      max_iter=2 ** 31 - 1)
    timer.join()
    assert time.perf_counter() - t0 < 5.0


def test_trace_is_sized_by_the_pivots_taken():
    # a pivot limit of 2^31 - 1 once asked for a 16 GiB trace buffer
    res = mbdcp.lemke([[2.0, 1.0], [1.0, 2.0]], [-5.0, -6.0], max_iter=2 ** 31 - 1, trace=True)
    assert res.success and len(res.trace) == res.pivots == 3
    M, q = murty(12)
    res = mbdcp.lemke(M, q, trace=True, max_iter=10_000)
    assert res.success and len(res.trace) == res.pivots == 2 ** 12


def test_history_is_sized_by_the_iterations_taken():
    M, Wn, D, E, U = sphere_on_plane(mu=0.2)
    Wt = D[:, :2]
    res = mbdcp.ccp(M, Wn, Wt, 0.2, [2.0, 0, 0, 0, 0, 0], 0.1, p_ext=[0, 0, -0.981, 0, 0, 0], max_iter=2 ** 31 - 1)
    assert res.success and len(res.history) == res.iterations < 1000
    fp = mbdcp.fixed_point(M, Wn, D, E, U, [2.0, 0, 0, 0, 0, 0], 0.1, p_ext=[0, 0, -0.981, 0, 0, 0],
                           max_iter=2 ** 31 - 1)
    assert fp.converged and len(fp.history) == fp.iterations


def _owner(a):
    while a.base is not None:
        a = a.base
    return a


def test_results_do_not_pin_the_workspace():
    # a step's LCP has N = 40 unknowns: its workspace is over 3 N^2 doubles; v_next must not keep it
    from mbdcp.testing import random_scene

    s = random_scene(2, 8, seed=1, n_d=(4, 4))
    res = mbdcp.step(*s.args(), **s.kwargs())
    N = 2 * 8 + 8 * 4
    for field in (res.v_next, res.p_n, res.beta, res.sigma):
        assert _owner(field).nbytes <= 8 * (s.M.shape[0] + 2 * N)
    fp = mbdcp.fixed_point(*s.args(), **s.kwargs(), algorithm=3)
    assert _owner(fp.v_next).nbytes <= 8 * (s.M.shape[0] + 3 * N)
    lr = mbdcp.lemke(np.eye(50), -np.ones(50))
    assert _owner(lr.z).nbytes == 8 * 50


CHILD = r"""
import os, signal, threading, time
import numpy as np
import mbdcp
from mbdcp.testing import random_spd
signal.signal(signal.SIGINT, signal.default_int_handler)
rng = np.random.default_rng(0)
n, B = 160, 20_000
M = random_spd(n, rng, cond=1e3)
qs = rng.standard_normal((B, n))
kind = os.environ["KIND"]
threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()
t0 = time.perf_counter()
try:
    if kind == "lemke":
        mbdcp.batch.lemke(M, qs)
    else:
        Wn = rng.standard_normal((n, 40))
        mbdcp.batch.step(np.eye(n), Wn, np.zeros((n, 0)), np.zeros((0, 40)), 0.0,
                         rng.standard_normal((B // 2, n)), 0.01, psi_n=np.zeros(40))
    print("FINISHED", time.perf_counter() - t0)
except KeyboardInterrupt:
    stopped = time.perf_counter() - t0
    c0 = time.process_time()
    time.sleep(0.5)
    print("STOPPED", stopped, time.process_time() - c0)
"""


@pytest.mark.parametrize("kind", ["lemke", "step"])
def test_ctrl_c_stops_a_batch_and_its_threads(kind):
    # a real SIGINT half a second into a batch of many seconds: KeyboardInterrupt reaches the
    # caller within a second of it, and no thread goes on computing afterwards (CPU time while idle)
    import os
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "KIND": kind})
    words = out.stdout.split()
    assert words and words[0] == "STOPPED", out.stdout + out.stderr
    stopped, busy = float(words[1]), float(words[2])
    assert stopped < 1.5, stopped           # the signal came at 0.5 s
    assert busy < 0.1, busy
