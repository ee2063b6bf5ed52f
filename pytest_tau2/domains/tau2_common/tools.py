"""Tools every tau2 domain shares: upstream's calculator and the transfer to a human agent.

Each domain declares its own classes (its namespace, its tool order) by mixing these in,
e.g. ``class CalculateTool(CalculateMixin, RetailTool)``.
"""

from __future__ import annotations

import ast
from typing import Any, ClassVar

from pytest_tau2.errors import ToolError

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
    parameters: ClassVar[dict[str, Any]] = {
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
    parameters: ClassVar[dict[str, Any]] = {
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


def _evaluate(node: ast.expr) -> Any:
    return eval(compile(ast.Expression(body=node), "<string>", "eval"), {"__builtins__": None}, {})
