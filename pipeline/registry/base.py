"""A named registry: the one pattern behind every "what may the config name here" list.

Answering backends (pipeline/registry/answer_backends.py) and retrieval-suite datasets
(pipeline/registry/suite_datasets.py) are each one :class:`Registry`; the config layer fills the schema's
``enum:`` from :meth:`Registry.names`, so adding one is a single :meth:`Registry.register` call.
Entries kept outside the package register in their own module, named in the registry's environment
variable (comma-separated), which Snakemake's jobs inherit; lookups import those modules first.

A registry whose built-in entries live in a stage package (index kinds: ``pipeline.indexes``) names that
package as ``builtins``; the registry never imports it (a shared module importing a stage is an upward
import no checker sees through importlib). A driver imports the package (pipeline/register_builtins.py), and a
lookup before that is a one-line error naming the package instead of an empty list of names.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Generic, Protocol, TypeVar


class Named(Protocol):
    @property
    def name(self) -> str: ...


T = TypeVar("T", bound=Named)


class Registry(Generic[T]):
    """Entries by name; registering a second, different entry under a taken name is an error."""

    def __init__(self, what: str, extra_env: str, builtins: str | None = None):
        self.what, self.extra_env, self.builtins = what, extra_env, builtins
        self._entries: dict[str, T] = {}

    def _load_extra(self) -> None:
        """Import the modules named in ``extra_env`` (an import already done is a no-op); check that the
        package registering the built-in entries was imported by the driver."""
        if self.builtins and self.builtins not in sys.modules:
            raise LookupError(
                f"no {self.what} is registered yet: import {self.builtins} first (pipeline/register_builtins.py does)"
            )
        for module in os.environ.get(self.extra_env, "").split(","):
            if module.strip():
                importlib.import_module(module.strip())

    def register(self, entry: T) -> T:
        if entry.name in self._entries and self._entries[entry.name] != entry:
            raise ValueError(f"{self.what} '{entry.name}' is registered twice")
        self._entries[entry.name] = entry
        return entry

    def unregister(self, name: str) -> None:
        """Forget ``name`` (a test that registered a toy cleans up with this)."""
        self._entries.pop(name, None)

    def get(self, name: str) -> T:
        self._load_extra()
        if name not in self._entries:
            raise KeyError(f"unknown {self.what} {name!r}; known: {self.names()}")
        return self._entries[name]

    def names(self) -> list[str]:
        self._load_extra()
        return sorted(self._entries)

    def entries(self) -> list[T]:
        return [self._entries[n] for n in self.names()]

    def registered(self) -> list[T]:
        """The entries in the order they were registered (a registry whose order means something: the metrics,
        whose columns stand in that order)."""
        self._load_extra()
        return list(self._entries.values())
