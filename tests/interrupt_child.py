"""What the child process of every Ctrl-C test does around its call (test_interrupt.py,
test_groups_interrupt.py), and how the parent runs those children.

A child sizes its call to last some seconds on this machine (``calibrate``), says "ready",
waits for the parent's word, sends itself SIGINT part of the way in and reports when
KeyboardInterrupt arrived (``interrupt_part_way``).  The parent starts every child, lets
them calibrate one after the other, so that no other child slows a small call, then lets
their calls run side by side, a batch at a time (``run_children``).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time


def calibrate(make, run, n0, seconds, cap=None):
    """Grow n0 until ``run(call)`` of ``make(n0)`` lasts 0.15 s or more, then make the call
    sized to last ``seconds``, or of ``cap`` values if that is fewer (a call whose arrays grow
    with it, kept within memory): (the small call, its arrays, the long call, its arrays, the
    long call's estimated time)."""
    while True:
        small_call, small_watched = make(n0)
        t = time.perf_counter(); run(small_call); small = time.perf_counter() - t
        if small >= 0.15:
            break
        n0 *= 4
    # once more: the first calls pay for starting the workers and faulting fresh pages
    t = time.perf_counter(); run(small_call); small = min(small, time.perf_counter() - t)
    n = int(n0 * seconds / small)
    if cap is not None:
        n = min(n, max(cap, n0))
    call, watched = make(n)
    return small_call, small_watched, call, watched, small * n / n0


def interrupt_part_way(run, call, estimate, at):
    """Say "ready", wait for the parent's word, then ``run(call)`` with SIGINT sent at
    ``at`` of its estimated time: a report of whether KeyboardInterrupt came (and its
    notes), when the signal was sent and how long the call took to stop after it."""
    print("ready", flush=True)
    sys.stdin.readline()                     # the parent says when
    sent = []

    def interrupt():
        sent.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)
    timer = threading.Timer(at * estimate, interrupt)
    out = {"estimate": estimate}
    start = time.perf_counter()
    timer.start()
    try:
        run(call)
        out["raised"] = None
    except KeyboardInterrupt as e:
        out["raised"] = "KeyboardInterrupt"
        out["notes"] = getattr(e, "__notes__", [])
    end = time.perf_counter()
    timer.cancel()
    out["signal_at"] = sent[0] - start if sent else None
    out["delay"] = end - sent[0] if sent else None
    return out


def run_children(child, cases, root, batches=None):
    """Run the child script once per case (its fields as arguments), calibrating one after
    the other, then the batches' calls side by side (default: all in one batch): each
    case's last JSON line, or {"error": its stderr}."""
    env = dict(os.environ, PYTHONPATH=str(root))
    procs = {}
    for c in cases:
        p = subprocess.Popen([sys.executable, "-c", child] + [str(x) for x in c], cwd=root,
                             env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        procs[c] = p
        p.stdout.readline()                 # "ready" (or nothing: it failed)
    got = {}
    for batch in batches or [cases]:
        for c in batch:
            try:
                procs[c].stdin.write("go\n")
                procs[c].stdin.flush()
            except BrokenPipeError:
                pass
        for c in batch:
            out, err = procs[c].communicate()
            got[c] = (json.loads(out.strip().splitlines()[-1]) if procs[c].returncode == 0
                      else {"error": err})
    return got
