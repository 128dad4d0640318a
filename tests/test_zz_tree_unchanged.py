"""The last test of the suite (pytest runs files in name order): the suite left the repository as
it found it. Every test works in its own temporary folder (conftest.py), and no run, store or
report lands in the tree; a file a test did create there shows here by name. Under pytest-xdist
this runs while other workers' tests still do, so conftest.pytest_sessionfinish checks the tree
again once all are done (and in the fast tier, which leaves this test out: it runs git)."""
import pytest

from conftest import TREE_AT_START, tree_status


def test_the_suite_left_the_repository_tree_unchanged():
    if TREE_AT_START is None:
        pytest.skip("not a git checkout: no tree to compare")
    assert tree_status() == TREE_AT_START
