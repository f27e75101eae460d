"""``python -m scatterops``: the quick-start's smoke test, run as a user runs it.

It has ``--help``, it passes (every worked example OK, exit status 0), and it stays small: it is
the first thing a new user runs, on whatever machine they have.  Its peak RSS must stay under
200 MB; it was 2.1 GB while its two large examples ran at the
document's full size, which ``--full`` still does.
"""
from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEAK_RSS_LIMIT = 200 * 2**20


# A small Python between the test and the run: a child starts with its parent's peak RSS as its
# own (Linux carries it through fork and exec), and pytest's can be hundreds of MB by now; this
# one's is a few MB, and RUSAGE_CHILDREN gives the run's own peak.
_MEASURE = """
import resource, subprocess, sys
rc = subprocess.call([sys.executable, "-m", "scatterops", *sys.argv[1:]])
sys.stderr.write("\\npeak-rss-kib %d\\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)
"""


def run_main(*args):
    """(exit status, stdout, stderr, peak RSS in bytes) of python -m scatterops args, run from
    the checkout's root (so it imports the package the tests test)."""
    proc = subprocess.run([sys.executable, "-c", _MEASURE, *args], cwd=ROOT,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True)
    err, _, peak = proc.stderr.rpartition("\npeak-rss-kib ")
    return proc.returncode, proc.stdout, err, int(peak) * 1024      # Linux: KiB


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
