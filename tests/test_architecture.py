"""ARCHITECTURE.md says what the code is: each statement of it that can be checked is
checked here against the code (the layers' own rules are `test_layers.py`)."""

from __future__ import annotations

import re

from tests.conftest import ROOT
from tests.test_layers import LAYERS

PAGE = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
PACKAGE = ROOT / "condense_cli"


def table_rows(after: str) -> list[list[str]]:
    """The cells of the Markdown table that follows the line holding `after`."""
    lines = PAGE[PAGE.index(after) :].splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("|"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.strip().startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
    return rows


def test_the_diagram_names_every_layer_bottom_to_top() -> None:
    diagram = PAGE[PAGE.index("```\n") : PAGE.index("```", PAGE.index("```\n") + 4)]
    drawn = re.findall(r"^  (\w+)(?:/|\.py)\s", diagram, re.M)
    assert drawn[::-1] == [layer for layer in LAYERS if layer not in ("__init__", "__main__")]


def test_the_capability_table_is_the_seams_own() -> None:
    from condense_cli.dialects.base import CAPABILITIES

    rows = table_rows("| flag | methods | used by |")
    flags = {row[0].strip("`"): row[1] for row in rows}
    assert set(flags) == set(CAPABILITIES)
    for flag, (_, methods) in CAPABILITIES.items():
        for method in methods:
            assert f"`{method}" in flags[flag], (flag, method)


def test_the_package_table_lists_every_module_of_every_dialect() -> None:
    from condense_cli.dialects import DIALECTS

    rows = {
        row[0].strip("`/"): row[1] for row in table_rows("| package | modules, bottom to top |")
    }
    packages = {d.where.split(":")[0].split(".")[2] for d in DIALECTS.values()}
    assert set(rows) == packages
    for package, listed in rows.items():
        modules = {
            p.stem if p.is_file() else p.name
            for p in (PACKAGE / "dialects" / package).iterdir()
            if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()
        }
        named = set(re.findall(r"`(\w+)/?`", listed))
        assert modules <= named, (package, sorted(modules - named))


def test_cli_holds_one_module_per_command_and_the_shared_ones_it_names() -> None:
    from condense_cli.cli.app import COMMANDS

    shared = {"app", "options", "guard", "output", "many", "search_ahead"}
    modules = {p.stem for p in (PACKAGE / "cli").glob("*.py") if p.stem != "__init__"}
    assert modules == shared | {entry.module for entry in COMMANDS}
    line = PAGE[PAGE.index("  cli/") : PAGE.index("  terminal/")]
    for name in shared:
        assert f"{name}.py" in line, name


def test_tests_mirror_the_package() -> None:
    from condense_cli.dialects import DIALECTS

    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    mirrored = {f for f in folders if (ROOT / "tests" / f).is_dir()}
    mirrored |= {f for f in folders if (ROOT / "tests" / f"{f}_layer").is_dir()}
    assert mirrored == folders
    for registered in DIALECTS.values():
        package = registered.where.split(":")[0].split(".")[2]
        assert (ROOT / "tests" / "dialects" / package / "story.py").is_file(), package


def test_every_path_the_page_names_exists() -> None:
    """Paths in backticks, from the repository's root or under `condense_cli/`; one the
    page names as what is not there ("not `tests/llm/`") is left out."""
    roots = "condense_cli|tests|docs|bench|tools"
    layers = "core|llm|dialects|analysis|condensers|agent|terminal|cli|config|fast"
    missing = []
    for found in re.finditer(rf"`((?:{roots}|{layers})/[\w/.-]*)`", PAGE):
        path = found.group(1)
        if PAGE[: found.start()].endswith("not ") or "<" in path:
            continue
        whole = path if path.split("/")[0] in roots.split("|") else f"condense_cli/{path}"
        folder, _, last = whole.rstrip("/").rpartition("/")
        if "." in last and not re.search(r"\.(py|md|json|toml|js|png)$", last):
            last = last.split(".")[0] + ".py"  # `cli/many.each_log`: a name in a module
        if not (ROOT / folder / last).exists():
            missing.append(path)
    assert missing == []
