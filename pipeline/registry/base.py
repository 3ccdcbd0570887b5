"""A named registry: the one pattern behind every "what may the config name here" list, and the one way
entries kept outside the package (plugins) are found.

Every extension point is a :class:`Registry` of small dataclass entries, each registered by a
``register(...)`` call at the end of the module that holds its spec and its code; the config layer fills
the schema's ``enum:`` from :meth:`Registry.names`. A built-in entry is made known by one import line (the
registry's stage package imports its module; a driver imports the package: pipeline/register_builtins.py).
A registry whose built-in entries live in a stage package (index kinds: ``pipeline.indexes``) names that
package as ``builtins``; the registry never imports it (a shared module importing a stage is an upward
import no checker sees through importlib), and a lookup before the driver's import is a one-line error
naming the package instead of an empty list of names.

**Plugins** are entry points of installed distributions, one group per registry (``wattbench.index_kinds``,
``wattbench.answer_backends``, ...): a plugin's pyproject.toml says ``[project.entry-points."<group>"]
<name> = "<module>"``, where importing ``<module>`` registers ``<name>`` (a plugin module is shaped as a
built-in one). Entry points are installed metadata (the .dist-info's entry_points.txt), so every process the
venv's Python runs finds them with nothing in its environment: the CLI, Snakemake's jobs, a cluster node's job.
A lookup imports the modules of its group's entry points first; one that registers no entry of its name,
or one whose name a built-in has taken, is an error naming the distribution. The ``WATTBENCH_<GROUP>``
environment variables that named plugin modules before (#47) are an error that says what to write instead.
"""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from importlib.metadata import EntryPoint, entry_points
from typing import Generic, Protocol, TypeVar

GROUP_PREFIX = "wattbench."  # every registry's entry-point group: wattbench.<what it holds>


class Named(Protocol):
    @property
    def name(self) -> str: ...


T = TypeVar("T", bound=Named)


class PluginError(ValueError):
    """A plugin that cannot be loaded as declared, or a plugin variable no longer read (bad input: the CLI says
    it in one line)."""


_PLUGGABLE: list[Registry] = []  # the registries with an entry-point group (pluggable() lists them)


@lru_cache(maxsize=8)
def _installed(path: tuple[str, ...]) -> dict[str, tuple[EntryPoint, ...]]:
    """The wattbench entry points of the distributions on ``path`` (sys.path, the cache's key: a folder put on
    it later is read then), by group. One scan of the installed metadata per path."""
    found = entry_points()
    return {g: tuple(found.select(group=g)) for g in found.groups if g.startswith(GROUP_PREFIX)}


def _origin(ep: EntryPoint) -> str:
    return f"{ep.dist.name} {ep.dist.version}" if ep.dist is not None else ep.value


def legacy_variable(group: str) -> str:
    """The environment variable that named a group's plugin modules before entry points (#47)."""
    return group.upper().replace(".", "_")


def _no_legacy_variable(group: str) -> None:
    var = legacy_variable(group)
    modules = [m.strip() for m in os.environ.get(var, "").split(",") if m.strip()]
    if modules:
        lines = "; ".join(f'<name> = "{m}"' for m in modules)
        raise PluginError(
            f"{var} is no longer read (#47): a plugin is an entry point. Declare it in its package's pyproject.toml "
            f'under [project.entry-points."{group}"] ({lines}; <name>: the entry the module registers), pip install '
            f"the package into the venv and unset {var} (docs/architecture.md, 'Plugins')"
        )


def pluggable() -> list[Registry]:
    """Every registry made so far that takes plugins (those whose modules the caller imported), by group."""
    return sorted(_PLUGGABLE, key=lambda r: r.group or "")


class Registry(Generic[T]):
    """Entries by name; registering a second, different entry under a taken name is an error. ``group``: the
    entry-point group its plugins declare (None: no plugins, e.g. the workflow's own table of dataset files)."""

    def __init__(self, what: str, group: str | None = None, builtins: str | None = None):
        if group is not None and not (group.startswith(GROUP_PREFIX) and group == group.lower()):
            raise ValueError(f"{what}: {group!r} is no entry-point group; registries name one: '{GROUP_PREFIX}<name>'")
        self.what, self.group, self.builtins = what, group, builtins
        self._entries: dict[str, T] = {}
        self._loaded: set[tuple[str, str]] = set()  # (name, module) of the entry points imported
        self._plugins: dict[str, str] = {}  # name -> the distribution that declared it
        if group is not None:
            _PLUGGABLE.append(self)

    def _load_extra(self) -> None:
        """Check that the package registering the built-in entries was imported by the driver; import the
        modules of the group's entry points not imported yet (an import already done is a no-op)."""
        if self.builtins and self.builtins not in sys.modules:
            raise LookupError(
                f"no {self.what} is registered yet: import {self.builtins} first (pipeline/register_builtins.py does)"
            )
        if self.group is None:
            return
        _no_legacy_variable(self.group)
        for ep in _installed(tuple(sys.path)).get(self.group, ()):
            if (ep.name, ep.value) not in self._loaded or ep.name not in self._entries:
                self._load(ep)

    def _load(self, ep: EntryPoint) -> None:
        origin = _origin(ep)
        if ep.name in self._entries and ep.name not in self._plugins:
            raise PluginError(f"{origin} declares {self.what} '{ep.name}' ({self.group}), a built-in's name")
        try:
            ep.load()  # imports the module: its register(...) call runs
        except ImportError as e:
            raise PluginError(
                f"{origin}: {self.group} entry point {ep.name} = {ep.value} cannot be imported: {e}"
            ) from e
        self._loaded.add((ep.name, ep.value))
        if ep.name not in self._entries:
            raise PluginError(
                f"{origin}: {self.group} entry point {ep.name} = {ep.value} registered no {self.what} '{ep.name}'"
            )
        self._plugins[ep.name] = origin

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

    def origin(self, name: str) -> str:
        """Where entry ``name`` comes from: the distribution of the plugin that declared it, else ``built-in``."""
        self._load_extra()
        return self._plugins.get(name, "built-in") if name in self._entries else "unknown"

    def registered(self) -> list[T]:
        """The entries in the order they were registered (a registry whose order means something: the metrics,
        whose columns stand in that order)."""
        self._load_extra()
        return list(self._entries.values())
