"""The repository's own text: what it cites, and what its skips say.

* Nothing in the repository cites a document its reader cannot open: the team's shared
  notes outside the checkout, their contract, measurement and style pages, issue numbers
  of a tracker the checkout does not hold.  What the text relies on is written in
  docs/contract.md or docs/design.md instead.
* Every test that skips for a missing package says which extra of pyproject.toml installs
  it (tests/extras.py), so a skip tells the reader how to run the test.
* No comment in csrc/ holds a measurement (a time in ms, us or ns, a before -> after
  figure, a "1.4x slower"): comments say what the code does and why, and the figures that
  chose it are in docs/design.md with the command that reproduces them.

Pure Python: reads files, imports nothing from scatterops.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

import extras

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.dirname(os.path.abspath(__file__))

# written in pieces, so that this file does not match itself
_FORBIDDEN = re.compile("|".join([
    r"\.\./" + "shared",
    "API" + r"\.md",
    "MEASURED" + r"\.md",
    "STYLE" + r"\.md",
    "[Ii]ss" + "ue #?[0-9]+",
]))
_SKIPPED_DIRS = {".git", "build", "dist", "__pycache__", ".hypothesis", ".pytest_cache"}


def _repository_files():
    """The files of the checkout: git's list where there is one, else every file."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                                check=True).stdout.decode().split("\0")
        files = [f for f in listed if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
    if files:
        return files
    found = []
    for top, dirs, names in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in _SKIPPED_DIRS and not d.endswith(".egg-info")]
        found += [os.path.relpath(os.path.join(top, n), ROOT) for n in names]
    return found


def _text(path):
    """The file's text, or None for a binary (as git grep -I skips them) or missing file."""
    try:
        with open(os.path.join(ROOT, path), "rb") as f:
            raw = f.read()
    except OSError:
        return None
    if b"\0" in raw:
        return None
    return raw.decode("utf-8", "replace")


def test_nothing_cites_what_the_reader_cannot_open():
    hits = []
    for path in _repository_files():
        text = _text(path)
        if text is None:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if _FORBIDDEN.search(line):
                hits.append(f"{path}:{n}: {line.strip()}")
    assert not hits, ("cite docs/contract.md or docs/design.md (write what the text relies on "
                      "there) instead of:\n" + "\n".join(hits))


def test_the_citation_pattern_catches_what_it_should():
    for line in ["see ../" + "shared/x", "(API" + ".md)", "MEASURED" + ".md", "STYLE" + ".md",
                 "iss" + "ue 5:", "Iss" + "ue #12"]:
        assert _FORBIDDEN.search(line), line
    for line in ["docs/contract.md", "an issue with numbers", "tissue"]:
        assert not _FORBIDDEN.search(line), line


# ---------------------------------------------------------------------------------------
# skips name their extra
# ---------------------------------------------------------------------------------------

def _extras_in_pyproject():
    """{extra: [requirement names]} from pyproject.toml's [project.optional-dependencies]."""
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    section = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    found = {}
    # a list ends at the "]" that ends its line (a requirement's extras, "dask[array]", do not)
    for name, items in re.findall(r"^(\w+)\s*=\s*\[(.*?)\]\s*$", section, re.M | re.S):
        found[name] = [re.split(r"[<>=!~\[ ;]", req, 1)[0]
                       for req in re.findall(r'"([^"]+)"', items)]
    return found


@pytest.mark.skipif(not os.path.exists(os.path.join(ROOT, "pyproject.toml")),
                    reason="pyproject.toml is not beside the tests")
@pytest.mark.parametrize("module", sorted(extras.EXTRA_OF))
def test_the_extra_named_in_a_skip_installs_the_module(module):
    extra = extras.EXTRA_OF[module]
    assert module in _extras_in_pyproject()[extra], f"pyproject's [{extra}] does not install {module}"


def test_a_missing_module_skips_with_its_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)       # import torch now raises ImportError
    with pytest.raises(pytest.skip.Exception, match=re.escape("needs torch: pip install -e '.[peers]'")):
        extras.need("torch")


