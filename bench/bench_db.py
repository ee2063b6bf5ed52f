"""Per-scenario DB costs: parse once, fresh working copy, hash, diff (retail, airline, telecom).

Compares the copy-on-write working DB (``fresh_db``) with a full deep copy, and the cached
canonical hash with a plain ``json.dumps`` hash, in one process, medians of ``--repeats``.

Usage:  python bench/bench_db.py [--repeats 15]
Needs TAU2_DATA_DIR (defaults to ../shared/tau2-data when it exists).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_tau2.environment import canonical
from pytest_tau2.environment.db import copy_db, db_diff, db_hash, fresh_db

ROOT = Path(__file__).resolve().parents[1]


def median_ms(fn: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 2)


def domains(data: Path) -> dict[str, tuple[Callable[[Path], Any], Path, Callable[[Any], None]]]:
    from pytest_tau2.domains.tau2_airline.db import read_db as airline
    from pytest_tau2.domains.tau2_retail.db import read_db as retail
    from pytest_tau2.domains.tau2_telecom.db import read_db as telecom

    def touch_retail(db: Any) -> None:  # what one exchange does: one order's status
        order = db["orders"]["#W2378156"]
        order["status"] = "exchange requested"

    def touch_airline(db: Any) -> None:
        db["reservations"]["EHGLP3"]["status"] = "cancelled"

    def touch_telecom(db: Any) -> None:
        db["lines"][0]["roaming_enabled"] = not db["lines"][0]["roaming_enabled"]

    base = data / "tau2" / "domains"
    return {
        "retail": (retail, base / "retail" / "db.json", touch_retail),
        "airline": (airline, base / "airline" / "db.json", touch_airline),
        "telecom": (telecom, base / "telecom" / "db.toml", touch_telecom),
    }


def measure(
    name: str, reader: Callable[[Path], Any], path: Path, touch: Callable[[Any], None], repeats: int
) -> dict[str, Any]:
    pristine = reader(path)

    def plain_hash(db: Any = pristine) -> str:
        return hashlib.sha256(json.dumps(db, sort_keys=True, default=str).encode()).hexdigest()

    def fresh_touch_hash(remembered: bool = False) -> str:
        if not remembered:
            canonical._DIGESTS.clear()  # hash the change set, as a scenario's gold replay does
        db = fresh_db(pristine)
        touch(db)
        return db_hash(db)

    def deep_touch_hash() -> str:
        db = copy_db(pristine)
        touch(db)
        return plain_hash(db)

    fresh_touch_hash()  # warm the entity text cache, as the first scenario of a process does
    changed = fresh_db(pristine)
    touch(changed)
    return {
        "domain": name,
        "file_mb": round(path.stat().st_size / 1e6, 2),
        "parse_ms": median_ms(lambda: reader(path), max(3, repeats // 3)),
        "deep_copy_ms": median_ms(lambda: copy_db(pristine), repeats),
        "fresh_db_ms": median_ms(lambda: fresh_db(pristine), repeats),
        "plain_hash_ms": median_ms(plain_hash, repeats),
        "copy_touch_hash_deep_ms": median_ms(deep_touch_hash, repeats),
        "copy_touch_hash_fresh_ms": median_ms(fresh_touch_hash, repeats),
        "copy_touch_hash_remembered_ms": median_ms(lambda: fresh_touch_hash(remembered=True), repeats),
        "diff_ms": median_ms(lambda: db_diff(pristine, changed), max(3, repeats // 3)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "db"))
    args = parser.parse_args()
    data = Path(os.environ.get("TAU2_DATA_DIR") or ROOT.parent / "shared" / "tau2-data")
    rows = [measure(name, reader, path, touch, args.repeats) for name, (reader, path, touch) in domains(data).items()]
    meta = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "command": f"python bench/bench_db.py --repeats {args.repeats}",
    }
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")
    cols = list(rows[0])
    lines = [
        "# DB costs per scenario",
        "",
        f"`{meta['command']}` on {meta['cpus']} CPUs, Python {meta['python']}, {meta['date']}. Medians, ms.",
        "`copy_touch_hash`: make a working copy, change one entity, hash it; deep = `copy_db` + plain",
        "`json.dumps` hash (what a straightforward implementation does), fresh = copy-on-write `fresh_db`",
        "+ cached canonical text, sha256 resumed from a saved state before the first change (what the",
        "runner does; `remembered`: a change set already hashed, e.g. an agent that made the gold",
        "replay's changes). The first scenario of a process warms the caches.",
        "",
        "| " + " | ".join(cols) + " |",
        "|" + "---|" * len(cols),
    ]
    lines += ["| " + " | ".join(str(row[c]) for c in cols) + " |" for row in rows]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
