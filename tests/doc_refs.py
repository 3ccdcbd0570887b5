"""What the docs, comments, docstrings, schema comments and CLI help name in the code, and whether it exists
as written (tests/test_docs.py asserts none is missing: a renamed module or function leaves no ghost).

Read, never imported: every Python file is parsed (its comments by :mod:`tokenize`, its docstrings and
top-level names by :mod:`ast`), so the check loads no stage. What counts as a reference:

- a path under ``pipeline/``, ``tests/``, ``docs/``, ``devtools/`` or ``profiles/``: the file or folder
  exists, and a module path names a module (``pipeline/<name>.py`` fails where ``pipeline/<name>/`` is a
  package); ``*`` and ``{a,b}`` patterns each match;
- a bare module file name (``llm_models.py``): some file of the repo has that name (or path tail);
- a dotted name from ``pipeline.`` (``pipeline.config.resolve_config``), one in a Sphinx role
  (``:func:`ghosts```, ``:class:`~pipeline.tree.DocTree```: a bare name is the module's own or, as Sphinx
  finds it, one of the repo's), or one whose first part is a top-level module (```paths.benchmark```) or a
  module the file imports: every part resolves, through the modules' own imports;
- a module followed by a name (``pipeline/config/load.py resolve_config``, ```llm_models.py```'s
  ```ModelSpec```): the module defines or imports that name.

A dotted code span that is a config key of the schema (```llm.max_retries```) is a key, not a module;
tests/test_docs.py checks those against the schema.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from pipeline.datasets.paths import REPO

ROOTS = ("pipeline", "tests", "docs", "devtools", "profiles")
SKIP_DIRS = {".venv", "__pycache__", ".git", ".snakemake", "results", "reports", "runs", "logs", "benchmarks", "data"}

# A repo path as written: starts at one of ROOTS (not inside another path: ../shared/docs/x.md is not ours).
PATH = re.compile(rf"(?<![\w./~$-])((?:{'|'.join(ROOTS)})/[\w./*{{}},-]*[\w*}}/])")
# A module file named without its folder: llm_models.py, report/summary.py.
MODULE_FILE = re.compile(r"(?<![\w./~$-])((?:[A-Za-z_]\w*/)*[A-Za-z_]\w*\.py)\b(?![\w/-])")
DOTTED = re.compile(r"(?<![\w./-])(pipeline(?:\.[A-Za-z_]\w*)+)")
ROLE = re.compile(r":(?:func|class|data|attr|meth|mod|exc|obj):`~?([\w.]+)`")
# ``load.py``'s ``resolve_config``, `load.py` `resolve_config`, load.py resolve_config (bare: a name with an
# underscore or an inner capital, not a word)
MODULE_NAME = re.compile(
    r"(?<![\w./~$-])`{0,2}((?:[A-Za-z_]\w*/)*[A-Za-z_]\w*\.py)`{0,2}(?:'s)?[ \t]+"
    r"(?:`{1,2}([A-Za-z_]\w*)(?:\(\))?`{1,2}|([a-z]\w*_\w*|[A-Z][a-z0-9]+[A-Z]\w*)\b(?![.(/-]))"
)
DOTTED_NAME = re.compile(r"(?<![\w./$-])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?![\w/-])")
FILE_SUFFIX = re.compile(r"\.(?:py|smk|ya?ml|md|csv|tsv|jsonl?|png|svg|html|sqlite|lock|txt|log|toml|sh|gguf|onnx)\b")


# ------------------------------------------------------------------------------------------------ the code


@dataclass
class Module:
    """One Python file as names: what it defines or imports at its top level, and its classes' members."""

    path: Path
    dotted: str | None  # pipeline.config.load; None for a file outside the importable packages (tests/, docs/)
    names: set[str] = field(default_factory=set)
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # alias -> (module, name or None)
    classes: dict[str, set[str]] = field(default_factory=dict)
    bases: dict[str, list[str]] = field(default_factory=dict)  # a class's bases, by the names written
    instances: dict[str, str] = field(default_factory=dict)  # NAME = SomeClass(...) -> SomeClass
    dynamic: bool = False  # a module-level __getattr__: any name may resolve

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"


def repo_files(pattern: str) -> list[Path]:
    """Files of the repo matching ``pattern`` (a glob under REPO), outside outputs and environments."""
    return sorted(p for p in REPO.glob(pattern) if p.is_file() and not SKIP_DIRS & set(p.relative_to(REPO).parts))


