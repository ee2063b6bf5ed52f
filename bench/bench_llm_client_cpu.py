"""CPU per model call in pytest-tau2's LLM client alone (no harness): the OpenAI wire path and
the litellm path side by side, optionally beside another checkout.

A loopback fake OpenAI server (tests/support/fake_openai.py) runs in a child process, so only the
client's CPU is counted (``time.process_time`` of the measuring process). Each measurement is a
fresh interpreter per (tree, transport): ``calls`` sequential ``acomplete`` calls with a 12-message
prompt and 15 tools, for a priced model (gpt-4o-mini: litellm prices the call) and an unpriced
one; it also reports the process's peak RSS and whether litellm was imported. Configurations
alternate, ``--repeats`` times; the medians are printed as JSON.

Usage:
    python bench/bench_llm_client_cpu.py [--transports auto,litellm] [--baseline DIR] [--calls 300] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SERVER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from tests.support.fake_openai import FakeOpenAIServer, text
server = FakeOpenAIServer().start()
for model in ("gpt-4o-mini", "unpriced-model"):
    server.add_handler(model, text("Sure, I can help with that order. " * 5))
print(server.base_url, flush=True)
while True:
    time.sleep(60)
"""

CLIENT = """
import asyncio, json, os, sys, time
sys.path.insert(0, sys.argv[1])
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
from pytest_tau2.llm import ModelConfig, RetryPolicy, aclose, acomplete, preload  # also in a --baseline tree
base, calls, transport = sys.argv[2], int(sys.argv[3]), sys.argv[4]
if transport != "auto":
    preload()  # the litellm path imports it before the first call (the plugin does at session start)
messages = [{"role": "system", "content": "You are an agent. " * 50}] + [
    {"role": "user" if i % 2 else "assistant", "content": f"turn {i} " * 20} for i in range(11)
]
tools = [{"type": "function", "function": {"name": f"tool_{i}", "description": "d" * 100, "parameters": {
    "type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}}} for i in range(15)]
async def run(model):
    config = ModelConfig(f"openai/{model}", {"api_base": base, "api_key": "sk-fake"})
    policy = RetryPolicy(max_retries=0)
    for _ in range(5):
        await acomplete(config, messages, tools=tools, retry=policy)
    start = time.process_time()
    for _ in range(calls):
        done = await acomplete(config, messages, tools=tools, retry=policy)
    cpu = time.process_time() - start
    await aclose()
    return cpu / calls * 1000, done.cost
out = {}
for model in ("gpt-4o-mini", "unpriced-model"):
    ms, cost = asyncio.run(run(model))
    out[model] = {"cpu_ms_per_call": round(ms, 2), "cost": cost}
import resource
out["process"] = {"peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "litellm_imported": "litellm" in sys.modules}
print(json.dumps(out))
"""


def measure(tree: Path, base_url: str, calls: int, transport: str) -> dict[str, dict[str, float]]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "TAU2_LLM_TRANSPORT": transport}
    done = subprocess.run(
        [sys.executable, "-c", CLIENT, str(tree), base_url, str(calls), transport],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
        check=True,
    )
    result: dict[str, dict[str, float]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", type=Path, help="another checkout, measured with its litellm client")
    parser.add_argument("--transports", default="auto,litellm", help="transports of this checkout")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    opts = parser.parse_args()
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(ROOT)], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        configs = {f"ours/{t}": (ROOT, t) for t in opts.transports.split(",")}
        if opts.baseline is not None:
            configs["baseline"] = (opts.baseline.resolve(), "litellm")
        rows: dict[str, list[dict[str, dict[str, float]]]] = {name: [] for name in configs}
        for _ in range(opts.repeats):
            for name, (tree, transport) in configs.items():
                rows[name].append(measure(tree, base_url, opts.calls, transport))
                print(name, rows[name][-1], flush=True)
    finally:
        server.kill()
        server.wait()
    models = ("gpt-4o-mini", "unpriced-model")
    medians = {
        name: {model: statistics.median(r[model]["cpu_ms_per_call"] for r in runs) for model in models}
        for name, runs in rows.items()
    }
    costs = {name: {model: runs[0][model]["cost"] for model in models} for name, runs in rows.items()}
    process = {
        name: {
            "peak_rss_mb": round(statistics.median(r["process"]["peak_rss_mb"] for r in runs), 1),
            "litellm_imported": runs[0]["process"]["litellm_imported"],
        }
        for name, runs in rows.items()
        if "process" in runs[0]
    }
    summary = {"median_cpu_ms_per_call": medians, "cost": costs, "process": process}
    print(json.dumps({**summary, "calls": opts.calls, "repeats": opts.repeats}))


if __name__ == "__main__":
    main()
