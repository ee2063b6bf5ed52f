"""execnet's internals that the adapter uses, in one place (read from execnet 2.1.1 and 2.1.2).

execnet's public surface is its ``__all__`` (``makegateway``, ``Channel``, ``HostNotFound``, ...).
The adapter needs two more names; nothing else in the package touches them:

- ``Gateway._io``, the object whose ``write`` sends one message (:func:`serialize_writes`: a
  worker sends from two threads, and a socket's writes must not interleave);
- ``execnet.gateway_base.GatewayReceivedTerminate``, raised by ``makegateway`` when a socket
  server that is shutting down refuses the gateway (:func:`gateway_refusals`).

:func:`contract_problems` lists what an installed execnet lacks (tests/unit/test_compat_contract.py).
"""

from __future__ import annotations

import threading
from typing import Any

TESTED = ("2.1.1", "2.1.2")
"""The execnet releases this module was read from and tested with (oldest, newest)."""

_MARK = "_tau2_serialized"


def serialize_writes(channel: Any) -> None:
    """Make each message write of ``channel``'s gateway whole under a lock (once per gateway);
    a gateway without a wrappable ``_io.write`` is left as it is."""
    io: Any = getattr(getattr(channel, "gateway", None), "_io", None)
    write = getattr(io, "write", None)
    if io is None or write is None or getattr(io, _MARK, False):
        return
    lock = threading.Lock()

    def serialized(data: bytes) -> None:
        with lock:
            write(data)

    try:
        io.write = serialized
        setattr(io, _MARK, True)
    except AttributeError:  # an io object that cannot be wrapped: leave it as it is
        pass


def gateway_refusals() -> tuple[type[BaseException], ...]:
    """What ``execnet.makegateway`` raises when a socket server is away or going away."""
    import execnet
    from execnet import gateway_base

    return (OSError, EOFError, execnet.HostNotFound, gateway_base.GatewayReceivedTerminate)


def contract_problems() -> list[str]:
    """What the installed execnet lacks of the above, one line each naming it and the version."""
    from importlib.metadata import version

    import execnet
    from execnet import gateway_base

    where = f"execnet {version('execnet')} (compat_execnet read {' and '.join(TESTED)})"
    problems = []
    if not isinstance(getattr(gateway_base, "GatewayReceivedTerminate", None), type):
        problems.append(f"{where} lacks execnet.gateway_base.GatewayReceivedTerminate")
    base = getattr(gateway_base, "BaseGateway", None)
    if base is None or "_io" not in base.__init__.__code__.co_names:
        problems.append(f"{where}: BaseGateway.__init__ no longer sets self._io")
    if not callable(getattr(execnet, "makegateway", None)):
        problems.append(f"{where} lacks execnet.makegateway")
    return problems
