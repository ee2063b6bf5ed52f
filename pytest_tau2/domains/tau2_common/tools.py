"""What the tau2 domains' tools share: upstream's argument handling, its calculator and the
transfer to a human agent.

Each domain declares its own classes (its namespace, its tool order) on :class:`Tau2Tool` and
mixes the shared tools in, e.g. ``class CalculateTool(CalculateMixin, RetailTool)``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from typing import ClassVar, cast

from pydantic import BaseModel, ValidationError

from pytest_tau2.environment.jsontypes import JSONObject, JSONValue
from pytest_tau2.environment.tools import Tool
from pytest_tau2.errors import ToolError


class Tau2Tool(Tool):
    """Base of the tau2 domain tools: arguments are taken the way upstream takes them.

    Upstream passes the caller's arguments to the tool method unchecked. A value is converted
    only where the method builds a pydantic model from it, in pydantic's lax mode ("191"
    becomes 191 in an ``int`` field, 50 becomes 50.0 in a ``float`` one, a number is refused
    by a ``str`` field); everywhere else it is used as given: compared, counted, assigned. So
    these tools skip the JSON Schema check (the schema is still what the LLM is shown) and
    convert through :func:`upstream_model` exactly where their upstream counterpart builds a
    model; the rest of each tool uses the value as upstream does.
    """

    abstract = True
    check_argument_types = False


def upstream_model(model: type[BaseModel], data: Mapping[str, object]) -> JSONObject:
    """``data`` validated by ``model`` (lax mode, unknown keys dropped), as the plain dict of its
    dump; a value the model refuses refuses the call with pydantic's message (upstream's)."""
    try:
        return model.model_validate(data).model_dump()
    except ValidationError as exc:
        raise ToolError(str(exc)) from None


def models_if_all_dicts(values: JSONValue, model: type[BaseModel]) -> list[JSONObject] | None:
    """Upstream's conversion of a list-of-objects argument.

    When every element is a dict (also when there is none), each is validated by ``model``;
    otherwise the result is None and the caller goes on with the value as given. ``values``
    is iterated as upstream iterates it: a string or an object counts as its characters or
    keys, and a number or null refuses the call.
    """
    # Iterated as given: a number or null raises TypeError here, which refuses the call (upstream's).
    elements = cast("Iterable[JSONValue]", values)
    if not all(isinstance(value, dict) for value in elements):
        return None
    return [upstream_model(model, cast(JSONObject, value)) for value in elements]


def no_attribute(value: object, attribute: str) -> ToolError:
    """The refusal upstream gives when it reads a model attribute off a value it never
    converted (an element of a list that was not all objects)."""
    return ToolError(f"{type(value).__name__!r} object has no attribute {attribute!r}")


CALCULATOR_CHARACTERS = frozenset("0123456789+-*/(). ")
MAX_POWER_BITS = 1_000_000
"""``calculate`` refuses an integer power whose result would need more bits than this
(upstream would hang on ``9**9**9**9``); every other expression behaves as upstream's."""


class CalculateMixin:
    """``calculate(expression)``: arithmetic on a character whitelist, rounded to 2 decimals."""

    name: ClassVar[str] = "calculate"
    description: ClassVar[str] = (
        "Evaluate an arithmetic expression and return the result rounded to 2 decimals. "
        "Allowed characters: digits, + - * /, parentheses, '.' and spaces."
    )
    parameters: ClassVar[JSONObject] = {
        "type": "object",
        "properties": {
            "expression": {"type": "string", "description": "The expression to evaluate, e.g. '(19.99 + 5) * 2'."}
        },
        "required": ["expression"],
        "additionalProperties": False,
    }

    def run(self, expression: str) -> str:
        return calculate(expression)


class TransferMixin:
    """``transfer_to_human_agents(summary)``: no DB effect, recorded, ends the conversation."""

    name: ClassVar[str] = "transfer_to_human_agents"
    action_name: ClassVar[str | None] = "transfer_to_human_agents"
    mutates_state: ClassVar[bool] = False
    ends_conversation: ClassVar[str | None] = "transfer"
    description: ClassVar[str] = (
        "Transfer the customer to a human agent, with a summary of their issue. Only do this when the "
        "customer explicitly asks for a human, or when the policy and the available tools cannot "
        "resolve the issue."
    )
    parameters: ClassVar[JSONObject] = {
        "type": "object",
        "properties": {"summary": {"type": "string", "description": "The customer's issue and what was tried."}},
        "required": ["summary"],
        "additionalProperties": False,
    }

    def run(self, summary: str) -> str:
        return "Transfer successful"


def calculate(expression: str) -> str:
    """Upstream's calculator: a character whitelist, ``eval`` without builtins, 2 decimals."""
    if not all(char in CALCULATOR_CHARACTERS for char in expression):
        raise ToolError("Invalid characters in expression")
    tree = ast.parse(expression.lstrip(" "), "<string>", "eval")
    _refuse_huge_powers(tree)
    value = eval(compile(tree, "<string>", "eval"), {"__builtins__": None}, {})
    return str(round(float(value), 2))


def _refuse_huge_powers(tree: ast.Expression) -> None:
    """Refuse ``a ** b`` on integers whose result would take more than MAX_POWER_BITS bits.

    Inner powers are checked before the powers containing them, so evaluating an operand
    never computes an unchecked power. An operand that fails to evaluate is left to the real
    evaluation, which then raises upstream's error.
    """
    powers = [n for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow)]
    for node in reversed(powers):
        operands = _integer_operands(node)
        if (
            operands is not None
            and abs(operands[0]) > 1
            and operands[1] * abs(operands[0]).bit_length() > MAX_POWER_BITS
        ):
            raise ToolError("Expression too large to evaluate")


def _integer_operands(node: ast.BinOp) -> tuple[int, int] | None:
    """Both operands of ``node`` when they evaluate to integers, else None."""
    try:
        base, exponent = _evaluate(node.left), _evaluate(node.right)
    except (ArithmeticError, TypeError, ValueError, RecursionError):
        return None
    if isinstance(base, int) and isinstance(exponent, int):
        return base, exponent
    return None


def _evaluate(node: ast.expr) -> object:
    return eval(compile(ast.Expression(body=node), "<string>", "eval"), {"__builtins__": None}, {})
