"""Where the CPU of an LLM-bound sweep goes: one bench_llm_speed.py configuration under py-spy.

Runs the 114 retail scenarios against the scripted loopback model (bench_llm_speed.py's set-up,
the server in this process, so its CPU is not sampled) with the pytest process wrapped in
``py-spy record --format raw`` (samples of threads that hold the CPU, whole process: start-up,
collection, the conversations, the end-of-run views, interpreter exit), then folds the samples:

- **phases**: start-up imports, collection, the conversations (event loop), reporting on pytest's
  thread, the end of the run (our session finish: all_metrics, summary, report.html), exit;
- **by package** of the innermost frame (self time), and **inclusive** per pytest_tau2 module;
- **imports**: the time inside the import system, by top-level package imported.

Every figure is also given in ms per model call (samples / rate / calls).

Usage:
    python bench/profile_sweep.py --config c32 --out bench/results/profile_c32.md
    python bench/profile_sweep.py --config cU --rate 250 --no-write
"""

from __future__ import annotations

import argparse
import collections
import datetime as _dt
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_llm_speed as speed

MARKER = "<!-- notes: hand-written below this line, kept when the script rewrites the tables -->"
FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")


def parse(line: str) -> tuple[list[tuple[str, str]], int]:
    stack, _, count = line.rpartition(" ")
    frames = []
    for raw in stack.split(";"):
        m = FRAME.match(raw)
        frames.append((m.group("func"), m.group("file")) if m else (raw, ""))
    return frames, int(count)


def package_of(file: str) -> str:
    """``pytest_tau2.llm.openai_wire``, ``aiohttp``, ``asyncio``, ``<import system>`` ..."""
    if "importlib._bootstrap" in file:
        return "<import system>"
    path = "/" + file.replace("\\", "/")
    if "/pytest_tau2/" in path:
        tail = path.split("/pytest_tau2/", 1)[1].removesuffix(".py").replace("/", ".")
        return "pytest_tau2." + tail.removesuffix(".__init__")
    for marker in ("/site-packages/", "/lib/python3.11/", "/lib/python3.12/"):
        if marker in path:
            path = "/" + path.split(marker, 1)[1]
    if path.startswith("/<frozen "):
        return path[len("/<frozen ") :].rstrip(">").split(".")[0]
    head = path.strip("/").split("/", 1)[0].removesuffix(".py")
    return head or "<native>"


def phase_of(frames: list[tuple[str, str]]) -> str:
    files = [f for _, f in frames]
    funcs = [fn.rsplit(".", 1)[-1] for fn, _ in frames]  # py-spy names methods Class.method
    if any("importlib._bootstrap" in f for f in files):
        return "imports"
    if "pytest_sessionfinish" in funcs or "pytest_terminal_summary" in funcs or "pytest_unconfigure" in funcs:
        return "end of run (session finish, summary, terminal summary, unconfigure)"
    if any(fn in ("_run_once", "run_forever") for fn in funcs) or any("asyncio/" in f for f in files):
        return "event loop thread (conversations, client, tools, scoring)"
    if "pytest_collection" in funcs or "perform_collect" in funcs:
        return "collection"
    if "pytest_runtestloop" in funcs or "runtestprotocol" in funcs:
        return "pytest's thread: running/reporting items"
    if "_main" in funcs or ("main" in funcs and any("_pytest" in f for f in files)):
        return "pytest start-up / other"
    return "other (interpreter start/exit, gc, threads)"


