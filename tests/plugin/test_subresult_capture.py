"""Sub-results capture no output of their own (they are parts of the scenario's call report, not
pytest subtests, which would open two temporary files each), and the run's capture setting is
untouched."""

from __future__ import annotations

from tests.plugin.conftest import RIGHT_AND_WRONG, Project

LAB = RIGHT_AND_WRONG

PROBE = """
def pytest_sessionfinish(session):
    (session.config.rootpath / "capture-at-end.txt").write_text(str(session.config.option.capture))
"""

LATER_TEST = """
def test_a_later_test_still_has_its_output_captured():
    print("printed-by-a-later-test")
    assert False
"""


def test_sub_results_are_reported_and_the_capture_option_is_restored(project: Project) -> None:
    project.lab(LAB)
    project.write("capture_probe.py", PROBE)
    project.write("test_later.py", LATER_TEST)
    run = project.run("-p", "capture_probe")
    out = run.stdout.replace("SUBPASSED [", "SUBPASSED[").replace("SUBFAILED [", "SUBFAILED[")
    out = out.replace("SUBSKIPPED [", "SUBSKIPPED[")
    assert "SUBPASSED[action_match]" in out
    assert "SUBSKIPPED[nl_assertion[0]]" in out
    assert "SUBFAILED[action_match]" in out
    assert run.items() == {"lab__right": "PASSED", "lab__wrong": "FAILED"}
    assert "printed-by-a-later-test" in out.split("Captured stdout call")[1]
    assert (project.path / "capture-at-end.txt").read_text() == "fd"