def test_every_import_skip_goes_through_the_helper():
    own = {"extras.py", os.path.basename(__file__)}
    bare = []
    for name in sorted(os.listdir(HERE)):
        if not name.endswith(".py") or name in own:
            continue
        with open(os.path.join(HERE, name), encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if "importorskip(" in line:
                    bare.append(f"tests/{name}:{n}: {line.strip()}")
    assert not bare, "skip through tests/extras.py (need / skip_reason):\n" + "\n".join(bare)


# ---------------------------------------------------------------------------------------
# C comments say what and why; measurements live in docs/design.md
# ---------------------------------------------------------------------------------------

_NUMBER = r"\d+(?:\.\d+)?(?:e\d+)?"
# a time: a number, then ms, us or ns as a word of its own ("2.3 ms", "656us"); not a name
# that ends in a unit (SO_SPIN_NS) nor a number inside one (x86_64ns)
_MEASURED_TIME = re.compile(r"(?<![\w.])" + _NUMBER + r"\s?(?:ms|us|ns|µs)\b")
# a before -> after figure ("75 -> 40 ms", "0.619 -> 0.428"); not a width ("32 x 32 -> 64-bit")
_BEFORE_AFTER = re.compile(_NUMBER + r"\s*(?:ms|us|ns|µs|%|x)?\s*->\s*" + _NUMBER
                           + r"(?!\d|\.\d|-bit|-byte)")
# a speed-up or slow-down ("1.4x slower")
_RATIO = re.compile(r"(?<![\w.])" + _NUMBER + r"x (?:slower|faster)\b")
_MEASUREMENT = [_MEASURED_TIME, _BEFORE_AFTER, _RATIO]


def _c_comments(src):
    """(line, text) of each /* */ and // comment of C source, string and character
    literals skipped; the text's lines joined with their leading " * " removed, so that a
    figure broken across two lines is seen whole."""
    i, n, line = 0, len(src), 1
    while i < n:
        c = src[i]
        if c in "\"'":
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            line += src.count("\n", i, j + 1)
            i = j + 1
        elif src.startswith("/*", i) or src.startswith("//", i):
            end = src.find("*/", i + 2) + 2 if src[i + 1] == "*" else src.find("\n", i)
            end = n if end < i + 2 else end
            yield line, re.sub(r"\s*\n\s*\*?(?!/)\s*", " ", src[i:end])
            line += src.count("\n", i, end)
            i = end
        else:
            line += c == "\n"
            i += 1


def _measurements_in_comments(root):
    hits = []
    for top, dirs, names in os.walk(os.path.join(root, "csrc")):
        dirs.sort()
        for name in sorted(names):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(top, name)
            with open(path, encoding="utf-8") as f:
                src = f.read()
            for line, text in _c_comments(src):
                for pattern in _MEASUREMENT:
                    hits += [f"{os.path.relpath(path, root)}:{line}: {m.group(0)!r}"
                             for m in pattern.finditer(text)]
    return hits


def test_no_measurement_in_a_c_comment():
    hits = _measurements_in_comments(ROOT)
    assert not hits, ("a comment says what the code does and why; move the measurement to "
                      "docs/design.md, beside the command that reproduces it, and point there "
                      "(docs/design.md, \"Section\"):\n" + "\n".join(hits))


def test_the_measurement_patterns_catch_what_they_should():
    measured = ["75 -> 40 ms", "took 656 us", "2.3ms", "5.2 ns a row", "0.619 -> 0.428.",
                "2.04 -> 1.90 ms", "1.4x slower", "1e5 -> 1e6", "0.2-0.4 ms", "29.2 -> 28.3\n"]
    for text in measured:
        assert any(p.search(text) for p in _MEASUREMENT), text
    plain = ["SO_SPIN_NS", "a 32 x 32 -> 64-bit multiply", "SO_COPY_PIECE (8 MiB)",
             "x86_64ns", "int32 -> int64", "2^15 updates", "1.5ms_x", "pages -> 4 KiB",
             "an int64 -> 8-byte load", "min/max of us", "a few ns"]
    for text in plain:
        assert not any(p.search(text) for p in _MEASUREMENT), text


def test_c_comments_are_read_whole_and_strings_skipped():
    src = ('int a = 1; /* one\n * 75 ->\n * 40 ms */\nchar *s = "/* 5 ms */";\n'
           "// 3 us\nchar c = '\"'; /* x */\n")
    found = list(_c_comments(src))
    assert [line for line, _ in found] == [1, 5, 6]
    assert "75 -> 40 ms" in found[0][1]
    assert not any("5 ms" in text for _, text in found)
