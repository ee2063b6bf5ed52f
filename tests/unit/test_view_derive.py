"""``pytest-tau2 data view``: the tau2 view derived from upstream's source by reading it (ast).

The mechanism is tested on a small upstream-shaped tree this file writes itself (its texts are
made up here); where a copy of upstream's repository at the pin is at hand, the view derived from
it equals the shared one (``../tau2-view/agent_view.json``) key for key.
"""

from __future__ import annotations

import json
import os
import subprocess
import tarfile
import textwrap
from pathlib import Path

import pytest

from pytest_tau2.cli import main as cli_main
from pytest_tau2.data.manifest import PIN_COMMIT
from pytest_tau2.domains.tau2_common import upstream_view, view_derive
from pytest_tau2.errors import DataError

DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR") or "/work/shared/tau2-data")
SHARED_VIEW = DATA_DIR.resolve().parent / "tau2-view" / "agent_view.json"

MODELS = '''
from enum import Enum
from typing import Literal, Optional
from pydantic import BaseModel, ConfigDict, Field

Size = Literal["small", "large"]


class Colour(str, Enum):
    RED = "red"
    BLUE = "blue"


class Box(BaseModel):
    """A box to ship."""

    model_config = ConfigDict(extra="forbid")
    label: str = Field(description="What is written on it")
    colour: Colour = Field(Colour.RED, description="Its colour")
    weight: Optional[int] = Field(None, description="Grams")
'''

TOOLS = '''
from typing import List
from tau2.domains.shop.data_model import Box, Size
from tau2.environment.toolkit import ToolKitBase, ToolType, is_discoverable_tool, is_tool


class BaseShopTools(ToolKitBase):
    @is_tool(ToolType.READ)
    def zeta(self, query: str) -> str:
        """Look something up.

        Args:
            query: What to look for.
        """

    def helper(self) -> None:
        """Not a tool."""


class ShopTools(BaseShopTools):
    @is_tool(ToolType.WRITE)
    def ship(self, boxes: List[Box], size: Size, note: str = None, express: bool = False) -> str:
        """Ship some boxes.

        Each box goes out the same day.

        Args:
            boxes: The boxes.
            size: How big the parcel is.
            note: A note for the courier.
            express: Whether to hurry.

        Returns:
            The tracking number.
        """

    @is_discoverable_tool(ToolType.WRITE)
    def refund_0001(self, order_id: str, amount: float) -> str:
        """Give money back for an order.

        Args:
            order_id (string): The order.
            amount (number, optional): How much.

        Returns:
            Refund issued.
            More text.
        """
'''


def _tree(root: Path) -> Path:
    files = {
        "agent/llm_agent.py": 'AGENT_INSTRUCTION = """\nBe kind.\n""".strip()\n\n'
        'SYSTEM_PROMPT = "<i>{agent_instruction}</i>" + "{domain_policy}"\n',
        "user/user_simulator.py": 'SYSTEM_PROMPT = """\n{global_user_sim_guidelines_with_persona}\n--\n'
        '{instructions}\n""".strip()\n',
        "domains/shop/data_model.py": MODELS,
        "domains/shop/tools.py": TOOLS,
    }  # fmt: skip
    for name, text in files.items():
        path = root / "src" / "tau2" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), "utf-8")
    return root


def test_constants_toolkits_and_schemas_are_read_from_the_tree(tmp_path: Path) -> None:
    source = view_derive.Source(_tree(tmp_path))
    assert source.string("agent/llm_agent.py", "AGENT_INSTRUCTION") == "Be kind."
    assert source.string("agent/llm_agent.py", "SYSTEM_PROMPT") == "<i>{agent_instruction}</i>{domain_policy}"
    assert source.string("user/user_simulator.py", "SYSTEM_PROMPT").startswith("{global_user_sim_guidelines")
    methods = source.toolkit_methods(("domains/shop/tools.py", "ShopTools"))
    assert [m.name for _, m in methods] == ["ship", "zeta"]  # own methods first, then the base's; no helper
    ship = view_derive.tool_schema(source, *methods[0])
    assert list(ship) == ["type", "function"] and list(ship["function"]) == ["name", "description", "parameters"]
    assert ship["function"]["description"] == "Ship some boxes.\n\nEach box goes out the same day."
    parameters = ship["function"]["parameters"]
    assert list(parameters["properties"]) == ["boxes", "size", "note", "express"]  # signature order
    assert parameters["required"] == ["boxes", "size"]
    assert parameters["properties"]["size"] == {
        "description": "How big the parcel is.", "enum": ["small", "large"], "title": "Size", "type": "string"
    }  # fmt: skip
    assert parameters["properties"]["note"] == {
        "default": None, "description": "A note for the courier.", "title": "Note", "type": "string"
    }  # fmt: skip
    box = parameters["$defs"]["Box"]
    assert box["description"] == "A box to ship." and box["additionalProperties"] is False
    assert box["properties"]["colour"] == {"$ref": "#/$defs/Colour", "default": "red", "description": "Its colour"}
    assert parameters["$defs"]["Colour"] == {"enum": ["red", "blue"], "title": "Colour", "type": "string"}
    # The schema is what the product sends: upstream's key order survives upstream_key_order.
    assert json.dumps(upstream_view.upstream_key_order(ship)) == json.dumps(ship)