def fold(raw: Path, cpu_s: float, calls: int) -> dict[str, Any]:
    """Samples folded; each bucket's share of the samples times the process CPU (rusage) in ms."""
    total = 0
    phases: collections.Counter[str] = collections.Counter()
    self_pkg: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    imports: collections.Counter[str] = collections.Counter()
    functions: collections.Counter[str] = collections.Counter()
    for line in raw.read_text("utf-8").splitlines():
        if not line.strip():
            continue
        frames, count = parse(line)
        frames = [f for f in frames if not f[0].startswith("process ")] or [("<native>", "")]
        total += count
        phases[phase_of(frames)] += count
        leaf = frames[-1]
        self_pkg[package_of(leaf[1])] += count
        functions[f"{package_of(leaf[1])}:{leaf[0]}"] += count
        for module in {package_of(f) for _, f in frames if "pytest_tau2/" in f}:
            inclusive[module] += count
        # the outermost import in the stack: which top-level package was being imported
        for func, file in frames:
            if func == "_find_and_load" and "importlib" in file:
                break
        else:
            continue
        # the first frame of the imported module itself: a '<module>' frame after the import system
        names = [package_of(f) for fn, f in frames if fn == "<module>" and "importlib" not in f]
        imported = next((n for n in names[1:]), names[0] if names else "?")
        imports[imported if imported.startswith("pytest_tau2") else imported.split(".")[0]] += count

    scale = cpu_s * 1000 / max(total, 1)

    def ms(counter: collections.Counter[str], top: int) -> list[tuple[str, float, float]]:
        return [(k, round(v * scale, 1), round(v * scale / calls, 3)) for k, v in counter.most_common(top)]

    return {
        "samples": total,
        "phases": ms(phases, 20),
        "self_by_package": ms(self_pkg, 30),
        "inclusive_pytest_tau2": ms(inclusive, 30),
        "imports": ms(imports, 20),
        "functions": ms(functions, 40),
    }


def table(rows: list[tuple[str, float, float]], head: str) -> list[str]:
    out = [f"| {head} | CPU ms (whole run, share of samples x rusage CPU) | ms per model call |", "|---|---:|---:|"]
    out += [f"| `{k}` | {a} | {b} |" for k, a, b in rows]
    return [*out, ""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="c32", choices=sorted(speed.CONFIGS))
    parser.add_argument("--rate", type=int, default=250, help="py-spy samples per second")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--out", type=Path, default=None, help="markdown to write (default: print only)")
    parser.add_argument("--raw", type=Path, default=None, help="keep py-spy's folded stacks here (~6 MB)")
    opts = parser.parse_args()
    pyspy = shutil.which("py-spy")
    if pyspy is None:
        sys.exit("py-spy is not installed: pip install py-spy")
    ids = sorted(speed.Tasks.load("retail").by_id, key=int)
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "profile.txt"
        speed.WRAP = [pyspy, "record", "--format", "raw", "-r", str(opts.rate), "-o", str(raw), "--subprocesses",
                      "--nonblocking", "--"]  # fmt: skip
        row = speed.run_once(opts.config, opts.latency, ids, {"collect_cpu_s": 0.0, "litellm_import_cpu_s": 0.0},
                             900)  # fmt: skip
        folded = fold(raw, row["cpu_s_total"], row["llm_calls"])
        if opts.raw is not None:
            shutil.copy(raw, opts.raw)
    cpu = row["cpu_s_total"]
    summary = {
        "command": "python bench/profile_sweep.py " + " ".join(sys.argv[1:]),
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "loadavg": ", ".join(f"{x:.2f}" for x in os.getloadavg()),
        "config": row["label"],
        "passed": f"{row['passed']}/{row['scenarios']}",
        "calls": row["llm_calls"],
        "wall_s (under the profiler)": row["wall_s"],
        "cpu_s (rusage, all pytest processes)": cpu,
        "cpu_ms_per_call (rusage, nothing subtracted)": round(cpu * 1000 / row["llm_calls"], 2),
        "peak_rss_mb": row["peak_rss_mb_max"],
        "samples": folded["samples"],
    }
    print(json.dumps(summary, indent=1))
    lines = [f"# Profile: {row['label']}, 114 retail scenarios, wire path", "", "```", json.dumps(summary, indent=1),
             "```", ""]  # fmt: skip
    lines += ["## Phases (outermost match)", "", *table(folded["phases"], "phase")]
    lines += ["## Self time by package of the innermost frame", "", *table(folded["self_by_package"], "package")]
    lines += ["## Inclusive time per pytest_tau2 module", "", *table(folded["inclusive_pytest_tau2"], "module")]
    lines += ["## Import time by module imported", "", *table(folded["imports"], "module")]
    lines += ["## Hottest functions (self)", "", *table(folded["functions"], "function")]
    lines += ["", MARKER, ""]
    text = "\n".join(lines)
    if opts.out is not None:
        old = opts.out.read_text("utf-8") if opts.out.exists() else ""
        notes = old.split(MARKER, 1)[1].lstrip("\n") if MARKER in old else ""
        opts.out.write_text(text + notes, "utf-8")
    else:
        print(text)


if __name__ == "__main__":
    main()
