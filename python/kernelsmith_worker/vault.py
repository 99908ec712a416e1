"""A record of the evaluator's that candidate code can read but not change.

Python has no private state: a dict held in a closure is one `fn.__closure__` away (an
attribute read no audit event reports), and a module's or class's data is watched only at
checks. A Vault keeps its dict as a local of a running generator: the only ways to that frame
are the generator's frame attribute and the garbage collector's lists, which the evaluator's
audit hook reports (event_watch.py). Reads are free; a write is made only when the frames that
asked for it are the writers' own code objects (by identity, not file name: code made under a
worker file's name is not the worker's), else PermissionError.

    vault = Vault(lambda frame: frame.f_code is record.__code__)
    vault.put(key, value)      # from record() only
    vault.get(key); vault.items()
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Generator
from typing import Any

_getframe = sys._getframe


def _keeper(may_write: Callable[[Any], bool]) -> Generator[Any, tuple[str, Any, Any], None]:
    data: dict[Any, Any] = {}
    reply: Any = None
    while True:
        op, key, value = yield reply
        if op == "get":
            reply = data.get(key)
        elif op == "items":
            reply = list(data.items())
        else:  # put / pop: asked by Vault.put or Vault.pop, called by a writer
            asker, writer = _getframe(1), _getframe(2)
            if asker.f_code not in _CHANGERS or not may_write(writer):
                reply = PermissionError(f"the evaluator's record cannot be changed from "
                                        f"{writer.f_code.co_filename}")
            elif op == "put":
                data[key], reply = value, None
            else:
                reply = data.pop(key, None)


class Vault:
    __slots__ = ("_keeper",)

    def __init__(self, may_write: Callable[[Any], bool]) -> None:
        """`may_write(frame)`: whether the frame that calls put/pop may change the record."""
        self._keeper = _keeper(may_write)
        next(self._keeper)

    def _ask(self, op: str, key: Any = None, value: Any = None) -> Any:
        reply = self._keeper.send((op, key, value))
        if isinstance(reply, PermissionError):
            raise reply
        return reply

    def get(self, key: Any) -> Any:
        return self._ask("get", key)

    def items(self) -> list[tuple[Any, Any]]:
        return self._ask("items")

    def put(self, key: Any, value: Any) -> None:
        reply = self._keeper.send(("put", key, value))
        if isinstance(reply, PermissionError):
            raise reply

    def pop(self, key: Any) -> Any:
        reply = self._keeper.send(("pop", key, None))
        if isinstance(reply, PermissionError):
            raise reply
        return reply


_CHANGERS = (Vault.put.__code__, Vault.pop.__code__)
