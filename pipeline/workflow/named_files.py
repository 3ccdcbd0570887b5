"""Every file a report verb reads, by name: declared as the rule's input and passed to the verb, which
is told which file is which and never derives it from a path."""

from __future__ import annotations

import shlex

NamedFiles = dict[str, dict[str, str]]  # a report verb's files: argument (kind) -> name -> path


def input_lists(files: NamedFiles) -> dict[str, list[str]]:
    """A rule's named inputs: one list per kind."""
    return {kind: list(named.values()) for kind, named in files.items()}


def named_args(files: NamedFiles) -> str:
    """``--<kind> NAME=PATH`` per file: a report verb is told which file is which, never derives it from a path."""
    return " ".join(
        f"--{kind.replace('_', '-')} {shlex.quote(f'{name}={path}')}"
        for kind, named in files.items()
        for name, path in named.items()
    )