def _target_names(node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, (ast.Tuple, ast.List)):
        for e in node.elts:
            yield from _target_names(e)


def _class_members(cls: ast.ClassDef) -> set[str]:
    members = set()
    for node in ast.walk(cls):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            members.add(node.name)
        elif isinstance(node, ast.Assign):
            members |= {n for t in node.targets for n in _target_names(t)}
        elif isinstance(node, ast.AnnAssign):
            members |= set(_target_names(node.target))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            members.add(node.attr)  # self.x = ... in a method
    return members


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Top-level statements, into if/try/with blocks (a conditional import still names the module)."""
    for node in body:
        yield node
        for attr in ("body", "orelse", "finalbody", "handlers"):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                yield from _top_level(getattr(node, attr, []) or [])


def _resolve_relative(dotted: str | None, is_package: bool, level: int, module: str | None) -> str:
    if not level:
        return module or ""
    base = (dotted or "").split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, *([module] if module else [])])


def parse_module(path: Path, dotted: str | None) -> Module:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    m = Module(path, dotted)
    for node in _top_level(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            m.names.add(node.name)
            m.dynamic |= node.name == "__getattr__"
        elif isinstance(node, ast.ClassDef):
            m.names.add(node.name)
            m.classes[node.name] = _class_members(node)
            m.bases[node.name] = [ast.unparse(b) for b in node.bases]
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [n for t in targets for n in _target_names(t)]
            m.names |= set(names)
            value = node.value
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
                m.instances |= {n: value.func.id for n in names}
        elif isinstance(node, ast.Import):
            for a in node.names:
                alias = a.asname or a.name.split(".")[0]
                m.names.add(alias)
                m.imports[alias] = (a.name if a.asname else alias, None)
        elif isinstance(node, ast.ImportFrom):
            source = _resolve_relative(dotted, m.is_package, node.level, node.module)
            for a in node.names:
                m.names.add(a.asname or a.name)
                m.imports[a.asname or a.name] = (source, a.name)
    return m


@dataclass
class Code:
    """Every module of the repo by dotted name (pipeline, devtools) and by file, and who has which stem."""

    by_dotted: dict[str, Module]
    by_path: dict[Path, Module]

    @classmethod
    @cache
    def load(cls) -> Code:
        by_dotted, by_path = {}, {}
        for path in repo_files("**/*.py"):
            rel = path.relative_to(REPO)
            dotted = None
            if rel.parts[0] in ("pipeline", "devtools"):
                parts = list(rel.with_suffix("").parts)
                dotted = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            m = parse_module(path, dotted)
            by_path[rel] = m
            if dotted:
                by_dotted[dotted] = m
        return cls(by_dotted, by_path)

    def submodules(self, package: str) -> set[str]:
        return {d.rsplit(".", 1)[1] for d in self.by_dotted if d.rpartition(".")[0] == package}

    def stems(self, stem: str) -> list[str]:
        """The importable modules whose last part is ``stem`` (``paths`` -> pipeline.paths, pipeline.datasets.paths)."""
        return [d for d in self.by_dotted if d.rsplit(".", 1)[-1] == stem]

    def files_named(self, written: str) -> list[Path]:
        """The repo's Python files whose path ends with ``written`` (``llm_models.py``, ``report/summary.py``)."""
        tail = tuple(Path(written).parts)
        return [p for p in self.by_path if p.parts[-len(tail) :] == tail]

    def resolves(self, dotted: str, attrs: list[str], depth: int = 0) -> bool:
        """Whether ``attrs`` resolve one after another from module ``dotted`` (through its imports)."""
        if not attrs:
            return True
        m = self.by_dotted.get(dotted)
        if m is None or depth > 8:
            # a third-party module's names are not ours to check
            return m is None and not dotted.startswith(("pipeline", "devtools"))
        name, rest = attrs[0], attrs[1:]
        if m.is_package and name in self.submodules(dotted) and name not in m.imports:
            return self.resolves(f"{dotted}.{name}", rest, depth + 1)
        return self.name_resolves(m, name, rest, depth)

    def name_resolves(self, m: Module, name: str, rest: list[str], depth: int = 0) -> bool:
        """Whether ``name`` is defined or imported by ``m`` and ``rest`` resolves from it."""
        if name in m.imports:
            source, imported = m.imports[name]
            return self.resolves(source, [imported, *rest] if imported else rest, depth + 1)
        if name not in m.names:
            return m.dynamic
        if not rest:
            return True
        cls = name if name in m.classes else m.instances.get(name)
        if cls in m.classes:
            return self.member_resolves(m, cls, rest[0])
        return True  # an attribute of a value (a function's, a constant's): not checked statically

    def member_resolves(self, m: Module, cls: str, member: str, depth: int = 0) -> bool:
        """A class's own member, or one of its bases' (a base from outside the repo may have any)."""
        if member in m.classes[cls]:
            return True
        for base in m.bases[cls]:
            if base in m.classes and depth < 8:
                if self.member_resolves(m, base, member, depth + 1):
                    return True
            elif base in m.imports:
                source, imported = m.imports[base]
                other = self.by_dotted.get(source)
                if other is None or (
                    imported in other.classes and self.member_resolves(other, imported, member, depth + 1)
                ):
                    return True
            elif base not in ("object", "Protocol"):
                return True  # a base we cannot see into
        return False

    def dotted_exists(self, text: str) -> bool:
        """``pipeline.config.load.resolve_config``: the longest module prefix, then the names after it."""
        parts = text.split(".")
        for i in range(len(parts), 0, -1):
            if ".".join(parts[:i]) in self.by_dotted:
                return self.resolves(".".join(parts[:i]), parts[i:])
        return False


