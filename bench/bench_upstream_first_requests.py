"""Does a model see what upstream's ``tau2 run`` shows it? The first request of the agent and of the
simulated user, recorded on the wire, upstream against ours.

One loopback OpenAI-compatible server (tests/support/fake_openai.py) answers both programs with the
same script: the user opens with a fixed sentence, the agent answers in text, the user then stops.
Upstream's own CLI at the pin (``tau2 run``, from ``$TAU2_UPSTREAM_PYTHON``'s environment) runs one
task of every tau2 domain against it (banking_knowledge with the bm25 retrieval), then pytest-tau2
runs the same tasks under ``--tau2-prompts upstream``. For each domain and side the first request's
``messages`` and ``tools`` are compared as received (parsed JSON, key order included).

Writes ``<out>.md`` / ``<out>.json`` and, with ``--fixture``, the sha256 of each of upstream's first
requests to ``tests/e2e/tau2_first_requests_upstream.json``: hashes, not text, so the test that
checks ours against them (tests/e2e/test_upstream_prompts.py) holds no upstream prose.

Usage:  TAU2_UPSTREAM_PYTHON=/path/to/upstream/bin/python python bench/bench_upstream_first_requests.py [--fixture]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.llm_scripts import DATA_DIR, model_options, node, run_pytest, subprocess_env  # noqa: E402
from tests.support.fake_openai import FakeOpenAIServer, Reply, text  # noqa: E402

FIXTURE = ROOT / "tests" / "e2e" / "tau2_first_requests_upstream.json"
OPENING = "Hello, I need some help with my account, please."
ANSWER = "I can help with that."
BYE = "Thanks, bye. ###STOP###"


def user_reply(request: dict[str, Any]) -> Reply:
    said = sum(1 for m in request["messages"] if m.get("role") == "assistant")
    return text(OPENING if said == 0 else BYE)


def first_telecom_task() -> tuple[str, str]:
    """The first base telecom task: (its scenario name, its upstream id)."""
    import pytest_tau2.domains.tau2_sources  # noqa: F401  (registers the tau2 domains)
    from pytest_tau2.scenario.registry import all_scenarios
    from pytest_tau2.settings import Settings

    settings = Settings(data_dir=str(DATA_DIR), results_dir="unused")
    name = next(n for n in all_scenarios(settings) if n.startswith("tau2_telecom__"))
    return name, str(all_scenarios(settings)[name]().bind(settings).task["id"])


def cases() -> dict[str, tuple[str, str]]:
    """domain -> (our scenario name, upstream task id)."""
    return {
        "retail": ("tau2_retail__0", "0"),
        "airline": ("tau2_airline__0", "0"),
        "mock": ("tau2_mock__create_task_1", "create_task_1"),
        "banking_knowledge": ("tau2_banking_knowledge__task_001", "task_001"),
        "telecom": first_telecom_task(),
    }


def digest(request: dict[str, Any]) -> str:
    """sha256 of the request's messages and tools as received, key order kept."""
    body = {"messages": request.get("messages"), "tools": request.get("tools")}
    return hashlib.sha256(json.dumps(body, ensure_ascii=False).encode("utf-8")).hexdigest()


def first_of(requests: list[dict[str, Any]], side: str) -> dict[str, Any]:
    return next(r for r in requests if str(r.get("model", "")).endswith(side))


def upstream_requests(python: str, domain: str, task_id: str, server: FakeOpenAIServer, tmp: Path) -> dict[str, Any]:
    before = len(server.requests)
    args = json.dumps({"api_base": server.base_url, "api_key": "sk-loopback"})
    cli = Path(python).parent / "tau2"
    command = [str(cli), "run", "--domain", domain, "--task-ids", task_id, "--num-trials", "1",
               "--agent-llm", "openai/agent", "--agent-llm-args", args, "--user-llm", "openai/user",
               "--user-llm-args", args, "--max-steps", "10", "--max-concurrency", "1",
               "--save-to", str(tmp / f"upstream-{domain}"), "--log-level", "ERROR"]  # fmt: skip
    if domain == "banking_knowledge":
        command += ["--retrieval-config", "bm25"]
    env = {**subprocess_env(), "TAU2_DATA_DIR": str(DATA_DIR)}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600, check=False, cwd=tmp)
    requests = server.requests[before:]
    if not requests:
        raise SystemExit(f"upstream's tau2 run sent nothing for {domain}: {done.stdout[-2000:]}{done.stderr[-2000:]}")
    return {"agent": first_of(requests, "agent"), "user": first_of(requests, "user")}


def our_requests(
    names: dict[str, str], server: FakeOpenAIServer, tmp: Path, view: str | None
) -> dict[str, dict[str, Any]]:
    """One nested run of all the scenarios; each domain's first requests told apart by system prompt."""
    before = len(server.requests)
    env = subprocess_env(TAU2_PROMPTS="upstream", **({"TAU2_VIEW_FILE": view} if view else {}))
    run = run_pytest([*(node(n) for n in names.values()), *model_options(server), "--tau2-prompts", "upstream"],
                     tmp / "ours", env=env, timeout=600)  # fmt: skip
    requests = server.requests[before:]
    out: dict[str, dict[str, Any]] = {}
    for domain, name in names.items():
        agent_prompt = (run.results_dir / name / "scenario_config" / "agent_prompt.txt").read_text("utf-8")
        user_prompt = (run.results_dir / name / "scenario_config" / "user_prompt.txt").read_text("utf-8")
        out[domain] = {
            side: next(r for r in requests if str(r.get("model", "")).endswith(side)
                       and r["messages"][0].get("content") == prompt)
            for side, prompt in (("agent", agent_prompt), ("user", user_prompt))
        }  # fmt: skip
    return out


