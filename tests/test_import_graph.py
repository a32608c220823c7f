"""The package's import graph: no circles between modules, and packages met by their faces.

A package's face is its ``__init__``: code outside the package imports that, not the
modules behind it, so a package can move things about inside without its users noticing.
Exceptions are listed below by name, each with its reason.

The graph is read from the source (ast over basilica_p2p/**.py), not from what a run
happens to import, so an import inside a function counts as much as one at the top: a
circle that is only cut by importing late is still a circle for whoever reads the code.
An import of ``a.b.c`` also runs the ``__init__`` of ``a.b`` (unless the importer sits
inside ``a.b`` already), so that edge is drawn too: a face that re-exports a module which
imports back through the face is a circle as well.  Only an import under ``if
TYPE_CHECKING:`` is left out of the circles: it never runs, and names a type a signature
mentions (the agent contract's seat events, say).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import basilica_p2p

ROOT = Path(basilica_p2p.__file__).parent
TOP = ROOT.name


@dataclass(frozen=True)
class Import:
    importer: str
    target: str
    line: int
    typing_only: bool


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules(root: Path) -> dict[str, Path]:
    """Module name -> its file; a folder without an ``__init__`` (a namespace package) is a
    module with no code."""
    files = {_module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    folders = {_module_name(p / "__init__.py", root): p for p in sorted([root, *root.rglob("*/")])
               if any(p.glob("*.py"))}
    return folders | files


def _is_package(name: str, modules: dict[str, Path]) -> bool:
    return modules[name].is_dir() or modules[name].name == "__init__.py"


class _ImportFinder(ast.NodeVisitor):
    """Every import statement, anywhere in a module, with whether it runs: one under ``if
    TYPE_CHECKING:`` only names types for the reader and the checker."""

    def __init__(self) -> None:
        self.found: list[tuple[ast.Import | ast.ImportFrom, bool]] = []
        self._typing_only = False

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
                isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"):
            outer, self._typing_only = self._typing_only, True
            for child in node.body:
                self.visit(child)
            self._typing_only = outer
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        self.found.append((node, self._typing_only))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.found.append((node, self._typing_only))


def _imports(modules: dict[str, Path]) -> Iterator[Import]:
    """Every import of one of the package's own modules, resolved to the module it names."""
    top = min(modules, key=len)
    for name, path in modules.items():
        if path.is_dir():
            continue
        package = name if _is_package(name, modules) else name.rpartition(".")[0]
        finder = _ImportFinder()
        finder.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        for node, typing_only in finder.found:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == top:
                        yield Import(name, _nearest_module(alias.name, modules), node.lineno, typing_only)
                continue
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.split(".")[0] != top:
                continue
            for alias in node.names:
                # `from .x import y` imports the module x.y when there is one, else a name of x
                sub = f"{source}.{alias.name}"
                yield Import(name, sub if sub in modules else _nearest_module(source, modules), node.lineno,
                             typing_only)


def _nearest_module(dotted: str, modules: dict[str, Path]) -> str:
    while dotted not in modules:
        dotted = dotted.rpartition(".")[0]
    return dotted


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


@dataclass(frozen=True)
class Tree:
    modules: dict[str, Path]
    imports: list[Import]


@cache
def read_tree(root: Path = ROOT) -> Tree:
    modules = _modules(root)
    return Tree(modules, list(_imports(modules)))


def runs(imp: Import) -> list[str]:
    """The modules an import runs that its importer is not already inside: the target, and
    the packages on the way to it (their ``__init__`` runs first)."""
    inside = {*_ancestors(imp.importer), imp.importer}
    return [m for m in [*_ancestors(imp.target), imp.target] if m not in inside]


def _graph(tree: Tree) -> dict[str, set[str]]:
    """Module -> the modules importing it runs, leaving out imports under TYPE_CHECKING."""
    graph: dict[str, set[str]] = {name: set() for name in tree.modules}
    for imp in tree.imports:
        if not imp.typing_only:
            graph[imp.importer].update(runs(imp))
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def circles_in(tree: Tree) -> tuple[list[list[str]], str]:
    """The circles, and the imports that close them (for a reader of a failure)."""
    graph = _graph(tree)
    found = _circles(graph)
    lines = []
    for circle in found:
        members = set(circle)
        lines.append(" <-> ".join(circle))
        lines += sorted({f"    {i.importer}:{i.line} imports {i.target}" for i in tree.imports
                         if i.importer in members and not i.typing_only and members & set(runs(i))})
    return found, "\n".join(lines)


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_no_module_imports_another_that_imports_it_back() -> None:
    found, why = circles_in(read_tree())
    assert found == [], "import circles:\n" + why


