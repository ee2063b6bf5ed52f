"""Selections aimed at an unavailable domain, and success signals resolved before anything runs."""

from __future__ import annotations

from functools import cached_property
from typing import Any, ClassVar

import pytest

from pytest_tau2.errors import DataError, ScenarioDefinitionError
from pytest_tau2.scenario.base import Scenario, check_success_signals
from pytest_tau2.scenario.selection import (
    keyword_targets,
    node_id_domains,
    node_id_targets,
    pattern_targets,
    signal_errors,
    unavailable_domain,
)
from pytest_tau2.scoring.signals import SuccessSignal
from pytest_tau2.settings import Settings

# ---- which selections aim at a domain ------------------------------------------------------------------------


def test_unavailable_domain() -> None:
    assert unavailable_domain("tau2_retail__unavailable") == "tau2_retail"
    assert unavailable_domain("tau2_retail__1") is None


@pytest.mark.parametrize(
    ("expression", "targets"),
    [
        ("tau2_retail__1", ["tau2_retail__1"]),
        ("retail__1 or tau2_retail__24", ["retail__1", "tau2_retail__24"]),
        ("test_scenario[tau2_retail__3]", ["test_scenario[tau2_retail__3]"]),
        ("tau2_airline__1", []),
        ("restaurant and not tau2_retail__2", ["tau2_retail__2"]),
        ("24", []),  # a bare word does not aim at a domain
        ("", []),
        (None, []),
    ],
)
def test_keyword_targets(expression: str | None, targets: list[str]) -> None:
    assert keyword_targets(expression, "tau2_retail") == targets


@pytest.mark.parametrize(
    ("pattern", "aims"),
    [
        ("tau2_retail__1", True),
        ("tau2_retail__*", True),
        ("tau2_*", True),
        ("*", True),
        ("tau2_airline__1", False),
        ("restaurant__*", False),
        ("tau2_retailer__1", False),
    ],
)
def test_pattern_targets(pattern: str, aims: bool) -> None:
    assert pattern_targets(pattern, "tau2_retail") is aims


def test_node_id_targets() -> None:
    args = [
        "scenarios/test_scenarios.py::test_scenario[tau2_retail__1]",
        "scenarios/test_scenarios.py::test_scenario[tau2_retail__2-t1]",
        "scenarios/test_scenarios.py::test_scenario[restaurant__menu_question]",
        "scenarios",
    ]
    assert node_id_targets(args, ["tau2_retail", "tau2_airline"]) == {
        "tau2_retail": ["tau2_retail__1", "tau2_retail__2-t1"]
    }


# ---- success signals declared through a property ---------------------------------------------------------------


class _Base(Scenario):
    description = "selection test"
    answer: ClassVar[Any] = (SuccessSignal.CLEAN_EXIT,)

    @property
    def success_signals(self) -> Any:  # type: ignore[override]
        return self.answer


def _scenario(name: str, answer: Any) -> type[Scenario]:
    return type(f"S_{name}", (_Base,), {"name": f"unitsel__{name}", "answer": answer})


@pytest.mark.parametrize("bad", [(), [], "CLEAN_EXIT", ("clean_exit",), None, (SuccessSignal.CLEAN_EXIT, 3)], ids=repr)
def test_a_property_returning_a_bad_value_names_the_class(bad: Any) -> None:
    cls = _scenario("bad", bad)
    with pytest.raises(ScenarioDefinitionError) as caught:
        check_success_signals(cls())
    message = str(caught.value)
    assert "S_bad" in message and "'unitsel__bad'" in message
    assert f"its success_signals property returned success_signals={bad!r}" in message


def test_a_property_that_raises_names_the_class() -> None:
    class Raising(_Base):
        name = "unitsel__raising"

        @cached_property
        def success_signals(self) -> Any:  # type: ignore[override]
            raise AttributeError("no such field 'criteria'")

    with pytest.raises(ScenarioDefinitionError, match=r"Raising.*raised AttributeError: no such field 'criteria'"):
        check_success_signals(Raising())


def test_a_good_property_passes() -> None:
    check_success_signals(_scenario("good", (SuccessSignal.CLEAN_EXIT,))())


def test_signal_errors_checks_each_selected_class_once() -> None:
    created: list[str] = []

    class Counting(_Base):
        name = "unitsel__counting"
        answer = ()

        def __init__(self) -> None:
            created.append(self.name)

    good = _scenario("fine", (SuccessSignal.CLEAN_EXIT,))
    classes: dict[str, type[Scenario]] = {"a-t1": Counting, "a-t2": Counting, "b": good}
    errors = signal_errors(["a-t1", "a-t2", "b", "unknown"], classes, Settings())
    assert sorted(errors) == ["a-t1", "a-t2"] and created == ["unitsel__counting"]
    assert "Counting" in str(errors["a-t1"])


def test_signal_errors_leaves_data_problems_to_the_item() -> None:
    class NoData(_Base):
        name = "unitsel__nodata"

        @property
        def success_signals(self) -> Any:  # type: ignore[override]
            raise DataError("no tau2 data folder is configured")

    assert signal_errors(["x"], {"x": NoData}, Settings()) == {}


def test_node_ids_of_scenarios_alone_name_the_domains_to_generate() -> None:
    domains = ["tau2_retail", "tau2_airline", "tau2_telecom"]
    node = "scenarios/test_scenarios.py::test_scenario[{}]"
    assert node_id_domains([node.format("tau2_retail__1"), node.format("tau2_retail__5-t2")], domains) == {
        "tau2_retail"
    }
    assert node_id_domains([node.format("tau2_retail__1"), node.format("tau2_airline__0")], domains) == {
        "tau2_retail",
        "tau2_airline",
    }
    # Anything else reaches every domain: no arguments, a folder, a test without parameters, a
    # scenario no source names (an explicit class, or a typo: its hints need every name).
    assert node_id_domains([], domains) is None
    assert node_id_domains(["scenarios"], domains) is None
    assert node_id_domains([node.format("tau2_retail__1"), "scenarios/test_scenarios.py"], domains) is None
    assert node_id_domains([node.format("restaurant__pizza_pepperoni")], domains) is None
    assert node_id_domains([node.format("tau2_retial__1")], domains) is None