def test_discoverable_tools_are_read_from_their_docstrings(tmp_path: Path) -> None:
    source = view_derive.Source(_tree(tmp_path))
    [(_, refund)] = source.toolkit_methods(("domains/shop/tools.py", "ShopTools"), discoverable=True)
    assert view_derive.discoverable_text(refund) == {
        "description": "Give money back for an order.",
        "parameters": {
            "order_id": {"type": "string", "description": "The order.", "required": True},
            "amount": {"type": "number", "description": "How much.", "required": False},
        },
        "success_message": "Refund issued.",
    }


def test_a_card_without_returns_gets_the_fallback_read_from_upstreams_module() -> None:
    import ast

    module = ast.parse(
        textwrap.dedent(
            """
            def parse_card(doc):
                success_message = "Done, made up here."
                return success_message

            def plain(self):
                \"\"\"Do it.\"\"\"
            """
        )
    )
    fallback = view_derive.default_success_message(module)
    assert fallback == "Done, made up here."
    method = next(node for node in module.body if isinstance(node, ast.FunctionDef) and node.name == "plain")
    assert view_derive.discoverable_text(method, fallback)["success_message"] == "Done, made up here."
    with pytest.raises(DataError, match="no default success_message"):
        view_derive.default_success_message(ast.parse("x = 1"))


def test_a_tree_that_is_not_upstreams_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(DataError, match="not a tau2-bench checkout"):
        view_derive.Source(tmp_path)
    source = view_derive.Source(_tree(tmp_path))
    with pytest.raises(DataError, match="cannot find the definition of 'Nope'"):
        source.named_type("domains/shop/tools.py", "Nope")
    if (DATA_DIR / "tau2").is_dir():
        assert cli_main(["data", "view", "--from", str(tmp_path / "nowhere"), "--into", str(tmp_path / "v.json")]) == 1
        assert "not a tau2-bench checkout" in capsys.readouterr().err


def test_the_source_can_be_read_over_http(tmp_path: Path) -> None:
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    _tree(tmp_path / "repo")
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(tmp_path / "repo"))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    with ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}"
            source = view_derive.Source(url + "/")
            assert source.string("agent/llm_agent.py", "AGENT_INSTRUCTION") == "Be kind."
            methods = source.toolkit_methods(("domains/shop/tools.py", "ShopTools"))
            on_disk = view_derive.Source(tmp_path / "repo")
            assert [view_derive.tool_schema(source, *m) for m in methods] == [
                view_derive.tool_schema(on_disk, *m)
                for m in on_disk.toolkit_methods(("domains/shop/tools.py", "ShopTools"))
            ]
            with pytest.raises(DataError, match=rf"{url}/src/tau2/user/missing.py: cannot be read \(HTTP Error 404"):
                source.tree("user/missing.py")
        finally:
            server.shutdown()


def _upstream_checkout(tmp_path: Path) -> Path | None:
    """A checkout of upstream at the pin: ``$TAU2_UPSTREAM_CHECKOUT``, else the source files of the
    pin taken out of a git mirror (``$TAU2_UPSTREAM_GIT``, else ``/work/.mirror/...``)."""
    named = os.environ.get("TAU2_UPSTREAM_CHECKOUT")
    if named:
        return Path(named)
    git_dir = Path(os.environ.get("TAU2_UPSTREAM_GIT") or "/work/.mirror/sierra-research+tau2-bench/repo")
    if not git_dir.is_dir():
        return None
    archive = tmp_path / "src.tar"
    done = subprocess.run(["git", "--git-dir", str(git_dir), "archive", "-o", str(archive), PIN_COMMIT, "src"],
                          capture_output=True, check=False)  # fmt: skip
    if done.returncode != 0:
        return None
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path / "checkout", filter="data")
    return tmp_path / "checkout"


@pytest.mark.skipif(not SHARED_VIEW.is_file(), reason=f"no shared view at {SHARED_VIEW}")
@pytest.mark.skipif(not (DATA_DIR / "tau2").is_dir(), reason=f"no tau2 data under {DATA_DIR}")
def test_the_view_derived_from_upstreams_source_equals_the_shared_one(tmp_path: Path) -> None:
    checkout = _upstream_checkout(tmp_path)
    if checkout is None:
        pytest.skip("no copy of upstream tau2-bench at the pin (set TAU2_UPSTREAM_CHECKOUT or TAU2_UPSTREAM_GIT)")
    into = tmp_path / "agent_view.json"
    assert cli_main(["data", "view", "--from", str(checkout), "--data-dir", str(DATA_DIR), "--into", str(into)]) == 0
    derived = json.loads(into.read_text("utf-8"))
    shared = json.loads(SHARED_VIEW.read_text("utf-8"))
    for key in shared:
        if key == "user_guidelines":  # the derived view adds the voice guidelines
            assert {k: derived[key][k] for k in shared[key]} == shared[key]
        elif key not in ("domains", "generated_by"):
            assert derived[key] == shared[key], key
    for domain, entry in shared["domains"].items():
        for key, value in entry.items():
            assert derived["domains"][domain][key] == value, f"{domain}.{key}"
    discoverable = derived["domains"]["banking_knowledge"]["discoverable_tools"]
    assert (len(discoverable["agent"]), len(discoverable["user"])) == (44, 4)  # upstream's counts at the pin