# ------------------------------------------------------------------------------------------------ the text


@dataclass(frozen=True)
class Text:
    """A piece of prose that may name code: where it is (file:line) and, for code, its module."""

    where: str
    text: str
    module: Path | None = None  # the Python file it is in (bare names in Sphinx roles are that module's)


def python_texts(path: Path) -> Iterator[Text]:
    """A Python file's comments and docstrings, each with its line."""
    rel = path.relative_to(REPO)
    source = path.read_text(encoding="utf-8")
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            yield Text(f"{rel}:{tok.start[0]}", tok.string, rel)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                line = node.body[0].lineno
                for i, chunk in enumerate(doc.split("\n")):
                    yield Text(f"{rel}:{line + i}", chunk, rel)


def rule_file_comments(path: Path) -> Iterator[Text]:
    """The comments of the Snakefile or a rule file (Snakemake's grammar tokenizes as Python's); their code
    names Snakemake's objects (its ``workflow``), not ours."""
    rel = path.relative_to(REPO)
    for tok in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        if tok.type == tokenize.COMMENT:
            yield Text(f"{rel}:{tok.start[0]}", tok.string)


def file_lines(path: Path) -> Iterator[Text]:
    """Every line of a text file (docs, the Makefile, rule files, YAML with its comments)."""
    rel = path.relative_to(REPO)
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        yield Text(f"{rel}:{i}", line)


def help_texts() -> Iterator[Text]:
    """Every description, help and epilog of ``python -m pipeline`` and its verbs."""
    import argparse

    from pipeline.cli import build_parser

    def walk(parser: argparse.ArgumentParser, name: str) -> Iterator[Text]:
        for text in (parser.description, parser.epilog):
            if text:
                yield Text(f"{name} --help", text)
        for action in parser._actions:
            if action.help and action.help != argparse.SUPPRESS:
                yield Text(f"{name} --help ({'/'.join(action.option_strings) or action.dest})", action.help)
            if isinstance(action, argparse._SubParsersAction):
                for verb, sub in action.choices.items():
                    yield from walk(sub, f"{name} {verb}")
                for a in action._choices_actions:
                    if a.help:
                        yield Text(f"{name} --help ({a.dest})", a.help)

    yield from walk(build_parser(), "python -m pipeline")


def schema_texts() -> Iterator[Text]:
    """Every ``description`` of the config schema as validation builds it: the YAML's and those the registered
    entries declare beside their fields (``key("...")``), which no comment or docstring holds."""
    from pipeline.config import full_schema

    def walk(node: object, where: str) -> Iterator[Text]:
        if isinstance(node, dict):
            if isinstance(node.get("description"), str):
                yield Text(f"config schema {where or '<top>'}", node["description"])
            for k, v in node.items():
                yield from walk(v, f"{where}.{k}" if where else str(k))
        elif isinstance(node, list):
            for v in node:
                yield from walk(v, where)

    yield from walk(full_schema(), "")


