"""Python front end for the code chunker: `ast` statements to line-aligned Nodes."""

from __future__ import annotations

import ast

from docqa.ingest.chunkers.code_nodes import CONTAINER, FUNCTION, Node, line_spans

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def python_nodes(text: str) -> list[Node] | None:
    """Top-level Nodes of a Python module, or None when it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    lines = line_spans(text)
    return _nodes(text, lines, tree.body, 1, len(lines) - 1, "")


def _first_line(stmt: ast.stmt) -> int:
    """First line of a statement, decorators included."""
    decorators = getattr(stmt, "decorator_list", None) or []
    return min([d.lineno for d in decorators] + [stmt.lineno])


def _end(text: str, lines: list[int], line: int) -> int:
    """Offset of the end of 1-based `line`, without its newline."""
    return min(lines[line] - 1, len(text))


def _nodes(text, lines, body: list[ast.stmt], first: int, last: int, prefix: str) -> list[Node]:
    """Nodes for `body`, partitioning lines `first..last`: the lines before a statement
    (comments, blank lines) belong to it; lines after the last one form a trailing node."""
    out: list[Node] = []
    next_line = first
    for stmt in body:
        core_line = _first_line(stmt)
        end_line = max(stmt.end_lineno or core_line, core_line)
        start_line = min(next_line, core_line)
        node = Node(lines[start_line - 1], lines[core_line - 1], _end(text, lines, end_line))
        _describe(node, stmt, text, lines, prefix)
        out.append(node)
        next_line = end_line + 1
    if next_line <= last:
        out.append(Node(lines[next_line - 1], lines[next_line - 1], _end(text, lines, last)))
    return out


def _describe(node: Node, stmt: ast.stmt, text: str, lines: list[int], prefix: str) -> None:
    """Kind, symbol and children of a statement: a function's children are its body statements
    after the docstring (which stays in the header); a class's are its members."""
    if isinstance(stmt, _DEFS):
        node.kind, node.symbol = FUNCTION, prefix + stmt.name
        body = stmt.body[1:] if _has_docstring(stmt) else stmt.body
        if body:
            node.children = _nodes(text, lines, body, _first_line(body[0]), stmt.end_lineno, "")
    elif isinstance(stmt, ast.ClassDef):
        node.kind, node.symbol = CONTAINER, prefix + stmt.name
        members = stmt.body
        node.children = _nodes(text, lines, members, _first_line(members[0]), stmt.end_lineno,
                               node.symbol + ".")


def _has_docstring(stmt: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    first = stmt.body[0]
    return (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str))
