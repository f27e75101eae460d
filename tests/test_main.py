"""``python -m scatterops``: the quick-start's smoke test, run as a user runs it.

It has ``--help``, it passes (every worked example OK, exit status 0), and it stays small: it is
the first thing a new user runs, on whatever machine they have.  Its peak RSS (the child's own,
from ``os.wait4``) must stay under 200 MB; it was 2.1 GB while its two large examples ran at the
document's full size, which ``--full`` still does.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEAK_RSS_LIMIT = 200 * 2**20


def run_main(*args):
    """(exit status, stdout, stderr, peak RSS in bytes) of python -m scatterops args, run from
    the checkout's root (so it imports the package the tests test)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([sys.executable, "-m", "scatterops", *args], cwd=ROOT,
                                stdin=subprocess.DEVNULL, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)       # this child's own peak, reaped here
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return proc.returncode, out.read(), err.read(), usage.ru_maxrss * 1024  # Linux: KiB


def test_help_exits_0_with_usage_text():
    rc, out, err, _ = run_main("--help")
    assert rc == 0, err
    assert out.startswith("usage: python -m scatterops")
    assert "--full" in out and "worked examples" not in err


def test_the_examples_pass_in_under_200_mb():
    rc, out, err, peak = run_main()
    assert rc == 0, out[-2000:] + err
    assert "MISMATCH" not in out and out.rstrip().endswith("examples OK")
    if os.environ.get("SCATTEROPS_SANITIZED"):
        return          # tools/sanitize.sh: AddressSanitizer's shadow memory and quarantine count too
    assert peak < PEAK_RSS_LIMIT, f"python -m scatterops peaked at {peak / 2**20:.0f} MB"


def test_an_unknown_option_is_an_error():
    rc, out, err, _ = run_main("--no-such-option")
    assert rc == 2 and "unrecognized arguments: --no-such-option" in err and not out