def doc_pages() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def _build_texts() -> Iterator[Text]:
    for pattern in ("Snakefile", "pipeline/rules/*.smk"):
        for path in repo_files(pattern):
            yield from rule_file_comments(path)
    for pattern in ("Makefile", "**/*.yaml", "pyproject.toml"):
        for path in repo_files(pattern):
            yield from file_lines(path)


# Everything that may name code, in groups: the doc pages; Python comments and docstrings (pipeline/, tests/,
# devtools/, docs/); the Makefile, the rule files' comments, YAML (schema, configs, profiles, claims) with
# its comments, and pyproject.toml; the config schema's descriptions (declared keys' too); the CLI's help.
SOURCES: dict[str, Callable[[], Iterable[Text]]] = {
    "docs": lambda: (t for p in doc_pages() for t in file_lines(p)),
    "code": lambda: (t for p in repo_files("**/*.py") for t in python_texts(p)),
    "build": _build_texts,
    "schema": schema_texts,
    "help": help_texts,
}


def texts() -> Iterator[Text]:
    for source in SOURCES.values():
        yield from source()


# ------------------------------------------------------------------------------------------------ references


def _glob_exists(path: str) -> bool:
    if "{" in path:
        head, alts, tail = re.match(r"(.*?)\{(.*?)\}(.*)", path).groups()
        return all(_glob_exists(f"{head}{a}{tail}") for a in alts.split(","))
    if "*" in path:
        return any(REPO.glob(path.rstrip("/")))
    return path_exists(path)


def path_exists(path: str) -> bool:
    """``path`` as written: a folder when it ends in ``/``, a file (a module, not a package) when it ends in
    ``.py``, else either."""
    p = REPO / path
    if path.endswith("/"):
        return p.is_dir()
    if path.endswith(".py"):
        return p.is_file()
    return p.exists()


@dataclass(frozen=True)
class Ghost:
    where: str
    named: str
    why: str

    def __str__(self) -> str:
        return f"{self.where}: {self.named} ({self.why})"


def _strip(text: str) -> str:
    return text.rstrip(".,:;")


# A quoted message about a user's file or key (`docs/my paper.pdf: doc id ...`, `error: docs: no documents`,
# `config key 'llm.api_key': credentials must not ...`): it names the user's folder (a corpus's docs/) or key.
MESSAGE = re.compile(r"`(?:error: |warning: )?[\w./' -]+: [^`]*`")
SPAN = re.compile(r"`[^`\n]*`")  # code spans, paired left to right


def without_messages(text: str) -> str:
    return SPAN.sub(lambda m: "" if MESSAGE.fullmatch(m.group(0)) else m.group(0), text)


def path_ghosts(t: Text) -> Iterator[Ghost]:
    for raw in PATH.findall(without_messages(t.text)):
        path = _strip(raw)
        if not _glob_exists(path):
            why = "a package, not a module" if path.endswith(".py") and (REPO / path[:-3]).is_dir() else "no such path"
            yield Ghost(t.where, path, why)


@cache
def our_folders() -> frozenset[str]:
    """The folder names a path written from inside the code starts with (``report/``, ``verbs/``, ``cluster/``)."""
    return frozenset(
        p.name for root in ("pipeline", "tests", "devtools") for p in (REPO / root).rglob("*") if p.is_dir()
    )


def module_file_ghosts(t: Text, code: Code) -> Iterator[Ghost]:
    """``llm_models.py``, ``report/summary.py``: a module of ours by that name (another project's, such as
    ``snakemake/scheduling/milp.py`` or ``sqlean.py``, is not checked)."""
    for raw in MODULE_FILE.findall(t.text):
        first = raw.split("/")[0]
        if first in ROOTS or ("/" in raw and first not in our_folders()) or ("/" not in raw and third_party(raw[:-3])):
            continue  # a full path (path_ghosts), or a file of another project
        if not code.files_named(raw):
            package = [d for d in code.stems(Path(raw).stem) if code.by_dotted[d].is_package]
            yield Ghost(t.where, raw, "a package, not a module" if package else "no such module")


def _defined_in_file(code: Code, written: str, name: str) -> bool:
    files = [Path(written)] if written.split("/")[0] in ROOTS else code.files_named(written)
    return any(code.name_resolves(code.by_path[f], name, []) for f in files if f in code.by_path)


