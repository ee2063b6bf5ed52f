"""What a model-driven run saves and shows, through both transports (the OpenAI wire path and litellm):

- the documented dummy key (``"api_key": "none"``) masks no word: transcripts equal what the
  agent saw, and a cassette recorded with it replays under another key;
- a secret quoted in a check message (the judge's reason) is masked in the terminal and in
  junit.xml, as in the files;
- terminal control sequences from model text are escaped in the terminal, kept exact in files;
- every result file, report.html and the cassette get the umask's mode.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from tests.e2e.llm_scripts import SECRET, AgentScript, PytestRun, ScriptedModels, node, run_pytest
from tests.support.fake_openai import FakeOpenAIServer, text

TASK = "2"  # count the t-shirts, return three items; one NL assertion, judged
SCENARIO = f"tau2_retail__{TASK}"
ANSI = "\x1b[2J\x1b]0;pwned\x07\x1b[31m"
"""Clear the screen, set the window title, turn the text red."""
WORDS = "None of your other orders changed and none needed to: the EMPTY box is x-marked, key none."
"""Common words that a dummy key of the same spelling used to mask."""
OTHER_KEY = "sk-replay-ci-0123456789abcdef"


def _args(server_url: str, api_key: str) -> str:
    return json.dumps({"api_base": server_url, "api_key": api_key})


def _options(base_url: str, *, dummy: str, judge_key: str) -> list[str]:
    return [
        *("--tau2-agent-model", "openai/agent", "--tau2-agent-args", _args(base_url, dummy)),
        *("--tau2-user-model", "openai/user", "--tau2-user-args", _args(base_url, dummy)),
        *("--tau2-judge-model", "openai/judge", "--tau2-judge-args", _args(base_url, judge_key)),
    ]


def _models() -> ScriptedModels:
    models = ScriptedModels(wrap_up=(f"{WORDS} {ANSI}done",))
    reason = f"the agent read its key {SECRET} aloud {ANSI}and said nothing of the count"
    verdict = {"verdicts": [{"index": 0, "passed": False, "reason": reason}]}
    models.judge[TASK] = text(json.dumps(verdict))
    models.agent[TASK] = AgentScript(models.gold_steps(TASK), closing=models.gold_closing(TASK))
    return models


def _modes(*folders: Path) -> dict[str, int]:
    return {
        str(path): stat.S_IMODE(path.stat().st_mode)
        for folder in folders
        for path in folder.rglob("*")
        if path.is_file() and path.name != ".tau2.lock"
    }


@pytest.mark.parametrize("transport", ["auto", "litellm"])
def test_dummy_key_secrets_and_control_characters_on_the_model_path(tmp_path: Path, transport: str) -> None:
    cassettes = tmp_path / "cassettes"
    recording = ["--tau2-cassette-dir", str(cassettes), "--tau2-llm-transport", transport]
    with FakeOpenAIServer() as server:
        _models().install(server)
        run = run_pytest(
            [node(SCENARIO), *_options(server.base_url, dummy="none", judge_key=SECRET),
             "--tau2-record-mode", "all", *recording],
            tmp_path / "recorded",
            umask=0o027,
        )  # fmt: skip
        base_url = server.base_url
    _saved_text_is_exact(run)
    _shown_text_is_masked_and_escaped(run)
    # 14: every file (metrics.json, all_metrics.json, all_summary.txt, run.json, report.html, the
    # transcript, the cassette, junit.xml) has the umask's mode: 0666 & ~0027.
    modes = _modes(run.results_dir, cassettes)
    modes[str(run.junit_path)] = stat.S_IMODE(run.junit_path.stat().st_mode)
    for name in ("metrics.json", "transcript.json"):
        assert str(run.results_dir / SCENARIO / name) in modes
    for name in ("all_metrics.json", "all_summary.txt", "run.json", "report.html"):
        assert str(run.results_dir / name) in modes
    assert any(path.endswith(".yaml") for path in modes), modes
    assert set(modes.values()) == {0o640}, {p: oct(m) for p, m in modes.items() if m != 0o640}

    # 10: a cassette recorded with the dummy key replays under any other key (no server: replay only).
    replay = run_pytest(
        [node(SCENARIO), *_options(base_url, dummy=OTHER_KEY, judge_key=OTHER_KEY),
         "--tau2-record-mode", "none", *recording],
        tmp_path / "replayed",
    )  # fmt: skip
    assert "tau2: record mode none (replay only)" in replay.stdout, replay.stdout[:2000]
    assert "CassetteMissError" not in replay.output, replay.output[-3000:]
    replayed = replay.metrics(SCENARIO)
    assert replayed["infrastructure_error"] is None
    assert replayed["db_state_match"] is True and replayed["nl_assertion_pass_rate"] == 0
    assert replay.transcript(SCENARIO) == run.transcript(SCENARIO)


def _saved_text_is_exact(run: PytestRun) -> None:
    """Files hold what the agent saw: the words "none", "None", "EMPTY", "x" and the control
    characters are kept; the judge's key is masked."""
    assert "record mode all (call the models" in run.stdout
    metrics = run.metrics(SCENARIO)
    assert metrics["db_state_match"] is True and metrics["nl_assertion_pass_rate"] == 0, metrics
    said = [m["content"] for m in run.transcript(SCENARIO) if m.get("role") == "assistant" and m.get("content")]
    assert f"{WORDS} {ANSI}done" in said, said
    nl = next(c for c in metrics["checks"] if c["id"] == "nl_assertion[0]")
    assert ANSI in nl["message"] and "***" in nl["message"]
    everything = run.files_text()
    assert SECRET not in everything
    assert "***" not in json.dumps(run.transcript(SCENARIO))  # nothing of what the agent saw was masked
    cassette = "\n".join(p.read_text("utf-8") for p in (run.results_dir.parent.parent / "cassettes").rglob("*.yaml"))
    assert "None of your other orders changed and none needed to" in cassette


def _shown_text_is_masked_and_escaped(run: PytestRun) -> None:
    """The terminal and junit.xml show the judge's reason with the key masked and the escape
    sequences written out, never acted upon."""
    out = run.output
    assert SECRET not in out and "\x1b" not in out and "\x07" not in out
    assert "judge: the agent read its key *** aloud \\x1b[2J\\x1b]0;pwned\\x07\\x1b[31mand said" in out, out[-4000:]
    junit = run.junit_path.read_text("utf-8")
    assert SECRET not in junit
    failure = run.testcase(SCENARIO).find("failure")
    assert failure is not None and "judge: the agent read its key *** aloud" in (failure.text or "")
