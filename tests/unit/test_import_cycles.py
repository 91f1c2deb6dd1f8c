"""No import cycles in ``sqsemu/`` (docs/architecture.md, "Layers"): every import counts, those at module level, those
inside functions and those under ``if TYPE_CHECKING:`` alike, since each one is a dependency a reader must follow.

The graph comes from grimp (import-linter's graph library), which reads every import statement of every module.
import-linter's own contracts check layers and independence between named packages, not "no cycle anywhere", so
the cycles are found here: the strongly connected components of grimp's module graph. A package's edges to its own
descendants are left out (``sqsemu/__init__.py`` naming the public API it lazily re-exports is not a design cycle).
"""

from __future__ import annotations

import grimp

PACKAGE = "sqsemu"

KNOWN_CYCLES: list[set[str]] = []
"""Cycles allowed for now, each exactly as it stands (a cycle that grows or changes fails too)."""


def import_graph() -> dict[str, set[str]]:
    """``{module: modules it imports}`` within the package, every kind of import included."""
    graph = grimp.build_graph(PACKAGE, exclude_type_checking_imports=False, cache_dir=None)
    return {
        module: {
            imported
            for imported in graph.find_modules_directly_imported_by(module)
            if imported != module and not imported.startswith(module + ".")
        }
        for module in graph.modules
    }


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def test_the_cycle_finder_finds_cycles_through_any_import() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert cycles(graph) == [{"a", "b", "c"}]
    assert cycles({"x": {"y"}, "y": set()}) == []


def test_the_graph_counts_type_checking_and_function_level_imports() -> None:
    graph = import_graph()
    # sqsemu/declare.py imports Broker only under `if TYPE_CHECKING:` and the fault injector inside a function.
    assert "sqsemu.engine.broker" in graph["sqsemu.declare"]
    assert "sqsemu.admin.faults" in graph["sqsemu.declare"]


def test_the_package_has_no_import_cycle() -> None:
    found = cycles(import_graph())
    new = [sorted(cycle) for cycle in found if cycle not in KNOWN_CYCLES]
    assert not new, (
        "import cycles in sqsemu/ (docs/architecture.md, 'Layers', says which way imports go):\n"
        + "\n".join(" <-> ".join(cycle) for cycle in new)
    )