def differences(theirs: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    found = []
    for key in ("messages", "tools"):
        a, b = theirs.get(key), ours.get(key)
        if a == b and json.dumps(a) == json.dumps(b):
            continue
        if key == "messages" and isinstance(a, list) and isinstance(b, list):
            for i, (x, y) in enumerate(zip(a, b, strict=False)):
                if x != y:
                    keys = sorted(set(x) | set(y))
                    differ = [k for k in keys if x.get(k) != y.get(k)]
                    found.append(f"messages[{i}] ({x.get('role')}) differs in {differ}")
            if len(a) != len(b):
                found.append(f"messages: {len(a)} upstream, {len(b)} ours")
        elif key == "tools" and isinstance(a, list) and isinstance(b, list):
            names_a = [t["function"]["name"] for t in a]
            names_b = [t["function"]["name"] for t in b]
            if names_a != names_b:
                found.append(f"tools: upstream {names_a}, ours {names_b}")
            else:
                found += [f"tool {n} differs" for n, x, y in zip(names_a, a, b, strict=True) if x != y]
            if not found:
                found.append("tools: same content, other key order")
        else:
            found.append(f"{key}: upstream {json.dumps(a)[:200]}, ours {json.dumps(b)[:200]}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "upstream_first_requests"))
    parser.add_argument("--view", default=None, help="the tau2 view file ours runs with (TAU2_VIEW_FILE)")
    parser.add_argument("--fixture", action="store_true", help=f"write upstream's digests to {FIXTURE}")
    args = parser.parse_args()
    python = os.environ.get("TAU2_UPSTREAM_PYTHON")
    if not python:
        raise SystemExit("set TAU2_UPSTREAM_PYTHON to an interpreter with tau2-bench installed")
    chosen = cases()
    rows = []
    with tempfile.TemporaryDirectory() as tmp_, FakeOpenAIServer() as server:
        tmp = Path(tmp_)
        server.add_handler("agent", text(ANSWER))
        server.add_handler("user", user_reply)
        theirs = {d: upstream_requests(python, d, task_id, server, tmp) for d, (_, task_id) in chosen.items()}
        view = str(Path(args.view).resolve()) if args.view else None
        ours = our_requests({d: name for d, (name, _) in chosen.items()}, server, tmp, view)
    fixture: dict[str, Any] = {"pin": "a2c024725189473d2d7cea3a5cfdbcc67478e41f", "opening": OPENING, "domains": {}}
    for domain, (name, task_id) in chosen.items():
        for side in ("agent", "user"):
            found = differences(theirs[domain][side], ours[domain][side])
            rows.append({"domain": domain, "scenario": name, "task": task_id, "side": side, "equal": not found,
                         "differences": found,
                         "upstream_sha256": digest(theirs[domain][side]), "ours_sha256": digest(ours[domain][side]),
                         "tools": len(theirs[domain][side].get("tools") or []),
                         "other_keys": {"upstream": sorted(set(theirs[domain][side]) - {"messages", "tools"}),
                                        "ours": sorted(set(ours[domain][side]) - {"messages", "tools"})},
                         "messages": [m.get("role") for m in theirs[domain][side]["messages"]]})  # fmt: skip
            fixture["domains"].setdefault(domain, {"scenario": name, "task": task_id})[side] = digest(
                theirs[domain][side]
            )
    Path(args.out + ".json").write_text(json.dumps(rows, indent=2) + "\n", "utf-8")
    lines = [
        "# The first requests, upstream's `tau2 run` against ours (bench/bench_upstream_first_requests.py)",
        "",
        "Both programs against one loopback server with the same scripted replies; ours under",
        "`--tau2-prompts upstream`; banking_knowledge with bm25. `messages` and `tools` of each side's first",
        "request compared as received (parsed JSON, key order included). View: "
        + ("one derived by `pytest-tau2 data view`" if args.view else "the shared `../tau2-view/agent_view.json`")
        + ".",
        "",
        "| domain | scenario | side | messages | tools | equal | differences | other request keys (upstream / ours) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['domain']} | {r['scenario']} | {r['side']} | {', '.join(r['messages'])} | {r['tools']} | "
                     f"{r['equal']} | {'; '.join(r['differences']) or '-'} | "
                     f"{', '.join(r['other_keys']['upstream'])} / {', '.join(r['other_keys']['ours'])} |")  # fmt: skip
    Path(args.out + ".md").write_text("\n".join(lines) + "\n", "utf-8")
    if args.fixture:
        FIXTURE.write_text(json.dumps(fixture, indent=2) + "\n", "utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
