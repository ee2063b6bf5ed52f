"""HTML report at telecom scale: file size and time until the page is usable in headless Chromium.

1. Runs a real offline sweep of a sample of the full telecom task set (every 57th task, about
   40) to get real result folders: tool names, tool results, DB-state predicates, transcripts.
2. Writes a synthetic results folder of all 2,285 telecom tasks shaped like a model run
   (``litellm:openai/gpt-4.1`` on both sides): each task's own id, description and DB-state
   assertions; a real sample transcript of the same issue family stretched to a model-length
   conversation (more turns, longer messages made of words from the telecom policy, so the
   text compresses like prose rather than like repeats); failed predicates, max-turns
   endings, stalls and infrastructure errors at rates seen in model sweeps; token usage and
   cost per call at gpt-4.1 prices; durations of model calls.
3. Builds report.html with ``write_report`` and opens it (several times) in headless Chromium:
   ``tau2-overview`` (overview parsed and painted), ``tau2-table`` (the table rendered and
   every filter wired: the page is usable), then a failing scenario's panel and a search.

Usage:  python bench/bench_report.py [--runs 5] [--keep DIR] [--out bench/results/report]
Needs TAU2_DATA_DIR (defaults to ../shared/tau2-data when it exists), playwright and a
Chromium (scripts/install-browser.sh; TAU2_CHROMIUM overrides the path).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_tau2.domains.tau2_sources import slug  # noqa: E402
from pytest_tau2.report.html import write_report  # noqa: E402
from pytest_tau2.report.summary import render as render_summary  # noqa: E402

TARGET_MB = 25.0
TARGET_USABLE_MS = 2000.0
PRICE_IN, PRICE_OUT = 2.0e-6, 8.0e-6  # gpt-4.1, USD per token
MODEL = {"model": "openai/gpt-4.1", "args": {"temperature": 0.0, "api_key": "***"}}
INFRA_ERROR = "litellm.Timeout: APITimeoutError - Request timed out after 600.0 seconds (openai/gpt-4.1, agent)"
OUTCOMES = (("pass", 0.52), ("predicate", 0.36), ("max_turns", 0.05), ("stalled", 0.03), ("infra", 0.04))


def data_dir() -> Path:
    found = os.environ.get("TAU2_DATA_DIR") or str(ROOT.parent / "shared" / "tau2-data")
    path = Path(found)
    if not (path / "tau2" / "domains" / "telecom").is_dir():
        sys.exit(f"bench_report: no telecom data under {path} (set TAU2_DATA_DIR)")
    return path


def real_sample(work: Path, tasks: list[dict[str, Any]]) -> list[Path]:
    """A real offline sweep of every 57th telecom task; returns the scenario folders."""
    names = [f"tau2_telecom__{slug(t['id'])}" for t in tasks[::57]]
    results = work / "sample"
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True")
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--tau2-telecom-tasks",
        "full",
        f"--tau2-results-dir={results}",
        "--tau2-scenarios",
        ",".join(names),
    ]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    folders = sorted(p.parent for p in results.glob("*/metrics.json"))
    if done.returncode != 0 or not folders:
        sys.exit(f"bench_report: the sample sweep failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return folders


class Synth:
    """Model-run-shaped results of one telecom task, from a real sample folder of its issue family."""

    def __init__(self, rng: random.Random, vocabulary: list[str]) -> None:
        self.rng = rng
        self.words = vocabulary

    def prose(self, low: int, high: int) -> str:
        words = self.rng.choices(self.words, k=self.rng.randint(low, high) // 6)
        text = " ".join(words)
        return re.sub(r"(^|[.?!] )(\w)", lambda m: m.group(1) + m.group(2).upper(), text.capitalize()) + "."

    def transcript(self, real: dict[str, Any]) -> list[dict[str, Any]]:
        """The real messages, texts replaced by prose, with extra troubleshooting rounds."""
        messages = copy.deepcopy(real["messages"])
        user_calls = [m for m in messages if m["role"] == "user" and m.get("tool_calls")]
        results = {m["tool_call_id"]: m for m in messages if m["role"] == "tool"}
        extra: list[dict[str, Any]] = []
        for _ in range(self.rng.randint(4, 14)):
            extra.append({"role": "assistant", "content": self.prose(200, 600)})
            if user_calls and self.rng.random() < 0.6:
                call = copy.deepcopy(self.rng.choice(user_calls))
                extra.append(call)
                extra += [copy.deepcopy(results[c["id"]]) for c in call["tool_calls"] if c["id"] in results]
            extra.append({"role": "user", "content": self.prose(40, 250)})
        cut = max(2, len(messages) - 3)
        messages = messages[:cut] + extra + messages[cut:]
        for m in messages:
            if m["role"] in ("assistant", "user") and m.get("content") and m.get("generated", True):
                m["content"] = self.prose(200, 600) if m["role"] == "assistant" else self.prose(40, 250)
        for i, m in enumerate(messages):
            m["turn_idx"] = i
        return messages

    def metrics(self, real: dict[str, Any], task: dict[str, Any], name: str, messages: list[dict[str, Any]]) -> Any:
        m = copy.deepcopy(real)
        m.update(scenario=name, tau2_id=task["id"], description=(task.get("description") or {}).get("purpose") or "")
        m.update(
            agent="litellm:openai/gpt-4.1",
            user="litellm:openai/gpt-4.1",
            models={"agent": MODEL, "user": MODEL, "judge": None},
        )
        criteria = task.get("evaluation_criteria") or {}
        predicates = [
            {
                "func_name": a["func_name"],
                "side": a.get("env_type"),
                "passed": True,
                "expected": a.get("assert_value", True),
                "actual": a.get("assert_value", True),
                "message": a.get("message"),
                "error": None,
            }
            for a in criteria.get("env_assertions") or []
        ] or m["db_state_assertion_verdicts"]
        outcome = self.rng.choices([o for o, _ in OUTCOMES], [w for _, w in OUTCOMES])[0]
        failed: list[str] = []
        if outcome == "predicate" and predicates:
            bad = self.rng.randrange(len(predicates))
            predicates[bad].update(passed=False, actual=not predicates[bad]["expected"])
            failed.append("db_state_assertion_pass_rate")
        m["db_state_assertion_verdicts"] = predicates
        m["db_state_assertion_pass_rate"] = (
            sum(p["passed"] for p in predicates) / len(predicates) if predicates else None
        )
        m["checks"] = [c for c in m["checks"] if not c["id"].startswith("db_state_assertion")] + [
            {
                "id": f"db_state_assertion[{i}:{p['func_name']}]",
                "signal": "db_state_assertion",
                "passed": p["passed"],
                "message": "" if p["passed"] else f"{p['message']}: {p['func_name']} returned {p['actual']}",
            }
            for i, p in enumerate(predicates)
        ]
        m.update(stalled=outcome == "stalled", infrastructure_error=None, stop_reason="exit", clean_exit=True)
        if outcome == "max_turns":
            m.update(stop_reason="max_turns", clean_exit=False)
            failed.append("clean_exit")
        if outcome == "infra":
            m.update(
                stop_reason="error",
                clean_exit=False,
                infrastructure_error=INFRA_ERROR,
            )
        for check in m["checks"]:
            if check["id"] == "clean_exit":
                check.update(
                    passed=m["clean_exit"], message="" if m["clean_exit"] else f"stop_reason={m['stop_reason']}"
                )
        gating = [f for f in ("db_state_assertion_pass_rate", "clean_exit")]
        m["success_breakdown"].update(passed=[f for f in gating if f not in failed], failed=failed)
        m["is_successful"] = not failed and outcome not in ("stalled", "infra")
        agent_msgs = [x for x in messages if x["role"] == "assistant"]
        user_msgs = [x for x in messages if x["role"] == "user"]
        m["agent_turns"] = 1 if outcome == "stalled" else sum(1 for x in agent_msgs if x.get("content"))
        m["tool_errors"] = sum(1 for x in messages if x["role"] == "tool" and x.get("error"))
        m["token_usage"] = {
            "agent": self.usage(len(agent_msgs), 7000, 300),
            "user": self.usage(len(user_msgs), 1500, 250),
            "judge": self.usage(0, 0, 0),
        }
        calls = len(agent_msgs) + len(user_msgs)
        m["conversation_duration_s"] = round(sum(self.rng.lognormvariate(0.2, 0.6) for _ in range(calls)), 3)
        m["duration_s"] = round(m["conversation_duration_s"] + self.rng.uniform(0.03, 0.09), 3)
        return m

    def usage(self, calls: int, base: int, growth: int) -> dict[str, Any]:
        prompt = sum(base + growth * i + self.rng.randint(0, 200) for i in range(calls))
        completion = sum(self.rng.randint(60, 260) for _ in range(calls))
        return {
            "calls": calls,
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "cost_usd": round(prompt * PRICE_IN + completion * PRICE_OUT, 6),
        }


def synthesize(out: Path, samples: list[Path], tasks: list[dict[str, Any]], seed: int = 15) -> list[dict[str, Any]]:
    policy = (data_dir() / "tau2" / "domains" / "telecom" / "main_policy.md").read_text("utf-8")
    manual = (data_dir() / "tau2" / "domains" / "telecom" / "tech_support_manual.md").read_text("utf-8")
    vocabulary = sorted({w for w in re.findall(r"[A-Za-z][a-z']+", policy + manual) if len(w) > 1})
    synth = Synth(random.Random(seed), vocabulary)
    families: dict[str, list[Path]] = {}
    for folder in samples:
        families.setdefault(folder.name.split("__")[1].split("_issue")[0], []).append(folder)
    all_metrics = []
    for i, task in enumerate(tasks):
        name = f"tau2_telecom__{slug(task['id'])}"
        family = families.get(name.split("__")[1].split("_issue")[0]) or samples
        source = family[i % len(family)]
        real_metrics = json.loads((source / "metrics.json").read_text("utf-8"))
        real_transcript = json.loads((source / "transcript.json").read_text("utf-8"))
        messages = synth.transcript(real_transcript)
        metrics = synth.metrics(real_metrics, task, name, messages)
        folder = out / name
        (folder / "scenario_config").mkdir(parents=True)
        (folder / "metrics.json").write_text(json.dumps(metrics, indent=2), "utf-8")
        transcript = {
            "scenario": name,
            "messages": messages,
            "initialization": real_transcript.get("initialization", []),
        }
        (folder / "transcript.json").write_text(json.dumps(transcript, indent=2), "utf-8")
        metadata = json.loads((source / "scenario_config" / "metadata.json").read_text("utf-8"))
        metadata.update(
            scenario=name,
            description=metrics["description"],
            agent=metrics["agent"],
            user=metrics["user"],
            models=metrics["models"],
        )
        (folder / "scenario_config" / "metadata.json").write_text(json.dumps(metadata, indent=2), "utf-8")
        all_metrics.append(metrics)
    all_metrics.sort(key=lambda m: m["scenario"])
    (out / "all_metrics.json").write_text(json.dumps({"scenarios": all_metrics, "errors_without_result": []}), "utf-8")
    (out / "all_summary.txt").write_text(render_summary(all_metrics, []), "utf-8")
    return all_metrics


def chromium() -> str:
    found = os.environ.get("TAU2_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        sys.exit("bench_report: no Chromium (bash scripts/install-browser.sh, or set TAU2_CHROMIUM)")
    return found


def measure(report: Path, failing: str, runs: int) -> dict[str, list[float]]:
    """Per run (a fresh page): marks and navigation timings in ms since navigation start."""
    from playwright.sync_api import sync_playwright

    found: dict[str, list[float]] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        for _ in range(runs):
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            # A 10 ms timer from the first byte: a tick runs only when the main thread is free, so the
            # first tick after the table's mark is when the page can answer a click or a key.
            page.add_init_script("window.__ticks = []; setInterval(() => __ticks.push(performance.now()), 10);")
            start = time.perf_counter()
            page.goto(report.resolve().as_uri(), wait_until="commit")
            # the outside view (playwright's own polling), next to the page's marks below
            page.wait_for_function("window.tau2 !== undefined", polling=20, timeout=60_000)
            wall = (time.perf_counter() - start) * 1000
            page.wait_for_load_state("load")
            timings = page.evaluate("""() => {
                const mark = (n) => performance.getEntriesByName(n)[0]?.startTime ?? null;
                const nav = performance.getEntriesByType("navigation")[0];
                const table = mark("tau2-table");
                return {overview: mark("tau2-overview"), table,
                        usable: window.__ticks.find((t) => t >= table) ?? null,
                        longest_block: Math.max(...window.__ticks.slice(1).map((t, i) => t - window.__ticks[i])),
                        dom_content_loaded: nav.domContentLoadedEventEnd, load: nav.loadEventEnd};
            }""")
            timings["wall_until_usable"] = wall
            # in the page, from the call to the rendered evidence: the chunk's first inflate included
            timings["panel_open"] = page.evaluate(
                """(key) => new Promise((resolve) => {
                    const t0 = performance.now(), body = document.getElementById("panel-body");
                    const seen = new MutationObserver(() => {
                        if (body.querySelector("#checks")) { seen.disconnect(); resolve(performance.now() - t0); }
                    });
                    seen.observe(body, {childList: true, subtree: true});
                    window.tau2.open(key);
                })""",
                failing,
            )
            page.keyboard.press("Escape")
            timings["search"] = page.evaluate("""() => {
                const box = document.getElementById("f-search"), t = performance.now();
                box.value = "roaming"; box.dispatchEvent(new Event("input"));
                return performance.now() - t; }""")
            for key, value in timings.items():
                found.setdefault(key, []).append(float(value))
            page.close()
        browser.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="page loads to measure (medians reported)")
    parser.add_argument("--keep", type=Path, help="write the synthetic folder here and keep it")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "report")
    args = parser.parse_args()
    tasks = json.loads((data_dir() / "tau2" / "domains" / "telecom" / "tasks.json").read_text("utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        samples = real_sample(work, tasks)
        folder = args.keep or work / "telecom-2285"
        if folder.exists():
            shutil.rmtree(folder)
        t0 = time.perf_counter()
        metrics = synthesize(folder, samples, tasks)
        synth_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        report = write_report([folder], folder / "report.html")
        build_s = time.perf_counter() - t0
        raw_mb = sum(p.stat().st_size for p in folder.rglob("*.json")) / 1e6
        size_mb = report.stat().st_size / 1e6
        failing = next(m["scenario"] for m in metrics if m["is_successful"] is False and not m["infrastructure_error"])
        timings = measure(report, failing, args.runs)
    medians = {key: round(statistics.median(values), 1) for key, values in timings.items()}
    outcomes = {o: sum(1 for m in metrics if _outcome(m) == o) for o in ("passed", "failed", "error")}
    result = {
        "scenarios": len(metrics),
        "outcomes": outcomes,
        "sample_folders": len(samples),
        "results_json_mb": round(raw_mb, 1),
        "report_mb": round(size_mb, 2),
        "build_s": round(build_s, 2),
        "synthesize_s": round(synth_s, 1),
        "runs": args.runs,
        "median_ms": medians,
        "all_ms": {k: [round(v, 1) for v in vs] for k, vs in timings.items()},
        "targets": {"report_mb": TARGET_MB, "usable_ms": TARGET_USABLE_MS},
        "met": {"size": size_mb < TARGET_MB, "usable": medians["usable"] < TARGET_USABLE_MS},
        "machine": f"{os.cpu_count()} CPUs, Python {platform.python_version()}",
        "load_average_1min": round(os.getloadavg()[0], 1),
        "chromium": chromium(),
        "date": time.strftime("%Y-%m-%d %H:%M"),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n", "utf-8")
    args.out.with_suffix(".md").write_text(_markdown(result), "utf-8")
    print(_markdown(result))


def _outcome(m: dict[str, Any]) -> str:
    return "error" if m["infrastructure_error"] else "passed" if m["is_successful"] is True else "failed"


def _markdown(r: dict[str, Any]) -> str:
    ms = r["median_ms"]
    rows = [
        ("report.html size", f"{r['report_mb']} MB", f"< {r['targets']['report_mb']:.0f} MB", r["met"]["size"]),
        ("overview painted (`tau2-overview` mark)", f"{ms['overview']:.0f} ms", "", None),
        (
            "page usable: first moment the main thread is free after the table's mark",
            f"{ms['usable']:.0f} ms",
            f"< {r['targets']['usable_ms']:.0f} ms",
            r["met"]["usable"],
        ),
        ("table rendered, filters wired (`tau2-table` mark)", f"{ms['table']:.0f} ms", "", None),
        (
            "longest main-thread block while loading (gap between 10 ms timer ticks)",
            f"{ms['longest_block']:.0f} ms",
            "",
            None,
        ),
        ("DOMContentLoaded (every detail element parsed)", f"{ms['dom_content_loaded']:.0f} ms", "", None),
        (
            "wall time from navigation until playwright sees the page's API",
            f"{ms['wall_until_usable']:.0f} ms",
            "",
            None,
        ),
        ("open a failing scenario's panel (inflate + render)", f"{ms['panel_open']:.0f} ms", "", None),
        ("search filter over every row", f"{ms['search']:.1f} ms", "", None),
    ]
    lines = [
        "# HTML report at telecom scale",
        "",
        f"`python bench/bench_report.py --runs {r['runs']}` on {r['machine']}, {r['date']}; headless "
        f"{r['chromium']}, load average {r['load_average_1min']} at the end (other work shared the 2 cores). "
        f"Times are medians of {r['runs']} fresh page loads, in ms since navigation start.",
        "",
        f"Input: a synthetic results folder of all {r['scenarios']} telecom tasks shaped like a gpt-4.1 run "
        f"({r['outcomes']['passed']} passed, {r['outcomes']['failed']} failed, {r['outcomes']['error']} "
        f"infrastructure errors), built from a real offline sweep of {r['sample_folders']} of them "
        f"(bench/bench_report.py says how); its JSON files total {r['results_json_mb']} MB. "
        f"`write_report` took {r['build_s']} s.",
        "",
        "| what | measured | target | met |",
        "|---|---:|---:|---|",
        *[
            f"| {what} | {value} | {target} | {'' if met is None else 'yes' if met else 'NO'} |"
            for what, value, target, met in rows
        ],
        "",
        "Every run: " + "; ".join(f"{k} {v}" for k, v in r["all_ms"].items()) + ".",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
