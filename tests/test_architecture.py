"""Meta-tests: imports point one way and never in a circle (DESIGN §2), __all__ is honest,
settings are documented.

How imports are read (`import_graph`), the same for both checks:

- Every import counts, wherever it is: module level, inside a function, under an `if`.  A lazy
  import still ties two modules together; deferring it changes start-up time, not layering.
- `import a.b.c` is an edge to module a.b.c.  `from a.b import c` is an edge to a.b.c when that
  is a module, else to a.b (its `__init__`).  Python also runs the parent packages' `__init__`
  first, but that does not count: otherwise every package whose `__init__` re-exports its
  submodules would be a circle with each of them.
- `from docqa import X` counts as importing `docqa/__init__` (the public API, which loads
  everything) as well as X when X is a module: no package of ours does (the public API is for callers
  outside; a front end names the module it uses: `import docqa.web as web`).
- Relative imports are resolved against the importing module's package, so they count too.
- Imports under `if TYPE_CHECKING:` never run: they count for the direction (a type from a
  higher layer is still a dependency on it) but not for circles.

Direction: ALLOWED below is the whole rule, one line per package: the packages of ours it may
import besides itself.  EXCEPTIONS lists the edges that break the target direction today, each
with its reason; the test fails when one is no longer needed, so the list only shrinks.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

import docqa
from docqa.settings import Settings

SRC = Path(docqa.__file__).parent
ROOT = "docqa"

# Bottom to top.  Leaves (types, errors, clock, version, heap) import nothing of ours, events only types;
# access, llm and settings import nothing above them.  Target (DESIGN §2): front ends (cli, api, mcp, web)
# → kb → run → agent → answer → retrieve → store, embed, text; ingest → store, embed, text.
BOTTOM = {"types", "errors"}
ALLOWED: dict[str, set[str]] = {
    "types": set(), "errors": set(), "clock": set(), "version": set(),
    "events": {"types"},  # the typed events of a run's stream (they carry Citations and an Acceptance)
    "heap": set(),  # glibc heap tuning for the processes that parse and embed
    "settings": {"errors"},
    "names": {"errors"},  # what a collection may be called
    "access": {"types", "errors"},  # Principal and the one policy, decided in the core
    "llm": {"errors"},
    "text": BOTTOM,
    "embed": BOTTOM | {"text", "heap"},
    "store": BOTTOM | {"text", "clock", "access"},  # access: who manages keys
    "session": BOTTOM,  # the conversation so far, the Q&A log, corrections: over RunRecords (the RunLog is store's)
    # the models a knowledge base runs on (embedder, retriever, chat model), shared by its services
    "models": BOTTOM | {"llm", "embed", "settings", "store", "retrieve"},
    # each concern's service (base + service.py) checks the caller's Principal: access is below them all
    "crawl": BOTTOM | {"version"},  # documentation sites: discovery and polite fetching over HTTP (no store)
    "ingest": BOTTOM | {"text", "store", "embed", "clock", "heap", "access", "settings", "models", "names", "crawl"},
    "retrieve": BOTTOM | {"text", "store", "embed", "settings", "access", "llm", "names"},
    "browse": BOTTOM | {"store", "access", "text"},
    "view": BOTTOM | {"ingest", "access", "settings", "store"},  # the original file, PDF pages and boxes: the ingest readers open them
    # the low half of a run (Control, RunContext): below answer and agent; run/ (a question's life) sits above agent
    "flow": BOTTOM | {"llm", "events"},
    "answer": BOTTOM | {"text", "retrieve", "llm", "settings", "flow", "store", "embed", "events"},  # store, embed: recall
    "agent": BOTTOM | {"answer", "retrieve", "llm", "settings", "flow", "events"},
    "skills": BOTTOM | {"agent", "settings", "text"},  # SKILL.md folders; their tools are agent tools, handed to the loop by run
    # run/ also serves the answers (a run's library over the services) and the log of runs
    "run": BOTTOM | {"agent", "answer", "llm", "settings", "session", "clock", "flow", "skills", "events",
                     "access", "store", "embed", "retrieve", "browse", "ingest", "view", "models", "names"},
    "status": BOTTOM | {"llm", "embed", "store", "access", "models"},  # what the kb runs on and holds, for its keepers
    # docqa init / estimate: survey, proposal, estimates; embed: the chunk text as the model is given it (repeats embedded once)
    "plan": BOTTOM | {"ingest", "text", "settings", "llm", "access", "run", "models", "embed"},
    # the facade: it builds the services and hands them their store and models
    "kb": BOTTOM | {"access", "models", "run", "retrieve", "ingest", "store", "embed", "browse", "view", "llm", "settings",
                    "status", "plan", "events"},
    "evaluate": BOTTOM | {"kb"},
    "testing": {"embed", "llm"},  # the fakes at the boundary, for tests: re-exported from their packages
    # Front ends: parse, authenticate, call the kb, render.
    "mcp": BOTTOM | {"kb", "access", "settings", "version", "flow", "events"},  # flow: cancel a call's run
    "api": BOTTOM | {"kb", "access", "settings", "version", "clock", "mcp", "run", "events",
                     "flow", "web"},  # mcp: mounted at /mcp; run: the live runs' handles; web: the page at /
    # a front end may start another: 'docqa mcp', 'docqa serve'
    "cli": BOTTOM | {"kb", "run", "settings", "evaluate", "mcp", "api", "version", "llm", "plan", "skills",
                     "crawl", "events"},  # crawl: which arguments are URLs
    "web": set(),  # the page: static assets over the API, it decides nothing
    "__init__": BOTTOM | {"kb", "ingest", "retrieve", "settings", "events"},  # the public API: `from docqa import ...`
    "__main__": {"cli"},
}

# (importer, imported) -> why.  The lead empties this; each entry goes when its import does.
EXCEPTIONS: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Edge:
    source: str  # module name, e.g. "docqa.ingest.chunkers.base"
    target: str
    line: int
    type_only: bool  # under `if TYPE_CHECKING:`

    def __str__(self) -> str:
        return f"{self.source} (line {self.line}) -> {self.target}"


def modules(src: Path = SRC) -> dict[str, Path]:
    """Every module of the package by dotted name (a package's name is its __init__)."""
    found = {}
    for path in sorted(src.rglob("*.py")):
        parts = (ROOT, *path.relative_to(src).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


class _Imports(ast.NodeVisitor):
    """Collects the edges of one module, noting which sit under `if TYPE_CHECKING:`."""

    def __init__(self, name: str, is_package: bool, known: dict[str, Path]):
        self.name, self.known, self.edges = name, known, []
        self.package = name if is_package else name.rpartition(".")[0]
        self.type_only = False

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        checking = (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
        if not checking:
            return self.generic_visit(node)
        before, self.type_only = self.type_only, True
        for child in node.body:
            self.visit(child)
        self.type_only = before
        for child in node.orelse:
            self.visit(child)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level:  # relative: resolve against this module's package
            base = self.package.split(".")
            base = base[: len(base) - (node.level - 1)]
            module = ".".join(base + ([module] if module else []))
        if module != ROOT and not module.startswith(ROOT + "."):
            return
        if module == ROOT:
            self._add(ROOT, node)  # the public API's __init__, whatever is taken from it
        for alias in node.names:
            sub = f"{module}.{alias.name}"
            self._add(sub if sub in self.known else module, node)

    def _add(self, name: str, node: ast.AST) -> None:
        if name != ROOT and not name.startswith(ROOT + "."):
            return
        while name not in self.known and "." in name:  # `import docqa.x.attr` names a module's attribute
            name = name.rpartition(".")[0]
        if name != self.name:
            self.edges.append(Edge(self.name, name, node.lineno, self.type_only))


def import_graph(src: Path = SRC) -> list[Edge]:
    """Every import of one of our modules by another, resolved as described at the top."""
    known = modules(src)
    edges: list[Edge] = []
    for name, path in known.items():
        visitor = _Imports(name, path.name == "__init__.py", known)
        visitor.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        edges.extend(visitor.edges)
    return edges


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one member."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
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
    return found


def cycle_path(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One shortest circle through the component's first member: [a, b, ..., a]."""
    start, members = component[0], set(component)
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for v in frontier:
            for w in sorted(graph.get(v, set()) & members):
                if w == start:  # walk back from v to start, then close the circle
                    path = [v]
                    while path[-1] != start:
                        path.append(parents[path[-1]])
                    return [*reversed(path), start]
                if w not in parents:
                    parents[w] = v
                    following.append(w)
        frontier = following
    raise AssertionError(f"no circle through {start}")  # cannot happen in a component


def circles(edges: list[Edge]) -> list[str]:
    """Each import circle between modules as 'a -> b -> a' (imports under TYPE_CHECKING left out)."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        if not e.type_only:
            graph.setdefault(e.source, set()).add(e.target)
    found = []
    for component in strongly_connected(graph):
        path = cycle_path(graph, component)
        rest = sorted(set(component) - set(path))
        found.append(" -> ".join(path) + (f"  (same circle group: {', '.join(rest)})" if rest else ""))
    return found


def package(module: str) -> str:
    """The top-level package a module belongs to ("__init__" for docqa itself)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def direction_problems(edges: list[Edge]) -> tuple[list[str], set[tuple[str, str]]]:
    """Imports outside ALLOWED and not excepted, and the excepted edges actually used."""
    problems, used = [], set()
    for e in edges:
        a, b = package(e.source), package(e.target)
        if a == b:
            continue
        if a not in ALLOWED:
            problems.append(f"package {a!r} has no entry in ALLOWED")
        elif b not in ALLOWED[a]:
            if (a, b) in EXCEPTIONS:
                used.add((a, b))
            else:
                problems.append(f"{e}: {a} may not import {b}")
    return sorted(set(problems)), used


# --- the checks ---

@functools.cache
def this_graph() -> tuple[Edge, ...]:
    """The package's own graph, read once for the checks below."""
    return tuple(import_graph())


def test_no_import_circles():
    found = circles(list(this_graph()))
    assert not found, "import circles:\n" + "\n".join(found)


def test_imports_point_one_way():
    problems, _ = direction_problems(list(this_graph()))
    assert not problems, "\n".join(problems)


def test_every_exception_is_still_needed():
    _, used = direction_problems(list(this_graph()))
    assert set(EXCEPTIONS) == used, f"no longer needed, remove from EXCEPTIONS: {sorted(set(EXCEPTIONS) - used)}"


def test_the_rules_point_one_way():
    """ALLOWED plus EXCEPTIONS is itself free of circles, so following it cannot build one."""
    graph = {a: set(bs) for a, bs in ALLOWED.items()}
    for a, b in EXCEPTIONS:
        graph.setdefault(a, set()).add(b)
    assert not strongly_connected(graph)


# --- the checker checks itself on small trees ---

def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    src = tmp_path / ROOT
    for name, text in {"__init__.py": "", **files}.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text, encoding="utf-8")
    return src


def test_checker_sees_lazy_relative_and_top_level_imports(tmp_path):
    src = _tree(tmp_path, {
        "low.py": "def f():\n    from docqa import high  # lazy, and through docqa/__init__\n",
        "high.py": "from . import low\n",
        "pkg/__init__.py": "from docqa.pkg.a import A\n",
        "pkg/a.py": "from ..pkg import b\nA = 1\n",
        "pkg/b.py": "import docqa.low.f\n",
    })
    edges = {(e.source, e.target) for e in import_graph(src)}
    assert {("docqa.low", "docqa"), ("docqa.low", "docqa.high"), ("docqa.high", "docqa.low"),
            ("docqa.pkg", "docqa.pkg.a"), ("docqa.pkg.a", "docqa.pkg.b"), ("docqa.pkg.b", "docqa.low")} <= edges
    assert circles(import_graph(src)) == ["docqa.high -> docqa.low -> docqa.high"]


def test_checker_reports_the_whole_circle_and_skips_type_checking(tmp_path):
    src = _tree(tmp_path, {
        "a.py": "import docqa.b\n",
        "b.py": "from docqa.c import x\n",
        "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from docqa.d import D\nfrom docqa import a\nx = 1\n",
        "d.py": "import docqa.c\n",
    })
    edges = import_graph(src)
    assert circles(edges) == ["docqa.a -> docqa.b -> docqa.c -> docqa.a"]
    assert [e.type_only for e in edges if e.target == "docqa.d"] == [True]


def test_checker_applies_the_direction_to_lazy_and_type_only_imports():
    edges = [Edge("docqa.text.segment", "docqa.kb", 3, False), Edge("docqa.llm.base", "docqa.answer", 9, True),
             Edge("docqa.answer.pipeline", "docqa", 5, False), Edge("docqa.cli", "docqa", 7, False),
             Edge("docqa.kb", "docqa.store.base", 1, False)]
    problems, _ = direction_problems(edges)
    assert problems == ["docqa.answer.pipeline (line 5) -> docqa: answer may not import __init__",
                        "docqa.cli (line 7) -> docqa: cli may not import __init__",  # a front end neither
                        "docqa.llm.base (line 9) -> docqa.answer: llm may not import answer",
                        "docqa.text.segment (line 3) -> docqa.kb: text may not import kb"]


def test_all_matches_public_names():
    public = {n for n in dir(docqa) if not n.startswith("_") and n[0].isupper() or n == "load_settings"}
    assert set(docqa.__all__) == public


def test_every_setting_is_described():
    def walk(model, prefix=""):
        for name, field in model.model_fields.items():
            assert field.description, f"setting {prefix}{name} has no description"
            annotation = field.annotation
            if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
                walk(annotation, f"{prefix}{name}.")

    walk(Settings)


# --- front ends decide nothing (DESIGN §2): they authenticate, call the kb, render ---

FRONT_ENDS = ("cli", "api", "mcp", "web")
ACCESS_NAMES = {"Principal", "LOCAL"}  # who is calling: a front end hands it over, the core decides


def front_end_problems(src: Path = SRC) -> list[str]:
    """Front-end imports of `docqa.access` beyond Principal and LOCAL, and any use of a KnowledgeBase's
    store (`kb.store`, `self.kb.store`, `writer_kb.store`, ...): both would let a front end decide."""
    problems: list[tuple[str, int, str]] = []
    for name, path in modules(src).items():
        if package(name) not in FRONT_ENDS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            line = getattr(node, "lineno", 0)
            if isinstance(node, ast.ImportFrom) and node.module == f"{ROOT}.access":
                extra = sorted({a.name for a in node.names} - ACCESS_NAMES)
                if extra:
                    problems.append((name, line, f"imports {', '.join(extra)} from docqa.access: ask the kb instead"))
            elif isinstance(node, ast.Import) and any(a.name == f"{ROOT}.access" for a in node.names):
                problems.append((name, line, "imports docqa.access whole: import Principal or LOCAL only"))
            elif isinstance(node, ast.Attribute) and node.attr == "store" and ast.unparse(node.value).endswith("kb"):
                problems.append((name, line, f"reaches into {ast.unparse(node)}: call a kb service instead"))
    return [f"{name} (line {line}) {what}" for name, line, what in sorted(problems)]


def test_front_ends_decide_nothing():
    problems = front_end_problems()
    assert not problems, "\n".join(problems)


def test_checker_sees_access_names_and_the_store_in_front_ends(tmp_path):
    src = _tree(tmp_path, {
        "access.py": "class Principal: ...\nLOCAL = Principal()\ndef require(p, a): ...\n",
        "api/__init__.py": "",
        "api/routes.py": "from docqa.access import LOCAL, Principal, require\n"
                         "def f(rt, kb):\n    kb.store.ping()\n    rt.kb.store\n    kb.storage\n    store.x\n",
        "mcp/__init__.py": "import docqa.access\nfrom docqa.access import Principal\n",
        "kb.py": "from docqa.access import require\ndef g(kb):\n    return kb.store\n",  # the core may
    })
    assert front_end_problems(src) == [
        "docqa.api.routes (line 1) imports require from docqa.access: ask the kb instead",
        "docqa.api.routes (line 3) reaches into kb.store: call a kb service instead",
        "docqa.api.routes (line 4) reaches into rt.kb.store: call a kb service instead",
        "docqa.mcp (line 1) imports docqa.access whole: import Principal or LOCAL only",
    ]
