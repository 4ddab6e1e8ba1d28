"""Tests of control flow differentiate and batch bodies made of lax primitives. A primitive
whose own jvp/batching rule is not written yet (``NotImplementedError: ... not yet
written``) makes the test an expected failure naming that primitive, rather than a failure
of control flow; such tests pass as soon as the rule lands."""

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is None or call.when != "call":
        return
    error = call.excinfo.value
    if isinstance(error, NotImplementedError) and "not yet written" in str(error):
        report.outcome = "skipped"
        report.wasxfail = f"waiting for a lax rule: {error}"
