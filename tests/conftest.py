"""Hypothesis profiles for the scatterops suite.

* ``ci``  -- 60 examples a property, no deadline (shared 2-core machines are
  noisy), the too_slow health check off, and the reproduction blob printed with
  every failure.  Loaded whenever the environment variable CI is set (CI runs
  with CI=true).  It was 200, then 100 (hypothesis' own default): CI, which also
  runs the suite under the sanitizers on the other core, went past its ten
  minutes on slow days (614 s at 100 on 2026-11-27, the suite 294 s of it);
  ``deep`` is for the long hunt.  Most of the suite's time was then the
  reference's Python loop in the tests of large calls; they now compare
  against tests/fast_reference.py (CI 673 -> 443 s).
* ``dev`` -- 40 examples a property for quick local runs (the default).
* ``asan`` -- 8 examples a property, for the run under the sanitizers
  (tools/sanitize.sh, which CI runs beside the main suite: its longest step).
* ``deep`` -- 1000 examples a property, every health check off: a long hunt for
  a counterexample, not for CI (the whole suite took 16 minutes on the 2-core
  AMD machine).

``HYPOTHESIS_PROFILE=ci python -m pytest tests`` runs the CI profile locally.
"""
import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile("dev", max_examples=40, deadline=None)
settings.register_profile("deep", max_examples=1000, deadline=None,
                          suppress_health_check=list(HealthCheck), print_blob=True)
# the sanitizer build (tools/sanitize.sh) runs every test once more for memory errors, several
# times slower than the plain build: fewer examples there keep CI inside its time
settings.register_profile("asan", max_examples=8, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])

if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
    settings.load_profile("ci")
else:
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

# Calls use at most the CPUs this process may use (scatterops/_threads.py).  The suite runs
# thread counts above that too (3, 4: every split of a call must give the same bits, on any
# machine, a 1-CPU CI runner included), so it raises the cap; tests/test_settings.py puts the
# real one back where it tests the cap itself.
import scatterops._core  # noqa: E402

TEST_THREAD_CAP = 16
scatterops._core.set_thread_cap(TEST_THREAD_CAP)

def pytest_configure(config):
    # tests that run seconds of real work in child processes (tests/test_interrupt.py);
    # tools/sanitize.sh deselects them with -m "not slow"
    config.addinivalue_line("markers", "slow: seconds of real work; skipped under the sanitizers")

# The cost model (call/cost.h) keeps a call on one thread where threads would not pay on this
# machine (its caches, how late its workers come).  The suite turns it off so that every split a
# call can take is taken on any machine, busy or not: the bits of every strategy are tested
# everywhere.  tests/test_cost_model.py turns it on to test the model itself.
scatterops._core.set_cost_model(False)


@pytest.fixture(scope="module")
def client():
    """A 2-process distributed.LocalCluster on loopback, one thread a worker (the tests marked
    ``cluster``); skips without the dask extra."""
    from extras import need
    distributed = need("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c
