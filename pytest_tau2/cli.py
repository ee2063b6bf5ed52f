"""The ``pytest-tau2`` command: ``pytest-tau2 data fetch|verify|view``, ``pytest-tau2 bot ...``, ``pytest-tau2 report``,
``pytest-tau2 list``, ``pytest-tau2 merge``, ``pytest-tau2 compare``, ``pytest-tau2 rescore``,
``pytest-tau2 estimate``, ``pytest-tau2 mcp-bridge``, ``pytest-tau2 export``."""

from __future__ import annotations

import sys
from collections.abc import Sequence

USAGE = """usage: pytest-tau2 data {fetch,verify,view} [...]   download or check the pinned tau2 data; derive the view
       pytest-tau2 bot [...]                    run the reference WebSocket agent bot
       pytest-tau2 report DIR [DIR ...] [-o FILE]   HTML report of saved results (several: a comparison)
       pytest-tau2 list [--domain D] [--rootdir DIR]   the scenarios pytest collects, by domain
       pytest-tau2 merge DIR [DIR ...] --into DIR   one results folder from a sharded run's folders
       pytest-tau2 compare A B [--json FILE] [--intersect] [--power P --delta D]   is B better than A?
       pytest-tau2 rescore DIR --into NEW [--tau2-judge-model M ...] [--tau2-verdict V]   score saved runs again
       pytest-tau2 review DIR --tau2-review-model M [--all]   a model reviews agent and user-simulator errors
       pytest-tau2 estimate [pytest args]       calls, tokens and cost of the selected sweep; runs nothing
       pytest-tau2 mcp-bridge [URL]             stdio MCP server forwarding to a scenario's endpoint (docs/mcp.md)
       pytest-tau2 export DIR --format tau2 --into OUT [--partial]   tau2-bench Results files + draft submission.json
Evaluations themselves run through pytest, e.g.: pytest -k tau2_retail"""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    command = args[0] if args else None
    if command == "data" and args[1:2] == ["view"]:
        from pytest_tau2.domains.tau2_common.view_derive import main as view_main

        return view_main(args[2:])
    if command == "data":
        from pytest_tau2.data.__main__ import main as data_main

        return data_main(args[1:], prog="pytest-tau2 data")
    if command == "bot":
        from pytest_tau2.bot.__main__ import main as bot_main

        return int(bot_main(args[1:], prog="pytest-tau2 bot") or 0)
    if command == "report":
        from pytest_tau2.report.html.cli import main as report_main

        return report_main(args[1:], prog="pytest-tau2 report")
    if command == "list":
        from pytest_tau2.plugin.listing import main as list_main

        return list_main(args[1:], prog="pytest-tau2 list")
    if command == "merge":
        from pytest_tau2.report.merge import main as merge_main

        return merge_main(args[1:], prog="pytest-tau2 merge")
    if command == "compare":
        from pytest_tau2.report.compare_cli import main as compare_main

        return compare_main(args[1:], prog="pytest-tau2 compare")
    if command == "rescore":
        from pytest_tau2.run.rescore import main as rescore_main

        return rescore_main(args[1:], prog="pytest-tau2 rescore")
    if command == "review":
        from pytest_tau2.run.review import main as review_main

        return review_main(args[1:], prog="pytest-tau2 review")
    if command == "estimate":
        from pytest_tau2.plugin.estimating import main as estimate_main

        return estimate_main(args[1:])
    if command == "mcp-bridge":
        from pytest_tau2.mcp.bridge import main as bridge_main

        return bridge_main(args[1:], prog="pytest-tau2 mcp-bridge")
    if command == "export":
        from pytest_tau2.tau2_format.export_cli import main as export_main

        return export_main(args[1:], prog="pytest-tau2 export")
    if command in ("-h", "--help"):
        print(USAGE)
        return 0
    if command is not None:
        print(f"pytest-tau2: unknown command {command!r}", file=sys.stderr)
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
