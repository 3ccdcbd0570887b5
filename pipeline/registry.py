"""A named registry: the one pattern behind every "what may the config name here" list.

Answering backends (pipeline/answer_backends.py) and retrieval-suite datasets
(pipeline/suite_datasets.py) are each one :class:`Registry`; the config layer fills the schema's
``enum:`` from :meth:`Registry.names`, so adding one is a single :meth:`Registry.register` call.
"""
from __future__ import annotations

from typing import Generic, Protocol, TypeVar


class Named(Protocol):
    @property
    def name(self) -> str: ...


T = TypeVar("T", bound=Named)


class Registry(Generic[T]):
    """Entries by name; registering a second, different entry under a taken name is an error."""

    def __init__(self, what: str):
        self.what = what
        self._entries: dict[str, T] = {}

    def register(self, entry: T) -> T:
        if entry.name in self._entries and self._entries[entry.name] != entry:
            raise ValueError(f"{self.what} '{entry.name}' is registered twice")
        self._entries[entry.name] = entry
        return entry

    def unregister(self, name: str) -> None:
        """Forget ``name`` (a test that registered a toy cleans up with this)."""
        self._entries.pop(name, None)

    def get(self, name: str) -> T:
        if name not in self._entries:
            raise KeyError(f"unknown {self.what} {name!r}; known: {self.names()}")
        return self._entries[name]

    def names(self) -> list[str]:
        return sorted(self._entries)

    def entries(self) -> list[T]:
        return [self._entries[n] for n in self.names()]
