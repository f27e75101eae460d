"""The documentation: the docstrings' examples and the ```pycon blocks of README.md and docs/*.md
run and print what they show; every public function has a numpydoc docstring whose Parameters
are its parameters; the API reference lists every public function; the README's quick-start
commands are the ones CI runs, its install commands work from a checkout, and what it says of
floating-point warnings holds."""
import doctest
import inspect
import re
from pathlib import Path

import numpy as np
import pytest

import scatterops
import scatterops._api
import scatterops._at
import scatterops._threads

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
QUICK_START = ["pip install -e . && python -m scatterops",
               "pip install -e '.[test]' && python -m pytest"]

PUBLIC = {name: getattr(scatterops, name) for name in scatterops.__all__
          if callable(getattr(scatterops, name))}


def test_public_functions_are_the_documented_ones():
    assert {"scatter_update", "scatter_nd", "scatter_elements",
            "set_num_threads", "get_num_threads"} <= set(PUBLIC)


@pytest.fixture
def thread_count():
    """The thread count, set back after the test whatever the examples did."""
    before = scatterops.get_num_threads()
    yield before
    scatterops.set_num_threads(before)


@pytest.mark.parametrize("module", [scatterops._api, scatterops._threads, scatterops._at])
def test_docstring_examples(module, thread_count):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 3 and result.failed == 0


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_public_docstring_examples_run(name, thread_count):
    # whichever module a public function lives in, its Examples run, and leave the process's
    # settings as they found them (a count other than 1, which an example may set)
    scatterops.set_num_threads(thread_count + 1)
    tests = doctest.DocTestFinder().find(PUBLIC[name], name, globs={})
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted >= 1 and result.failed == 0
    assert scatterops.get_num_threads() == thread_count + 1, "an example left the thread count changed"


def _sections(doc: str) -> dict:
    """A numpydoc docstring's sections: {title: the lines below its underline}."""
    lines = inspect.cleandoc(doc).splitlines()
    sections, title = {}, None
    for line, below in zip(lines, lines[1:] + [""]):
        if line.strip() and set(below.strip()) == {"-"} and len(below.strip()) == len(line.strip()):
            title = line.strip()
            sections[title] = []
        elif title is not None and set(line.strip()) != {"-"}:
            sections[title].append(line)
    return sections


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_public_docstring_is_numpydoc(name):
    func = PUBLIC[name]
    sections = _sections(func.__doc__ or "")
    params = list(inspect.signature(func).parameters)
    for required in ["Returns", "Examples"] + (["Parameters", "Raises"] if params else []):
        assert required in sections, f"{name}'s docstring has no {required} section"
    documented = [m.group(1) for line in sections.get("Parameters", [])
                  for m in [re.match(r"^(\w+) :", line)] if m]
    assert documented == params, f"{name}: Parameters names {documented}, the signature {params}"
    assert any(line.lstrip().startswith(">>> ") for line in sections["Examples"])


def test_api_reference_lists_every_public_function():
    listed = {line.strip() for line in (DOCS / "api.rst").read_text().splitlines()
              if line.startswith("   ") and not line.strip().startswith(":")}
    missing = sorted(set(PUBLIC) - listed)
    assert not missing, f"docs/api.rst does not list {missing}: one line each under Functions"
    assert "reference" in listed


def _sessions(path: Path) -> str:
    """The text of a Markdown file's ```pycon blocks, one after the other."""
    blocks, inside = [], False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            inside = line.strip() == "```pycon"
            blocks.append("")
        elif inside:
            blocks.append(line)
    return "\n".join(blocks)


def _run_sessions(path: Path):
    test = doctest.DocTestParser().get_doctest(
        _sessions(path), {"np": np, "scatterops": scatterops}, path.name, str(path), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    runner.run(test)
    return runner.summarize(verbose=False)


@pytest.mark.skipif(not README.exists(), reason="README.md is not beside the tests")
def test_readme_examples():
    result = _run_sessions(README)
    assert result.attempted >= 10 and result.failed == 0


@pytest.mark.parametrize("page", sorted(p.name for p in DOCS.glob("*.md")))
def test_docs_page_examples(page):
    assert _run_sessions(DOCS / page).failed == 0


@pytest.mark.skipif(not README.exists(), reason="README.md is not beside the tests")
def test_readme_api_signatures_are_the_functions():
    # the ```python block under "## API" shows each scatter function's signature as it is
    text = README.read_text()
    block = re.search(r"^## API\n+```python\n(.*?)^```", text, re.S | re.M)
    assert block, "README.md has no ```python block right under ## API"
    shown = {line.split("(")[0]: line.replace('"', "'") for line in block.group(1).splitlines()}
    for name in ["scatter_update", "scatter_nd", "scatter_elements"]:
        assert shown.get(name) == name + str(inspect.signature(PUBLIC[name]))


@pytest.mark.skipif(not README.exists(), reason="README.md is not beside the tests")
def test_readme_quick_start_is_what_ci_runs():
    # the two commands right after the introduction, verbatim, and .ci/run runs both
    text = README.read_text()
    first_block = re.search(r"^```\n(.*?)^```", text, re.S | re.M)
    assert first_block, "README.md has no plain ``` block"
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines() if line.strip()]
    assert commands == QUICK_START
    assert text.index(first_block.group(0)) < text.index("\n## API")
    ci = ROOT / ".ci" / "run"
    if ci.exists():
        run = [line.strip().replace(" --no-cache-dir", "") for line in ci.read_text().splitlines()]
        for command in QUICK_START:
            for part in command.split(" && "):
                assert any(line.startswith(part) for line in run), f".ci/run does not run {part!r}"


def test_install_commands_work_from_a_checkout():
    # scatterops is on no package index: `pip install scatterops` or 'scatterops[dask]' fails,
    # `pip install -e '.[dask]'` from the checkout works
    pages = [README] + [DOCS / name for name in ("index.md", "development.md", "testing.md",
                                                 "performance.md")]
    bad = [f"{page.name}: {line.strip()}" for page in pages if page.exists()
           for line in page.read_text().splitlines()
           if re.search(r"pip install (?:-{1,2}[\w-]+ )*['\"]?scatterops\b", line)]
    assert not bad, "install from the checkout (pip install -e '.[EXTRA]'):\n" + "\n".join(bad)
    assert "pip install -e '.[dask]'" in README.read_text()


def test_floating_point_warnings_are_as_the_readme_says():
    # README, Semantics: the three functions raise no floating-point warning whatever np.errstate
    # says, in the C loops (float32) and in the NumPy fallback (longdouble, non-native byte
    # order); scatterops.at is silent where the C core runs, and under an error mode that raises
    # it runs NumPy's ufunc.at, which raises
    import warnings
    big = {np.float32: 3e38, np.longdouble: np.finfo(np.longdouble).max, ">f8": 1.7e308}
    with np.errstate(all="raise"):
        for dtype, v in big.items():
            out = scatterops.scatter_elements(np.array([v], dtype), [0], np.array([v], dtype),
                                              reduction="add")
            assert np.isinf(out[0]), dtype
        out = scatterops.scatter_elements(np.array([np.inf]), [0], [-np.inf], reduction="add")
        assert np.isnan(out[0])
        a = np.array([3e38], np.float32)
        with pytest.raises(FloatingPointError):
            scatterops.at(np.add, a, [0], np.float32(3e38))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = np.array([3e38], np.float32)
        scatterops.at(np.add, a, [0], np.float32(3e38))
        assert np.isinf(a[0])
    assert "np.errstate" in README.read_text() and "Floating-point warnings" in README.read_text()
