"""Typing: the stubs (scatterops/__init__.pyi, py.typed) let mypy --strict accept
user code calling the API, and reject a call it should reject."""
import os
import subprocess
import sys
import sysconfig
import textwrap

import pytest

from extras import need

# mypy on the stubs runs the same under the sanitizers and costs them about 8 s of CI's critical
# path: it is marked slow, which tools/sanitize.sh leaves out (the main suite runs it)
pytestmark = pytest.mark.slow

need("mypy")

GOOD = textwrap.dedent("""
    import numpy as np
    import numpy.typing as npt
    import scatterops as so

    data: npt.NDArray[np.float32] = np.zeros((3, 4), np.float32)
    same: npt.NDArray[np.float32] = so.scatter_update(data, [0, 2], 1.0, axis=1, out=data)
    new = so.scatter_nd(data, [[1]], np.ones(4), reduction="add")
    el = so.scatter_elements(data, np.zeros((1, 4), np.int64), 2.0, axis=0, reduction="max",
                             include_self=False)
    so.at(np.add, data, (np.array([0, 0]), [1, 3]), 2.0)
    so.at(np.negative, data, 1)
    so.set_num_threads(2)
    n: int = so.get_num_threads()
    with so.threads(1) as block:
        one: int = block.n
    print(same.shape, new.sum(), el.dtype, n, one, so.__version__)
""")
BAD = GOOD + 'so.scatter_nd(data, [[1]], 1.0, reduction="average")\n'


def _mypy(tmp_path, code):
    path = tmp_path / "user.py"
    path.write_text(code)
    import scatterops
    root = os.path.dirname(os.path.dirname(scatterops.__file__))
    env = dict(os.environ)
    # a checkout (in-place or editable build) goes on MYPYPATH; an installed wheel is found by
    # mypy in site-packages, which it refuses to have on MYPYPATH
    site_dirs = {os.path.realpath(p) for p in sysconfig.get_paths().values()}
    if os.path.realpath(root) not in site_dirs:
        env["MYPYPATH"] = root
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental",
                           "--cache-dir", str(tmp_path / "cache"), str(path)],
                          capture_output=True, text=True, env=env, cwd=tmp_path)


def test_mypy_strict_accepts_user_code(tmp_path):
    res = _mypy(tmp_path, GOOD)
    assert res.returncode == 0, res.stdout + res.stderr


def test_mypy_strict_rejects_an_unknown_reduction(tmp_path):
    res = _mypy(tmp_path, BAD)
    assert res.returncode == 1 and "reduction" in res.stdout, res.stdout + res.stderr


REFERENCE = textwrap.dedent("""
    import numpy as np
    import numpy.typing as npt
    from scatterops import reference

    data: npt.NDArray[np.float32] = np.zeros((3, 4), np.float32)
    r = reference.scatter_nd(data, [[1]], np.ones(4), reduction="add")
    print(r.shape)
""")


def test_mypy_strict_accepts_user_code_calling_the_reference(tmp_path):
    res = _mypy(tmp_path, REFERENCE)
    assert res.returncode == 0, res.stdout + res.stderr
