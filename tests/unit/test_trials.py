"""Trial ids and seeds (run/trials.py), and the seed a trial's models get (run/participants.Context)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_tau2.run import participants
from pytest_tau2.run.trial import Trial
from pytest_tau2.scenario.registry import all_scenarios
from pytest_tau2.scenario.trial_ids import DEFAULT_SEED, split_trial_id, trial_id, trial_seed
from pytest_tau2.settings import OPTIONS, Settings

DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR", "/work/shared/tau2-data"))


def test_default_seed_gives_upstreams_trial_seeds() -> None:
    """tau2's runner: random.seed(300), then randint(0, 1_000_000) once per trial."""
    assert DEFAULT_SEED == 300 == next(o.default for o in OPTIONS if o.name == "seed")
    assert [trial_seed(300, k) for k in range(1, 5)] == [626729, 373753, 361454, 1567]


def test_a_trial_seed_does_not_depend_on_how_many_trials_run() -> None:
    assert trial_seed(7, 3) == trial_seed(7, 3)
    many = [trial_seed(7, k) for k in range(1, 9)]
    assert many[:4] == [trial_seed(7, k) for k in range(1, 5)]
    assert len(set(many)) == 8
    assert trial_seed(8, 1) != trial_seed(7, 1)


def test_trials_are_numbered_from_one() -> None:
    with pytest.raises(ValueError, match="numbered from 1"):
        trial_seed(300, 0)


def test_trial_ids() -> None:
    assert trial_id("tau2_retail__0", 1, 1) == "tau2_retail__0"  # one trial: today's id
    assert trial_id("tau2_retail__0", 2, 4) == "tau2_retail__0-t2"
    with pytest.raises(ValueError, match=r"outside 1\.\.4"):
        trial_id("tau2_retail__0", 5, 4)
    assert split_trial_id("tau2_retail__0-t2") == ("tau2_retail__0", 2)
    assert split_trial_id("tau2_retail__0-t12") == ("tau2_retail__0", 12)
    assert split_trial_id("tau2_retail__0") == ("tau2_retail__0", None)
    assert split_trial_id("tau2_retail__0-t0") == ("tau2_retail__0-t0", None)


@pytest.fixture
def retail_0() -> object:
    if not (DATA_DIR / "tau2" / "domains").is_dir():
        pytest.skip(f"no tau2 data under {DATA_DIR}")
    settings = Settings(data_dir=str(DATA_DIR))
    return all_scenarios(settings)["tau2_retail__0"]().bind(settings)


def test_the_agent_and_user_get_the_trial_seed_and_the_judge_does_not(retail_0: object) -> None:
    settings = Settings(
        data_dir=str(DATA_DIR),
        agent_model="openai/a",
        user_model="openai/u",
        judge_model="openai/j",
        judge_args='{"temperature": 0}',
        trials=4,
    )
    trial = Trial(retail_0, settings, trial=3)  # type: ignore[arg-type]
    ctx = trial.context
    assert ctx.seed == trial.seed == trial_seed(300, 3) == 361454
    assert trial.result_name == "tau2_retail__0-t3"
    assert trial.record() == {"trial": 3, "trials": 4, "seed": 361454}
    assert ctx.required_model("agent").args == {"seed": 361454}
    assert ctx.required_model("user").args == {"seed": 361454}
    assert ctx.required_model("judge").args == {"temperature": 0}
    assert ctx.models()["agent"]["args"] == {"seed": 361454}  # recorded in metrics.json too


def test_a_seed_in_the_model_args_wins(retail_0: object) -> None:
    settings = Settings(data_dir=str(DATA_DIR), agent_model="openai/a", agent_args='{"seed": 7}', trials=2)
    ctx = participants.Context.for_scenario(retail_0, settings, trial=2)  # type: ignore[arg-type]
    assert ctx.required_model("agent").args == {"seed": 7}


def test_one_trial_keeps_the_scenario_name(retail_0: object) -> None:
    trial = Trial(retail_0, Settings(data_dir=str(DATA_DIR)))  # type: ignore[arg-type]
    assert (trial.number, trial.result_name, trial.seed) == (1, "tau2_retail__0", 626729)


@pytest.mark.parametrize(
    ("field", "value", "message"), [("verdict", "reward", "--tau2-verdict"), ("trials", 0, "--tau2-trials")]
)
def test_bad_trial_and_verdict_settings_are_refused(field: str, value: object, message: str) -> None:
    from pytest_tau2.errors import SettingsError

    with pytest.raises(SettingsError, match=message):
        participants.validate_settings(Settings(**{field: value}))  # type: ignore[arg-type]