def module_name_ghosts(t: Text, code: Code) -> Iterator[Ghost]:
    for m in MODULE_NAME.finditer(t.text):
        written, name = m.group(1), m.group(2) or m.group(3)
        files = [Path(written)] if written.split("/")[0] in ROOTS else code.files_named(written)
        if files and all(f in code.by_path for f in files) and not _defined_in_file(code, written, name):
            yield Ghost(t.where, f"{written} {name}", "the module has no such name")


def dotted_ghosts(t: Text, code: Code) -> Iterator[Ghost]:
    for raw in DOTTED.findall(t.text):
        name = _strip(raw)
        if not FILE_SUFFIX.search(name + " ") and not code.dotted_exists(name):
            yield Ghost(t.where, name, "does not resolve")


def _in_module(code: Code, module: Path | None, parts: list[str]) -> bool | None:
    """Whether ``parts`` resolve from the names of the Python file ``module`` (None: it has not the first)."""
    m = code.by_path.get(module) if module else None
    if m is None or parts[0] not in m.names:
        return None
    return code.name_resolves(m, parts[0], parts[1:])


def anywhere(code: Code, name: str) -> bool:
    """Whether some module of the repo defines ``name`` at its top level or in a class (a bare role's target)."""
    return any(name in m.names or any(name in c for c in m.classes.values()) for m in code.by_path.values())


def role_ghosts(t: Text, code: Code) -> Iterator[Ghost]:
    """``:func:`x```: the module's own name or its classes' member, else one of the repo's (as Sphinx looks
    it up); ``:class:`~pipeline.tree.DocTree```: resolves; ``:func:`paths.benchmark```: through the module's
    imports or a module."""
    for target in ROLE.findall(t.text):
        parts = target.split(".")
        if parts[0] == "pipeline":
            ok = code.dotted_exists(target)
        elif len(parts) == 1:
            ok = anywhere(code, target)
        else:
            ok = _in_module(code, t.module, parts)
            if ok is None:
                ok = any(code.resolves(d, parts[1:]) for d in code.stems(parts[0])) or _member_anywhere(code, parts)
        if not ok:
            yield Ghost(t.where, target, "does not resolve")


def _member_anywhere(code: Code, parts: list[str]) -> bool:
    """``Class.member`` for a class of the repo that has the member."""
    return len(parts) == 2 and any(
        parts[0] in m.classes and code.member_resolves(m, parts[0], parts[1]) for m in code.by_path.values()
    )


@cache
def third_party(name: str) -> bool:
    """Whether ``name`` is an installed module from outside the repo (``io``, ``datasets``): its attributes are not
    ours. A folder of the repo on the path (tests/llm/ as a namespace package, no origin) is not one."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    if spec is None or spec.origin is None:
        return False
    origin = Path(spec.origin)
    return REPO not in origin.parents or bool(SKIP_DIRS & set(origin.relative_to(REPO).parts))  # .venv: installed


def dotted_name_ghosts(t: Text, code: Code, is_config_key: Callable[[str], bool]) -> Iterator[Ghost]:
    """``module.name`` without ``pipeline.``: through the Python file's own names and imports (``paths.benchmark``
    where it imported ``paths``), else where the first part is a top-level module of ``pipeline``
    (``llm_models.ModelSpec``), unless the whole is a config key or the first part an installed module of another project."""
    for raw in DOTTED_NAME.findall(without_messages(t.text)):
        name = _strip(raw).removesuffix("()")
        if name.startswith("pipeline.") or FILE_SUFFIX.search(name + " "):
            continue
        parts = name.split(".")
        ok = _in_module(code, t.module, parts)
        if ok is None:
            if f"pipeline.{parts[0]}" not in code.by_dotted or third_party(parts[0]) or is_config_key(name):
                continue
            ok = code.resolves(f"pipeline.{parts[0]}", parts[1:])
        if not ok:
            yield Ghost(t.where, name, "does not resolve")


def ghosts(items: Iterable[Text], is_config_key: Callable[[str], bool]) -> list[Ghost]:
    """Every reference in ``items`` that does not exist as written."""
    code = Code.load()
    found = []
    for t in items:
        found += path_ghosts(t)
        found += module_file_ghosts(t, code)
        found += module_name_ghosts(t, code)
        found += dotted_ghosts(t, code)
        found += role_ghosts(t, code)
        found += dotted_name_ghosts(t, code, is_config_key)
    return list(dict.fromkeys(found))  # one line per ghost where two recognisers saw it
