"""``--tau2-scenarios`` selects exact names or glob patterns; an unknown name is a usage error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def collect(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def collected(done: subprocess.CompletedProcess[str]) -> list[str]:
    """The node ids ``--collect-only -q`` listed, sorted."""
    return sorted(line for line in done.stdout.splitlines() if "::" in line)


def test_exact_names_do_not_select_their_prefixes() -> None:
    done = collect("--tau2-scenarios", "restaurant__party_order,restaurant__pizza*")
    assert collected(done) == [
        "scenarios/test_scenarios.py::test_scenario[restaurant__party_order]",
        "scenarios/test_scenarios.py::test_scenario[restaurant__pizza_pepperoni]",
    ], done.stdout[-2000:]


def test_an_unknown_name_is_a_usage_error_with_suggestions() -> None:
    done = collect("--tau2-scenarios", "restaurant__pizza_peperoni")
    assert done.returncode == 4
    assert "no collected scenario matches 'restaurant__pizza_peperoni'" in done.stderr
    assert "did you mean restaurant__pizza_pepperoni" in done.stderr


def test_a_keyword_that_is_a_full_scenario_name_selects_that_scenario_only() -> None:
    # -k matches substrings; a word that is a whole scenario name is made exact (tau2_retail__5 is
    # not tau2_retail__50..59), a word that is no name stays a substring (restaurant__pizza).
    done = collect("-k", "tau2_retail__5 or restaurant__pizza or (tau2_retail__1 and not tau2_retail__1)")
    assert collected(done) == [
        "scenarios/test_scenarios.py::test_scenario[restaurant__pizza_pepperoni]",
        "scenarios/test_scenarios.py::test_scenario[tau2_retail__5]",
    ], done.stdout[-2000:]


def test_exact_name_keywords_rewrites_only_names_that_others_contain() -> None:
    from pytest_tau2.scenario.selection import exact_name_keywords

    names = ["shop__5", "shop__50", "shop__6", "shop__x-t1"]
    assert exact_name_keywords("shop__5 or not (shop__6)", names) == ("shop__5] or not (shop__6)", {"shop__5"})
    assert exact_name_keywords("shop__50 and shop", names) == ("shop__50 and shop", set())
    assert exact_name_keywords(None, names) == (None, set())


def test_node_ids_generate_only_their_domains_and_still_name_a_missing_one() -> None:
    """Scenarios' node ids (an IDE's run) collect exactly those items, generating only their
    domains; a task id the domain does not have is still pytest's "not found"."""
    node = "scenarios/test_scenarios.py::test_scenario[{}]"
    done = collect(node.format("tau2_retail__1"), node.format("tau2_airline__2"))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert [line for line in done.stdout.splitlines() if "::" in line] == [  # in the arguments' order
        node.format("tau2_retail__1"),
        node.format("tau2_airline__2"),
    ]
    missing = collect(node.format("tau2_retail__1"), node.format("tau2_retail__9999"))
    assert missing.returncode != 0 and "not found" in missing.stdout + missing.stderr
