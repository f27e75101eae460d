"""The examples in the docstrings and in README.md run and print what they show."""
import doctest
from pathlib import Path

import numpy as np
import pytest

import scatterops
import scatterops._api
import scatterops._at

README = Path(__file__).resolve().parent.parent / "README.md"


def test_docstring_examples():
    result = doctest.testmod(scatterops._api, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 6 and result.failed == 0
    result = doctest.testmod(scatterops._at, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 4 and result.failed == 0


def _readme_sessions() -> str:
    """The text of README.md's ```pycon blocks, one after the other."""
    blocks, inside = [], False
    for line in README.read_text().splitlines():
        if line.startswith("```"):
            inside = line.strip() == "```pycon"
            blocks.append("")
        elif inside:
            blocks.append(line)
    return "\n".join(blocks)


@pytest.mark.skipif(not README.exists(), reason="README.md is not beside the tests")
def test_readme_examples():
    test = doctest.DocTestParser().get_doctest(
        _readme_sessions(), {"np": np, "scatterops": scatterops}, "README.md", str(README), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted >= 10 and result.failed == 0