def test_the_reader_finds_circles_closed_late_or_through_a_face_and_skips_type_only_imports(tmp_path: Path) -> None:
    files = {
        "__init__.py": "",
        # a -> b at the top, b -> a inside a function: a circle all the same
        "a.py": "from .b import g\n",
        "b.py": "def g():\n    from . import a\n",
        # c -> face -> face._x -> c: the face's __init__ runs on the way to what it re-exports
        "c.py": "from .face import X\n",
        "face/__init__.py": "from ._x import X\n",
        "face/_x.py": "import pkg.c\nX = 1\n",
        # d -> e only to name a type, e -> d at run time: no circle
        "d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .e import E\nD = 1\n",
        "e.py": "from .d import D\nE = D\n",
        # ns/ has no __init__: importing ns.m runs nothing else
        "ns/m.py": "from ..d import D\n",
    }
    for name, text in files.items():
        (tmp_path / "pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "pkg" / name).write_text(text)
    tree = read_tree(tmp_path / "pkg")
    found, why = circles_in(tree)
    assert found == [["pkg.a", "pkg.b"], ["pkg.c", "pkg.face", "pkg.face._x"]]
    assert "pkg.b:2 imports pkg.a" in why
    assert Import("pkg.d", "pkg.e", 3, typing_only=True) in tree.imports


# Development tools: run with python -m, never imported by what a user runs.
TOOLS = {
    f"{TOP}.bench": "the benchmarks (python -m basilica_p2p.bench)",
    f"{TOP}.vectors": "the test-vector generators (python -m basilica_p2p.vectors.protocol ...)",
}


def test_nothing_outside_a_development_tool_imports_it() -> None:
    imports = read_tree().imports
    for tool in TOOLS:
        users = sorted({f"{i.importer}:{i.line}" for i in imports
                        if _inside(i.target, tool) and not _inside(i.importer, tool)})
        assert users == [], f"{tool} ({TOOLS[tool]}) is imported by {users}"


# A package is met by its face: code outside it imports its __init__, not its modules.
# Modules a face offers as namespaces of their own:
PUBLIC_MODULES = {
    f"{TOP}.engine.actions": "the action kinds, read as a namespace (A.VAULT, A.ORDER, ...)",
    f"{TOP}.data.printable_14_0_0": "a generated table shipped among data/'s files (data/ has no code to face)",
}
# Imports that reach inside another package, each with why it cannot go through the face.
INSIDE = {
    (f"{TOP}.net.side", f"{TOP}.replay.walk"): "walk() is named like its module: re-exported, it would hide it",
    (f"{TOP}.cli.replays", f"{TOP}.replay.show"): "show's walk() would hide the module replay.walk the same way",
    (f"{TOP}.cli.play", f"{TOP}.net.resume"): "resume() is named like its module: re-exported, it would hide it",
    (f"{TOP}.bench", f"{TOP}.env._bench"): "the environments' benchmark times their private table (env._core), so it "
                                           "lives inside env/ and bench only starts it",
    (f"{TOP}.bench._table", f"{TOP}.net.framing"): "the watchers benchmark's reading-only watchers speak frames below "
                                                   "the watch protocol, to time the host's own cost",
}
# Importers that read other packages' insides by design.
READS_INSIDES = {
    f"{TOP}.vectors": "the test vectors print the intermediate bytes of each format (tags, payloads, derivations)",
}


def _face_for(imp: Import) -> str | None:
    """The outermost package around the imported module that the importer is not inside."""
    return next((p for p in _ancestors(imp.target)[1:] if not _inside(imp.importer, p)), None)


def test_code_outside_a_package_imports_its_face() -> None:
    tree = read_tree()
    reaching = sorted({f"{i.importer}:{i.line} imports {i.target}" for i in tree.imports
                       if (face := _face_for(i)) is not None and i.target != face
                       and i.target not in PUBLIC_MODULES and (i.importer, i.target) not in INSIDE
                       and not any(_inside(i.importer, reader) for reader in READS_INSIDES)})
    assert reaching == [], "imports past a package's face:\n" + "\n".join(reaching)
    used = {(i.importer, i.target) for i in tree.imports}
    assert set(INSIDE) <= used, f"exceptions no longer needed: {set(INSIDE) - used}"


LINE_CLIENT = f"{TOP}.lineclient"
APP = f"{TOP}.app"


def test_the_app_and_the_line_client_share_only_modules_of_neither() -> None:
    imports = read_tree().imports
    app_from_line = sorted({f"{i.importer}:{i.line}" for i in imports
                            if _inside(i.importer, APP) and _inside(i.target, LINE_CLIENT)})
    assert app_from_line == [], f"the app imports the line client at {app_from_line}"
    shared = (f"{TOP}.drawing", f"{TOP}.rules_help", f"{TOP}.narration")
    leaning = sorted({f"{i.importer} imports {i.target}" for i in imports if i.importer in shared
                      and (_inside(i.target, APP) or _inside(i.target, LINE_CLIENT))})
    assert leaning == [], f"what both clients share leans on one of them: {leaning}"
