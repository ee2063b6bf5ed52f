"""``python -m pytest_tau2.bot``: run the reference agent bot.

Examples::

    python -m pytest_tau2.bot --oracle                       # gold replay, ws://127.0.0.1:8765
    python -m pytest_tau2.bot --oracle --voice               # the same over audio (docs/voice.md)
    python -m pytest_tau2.bot --port 9000 --model openai/gpt-4.1 --model-args '{"temperature": 0}'

Scenarios come from the registry: ``scenarios`` (the package of the current directory, when
importable), every ``--import MODULE``, and the tau2 sources.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from pytest_tau2.bot.agents import AgentUnavailable, litellm_factory, oracle_factory
from pytest_tau2.bot.server import (
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_SESSION_BYTES,
    DEFAULT_MAX_SIZE,
    DEFAULT_MAX_TURNS,
    DEFAULT_SEND_TIMEOUT,
    BotServer,
)
from pytest_tau2.bot.session import BotConfig
from pytest_tau2.bot.voice import VoiceEngines
from pytest_tau2.settings import Settings

log = logging.getLogger("pytest_tau2.bot")


def build_parser(prog: str = "python -m pytest_tau2.bot") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback only)")
    parser.add_argument("--port", type=int, default=8765, help="port (0: any free port; default 8765)")
    agent = parser.add_mutually_exclusive_group()
    agent.add_argument("--oracle", action="store_true", help="serve the oracle agent (the default)")
    agent.add_argument("--model", help="serve a litellm agent with this model, e.g. openai/gpt-4.1")
    parser.add_argument("--model-args", help="JSON object of litellm arguments for --model")
    parser.add_argument(
        "--voice",
        action="store_true",
        help="speak audio: recognize the caller (pocketsphinx), answer, synthesize the reply (espeak-ng); "
        "Twilio Media Streams events on the same connection (docs/voice.md)",
    )
    parser.add_argument("--oracle-min-turns", type=int, default=3, help="replies the oracle gives before it exits")
    parser.add_argument(
        "--data-root", default="data", help="folder db_path values of in-repo domains resolve against (default: ./data)"
    )
    parser.add_argument(
        "--tau2-data-dir",
        default=None,
        help="folder holding tau2/domains/... (default: $TAU2_DATA_DIR, then the fetch cache)",
    )
    parser.add_argument("--allow-unpinned-data", action="store_true", help="accept tau2 data off the pinned manifest")
    parser.add_argument(
        "--import",
        dest="imports",
        action="append",
        default=[],
        metavar="MODULE",
        help="import this module to register scenarios (repeatable)",
    )
    parser.add_argument("--max-size", type=int, default=DEFAULT_MAX_SIZE, help="largest frame accepted, in bytes")
    parser.add_argument(
        "--idle-timeout",
        type=float,
        default=DEFAULT_IDLE_TIMEOUT,
        help="seconds without a frame before a session is closed",
    )
    parser.add_argument(
        "--max-session-bytes",
        type=int,
        default=DEFAULT_MAX_SESSION_BYTES,
        help="bytes one session may receive from its runner in all (default 16 MiB)",
    )
    parser.add_argument(
        "--max-turns", type=int, default=DEFAULT_MAX_TURNS, help="user_message frames per session (default 1000)"
    )
    parser.add_argument(
        "--max-connections",
        type=int,
        default=DEFAULT_MAX_CONNECTIONS,
        help="connections open at once; more are refused with HTTP 503 (default 1024)",
    )
    parser.add_argument(
        "--send-timeout",
        type=float,
        default=DEFAULT_SEND_TIMEOUT,
        help="seconds a frame may take to be sent before a runner that stopped reading is dropped (default 60)",
    )
    parser.add_argument(
        "--max-steps-per-turn", type=int, default=30, help="agent steps per user message before the bot passes the turn"
    )
    parser.add_argument("--log-level", default="INFO", help="logging level (default INFO)")
    return parser


def import_scenarios(modules: Sequence[str]) -> None:
    """Register scenarios: ``scenarios`` from the working directory if present, then ``modules``."""
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        importlib.import_module("scenarios")
    except ModuleNotFoundError as exc:
        if exc.name != "scenarios":  # the package exists but one of its imports is missing: say so
            raise
    importlib.import_module("pytest_tau2.domains.tau2_sources")
    for module in modules:
        importlib.import_module(module)


def main(argv: Sequence[str] | None = None, prog: str = "python -m pytest_tau2.bot") -> int:
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    level = logging.getLevelName(args.log_level.upper())
    logging.basicConfig(level=level, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    # One line per session is ours; websockets' own open/close lines only when debugging.
    logging.getLogger("websockets").setLevel(max(level, logging.WARNING) if isinstance(level, int) else logging.WARNING)
    try:
        factory = litellm_factory(args.model, args.model_args) if args.model else oracle_factory(args.oracle_min_turns)
    except AgentUnavailable as exc:
        parser.error(str(exc))
    try:
        import_scenarios(args.imports)
    except ImportError as exc:
        parser.error(f"cannot import scenarios: {exc}")
    settings = Settings(
        data_dir=args.tau2_data_dir or os.environ.get("TAU2_DATA_DIR"),
        eval_data_root=str(Path(args.data_root).resolve()),
        allow_unpinned_data=args.allow_unpinned_data,
    )
    voice = None
    if args.voice:
        problem = VoiceEngines.missing()
        if problem:
            parser.error(f"--voice: {problem}")
        voice = VoiceEngines.offline()
    config = BotConfig(settings, factory, max_steps_per_turn=args.max_steps_per_turn, voice=voice)
    server = BotServer(
        config,
        args.host,
        args.port,
        max_size=args.max_size,
        idle_timeout=args.idle_timeout,
        max_session_bytes=args.max_session_bytes,
        max_turns=args.max_turns,
        max_connections=args.max_connections,
        send_timeout=args.send_timeout,
    )
    try:
        asyncio.run(server.serve_forever())
    except KeyboardInterrupt:
        log.info("stopped")
    except OSError as exc:  # port in use, address not available
        print(f"cannot serve on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
