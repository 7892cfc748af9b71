"""tree-sitter front end for the code chunker: definitions per language to line-aligned Nodes.

Grammars come from the individual wheels (`tree_sitter_go`, ...), compiled in, so nothing is
downloaded at run time.  Each language names its function-like and container node types;
wrappers (`export_statement`, `template_declaration`) are looked through for the name.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from functools import cache

from docqa.ingest.chunkers.code_nodes import CONTAINER, FUNCTION, STATEMENT, Node, line_spans


@dataclass(frozen=True)
class Grammar:
    """Node types of one language: definitions kept whole, containers split into members."""

    module: str
    entry: str = "language"
    functions: frozenset[str] = frozenset()
    containers: frozenset[str] = frozenset()
    wrappers: frozenset[str] = frozenset()


_JS_FUNCTIONS = frozenset({"function_declaration", "generator_function_declaration",
                           "method_definition", "function_signature", "abstract_method_signature"})
_JS_CONTAINERS = frozenset({"class_declaration", "abstract_class_declaration", "class",
                            "interface_declaration", "internal_module", "module"})
_JS_WRAPPERS = frozenset({"export_statement", "lexical_declaration", "variable_declaration",
                          "ambient_declaration"})
_CPP_FUNCTIONS = frozenset({"function_definition"})

GRAMMARS: dict[str, Grammar] = {
    "javascript": Grammar("tree_sitter_javascript", functions=_JS_FUNCTIONS,
                          containers=_JS_CONTAINERS, wrappers=_JS_WRAPPERS),
    "typescript": Grammar("tree_sitter_typescript", "language_typescript", _JS_FUNCTIONS,
                          _JS_CONTAINERS, _JS_WRAPPERS),
    "tsx": Grammar("tree_sitter_typescript", "language_tsx", _JS_FUNCTIONS, _JS_CONTAINERS,
                   _JS_WRAPPERS),
    "go": Grammar("tree_sitter_go", functions=frozenset({"function_declaration",
                  "method_declaration", "type_declaration"})),
    "java": Grammar("tree_sitter_java", functions=frozenset({"method_declaration",
                    "constructor_declaration"}), containers=frozenset({"class_declaration",
                    "interface_declaration", "enum_declaration", "record_declaration"})),
    "c": Grammar("tree_sitter_c", functions=_CPP_FUNCTIONS),
    "cpp": Grammar("tree_sitter_cpp", functions=_CPP_FUNCTIONS,
                   containers=frozenset({"class_specifier", "struct_specifier",
                                         "namespace_definition"}),
                   wrappers=frozenset({"template_declaration"})),
    "rust": Grammar("tree_sitter_rust", functions=frozenset({"function_item", "struct_item",
                    "enum_item", "macro_definition"}), containers=frozenset({"impl_item",
                    "trait_item", "mod_item"})),
    "bash": Grammar("tree_sitter_bash", functions=frozenset({"function_definition"})),
}
ALIASES = {"js": "javascript", "jsx": "javascript", "ts": "typescript", "c++": "cpp",
           "sh": "bash", "shell": "bash", "rs": "rust", "golang": "go", "h": "c", "hpp": "cpp"}
_NAMES = frozenset({"identifier", "field_identifier", "qualified_identifier", "type_identifier",
                    "destructor_name", "operator_name", "property_identifier", "name"})
_WORD = re.compile(r"\w+")


def supports(language: str | None) -> bool:
    return ALIASES.get(language or "", language or "") in GRAMMARS


@cache
def _parser(language: str):
    from tree_sitter import Language, Parser

    grammar = GRAMMARS[language]
    module = importlib.import_module(grammar.module)
    return Parser(Language(getattr(module, grammar.entry)()))


def tree_sitter_nodes(text: str, language: str) -> list[Node] | None:
    """Top-level Nodes of a source file (tree-sitter recovers from errors, so never None)."""
    language = ALIASES.get(language, language)
    data = text.encode("utf-8")
    tree = _parser(language).parse(data)
    walker = _Walker(text, data, GRAMMARS[language])
    return walker.nodes(tree.root_node.named_children, 0, len(text), "")


class _Walker:
    """Converts tree-sitter nodes (byte rows) into line-aligned Nodes (char offsets)."""

    def __init__(self, text: str, data: bytes, grammar: Grammar):
        self.text, self.data, self.grammar = text, data, grammar
        self.lines = line_spans(text)

    def nodes(self, children, lo: int, hi: int, prefix: str) -> list[Node]:
        """Nodes partitioning `[lo, hi)`: comments join the next node, leftovers trail."""
        out: list[Node] = []
        pos = lo
        for child in children:
            if child.type == "comment" or "comment" in child.type:
                continue
            core = self.lines[child.start_point[0]]
            end = min(self.lines[child.end_point[0] + 1] - 1, len(self.text))
            if end <= pos:
                continue  # shares a line with the previous node
            node = Node(min(pos, core), max(core, pos), end)
            self.describe(node, child, prefix)
            out.append(node)
            pos = end
        if pos < hi:
            out.append(Node(pos, pos, hi))
        return out

    def describe(self, node: Node, ts, prefix: str) -> None:
        """Kind, symbol and children from the (unwrapped) definition."""
        target = self.unwrap(ts)
        kind = target.type if target is not None else ""
        if kind in self.grammar.containers:
            node.kind, node.symbol = CONTAINER, prefix + (self.name(target) or kind)
            body = target.child_by_field_name("body")
            if body is not None and body.named_children:
                node.children = self.nodes(body.named_children, node.start, node.end, node.symbol + ".")
        elif kind in self.grammar.functions or (kind == "variable_declarator"):
            node.kind, node.symbol = FUNCTION, prefix + (self.name(target) or kind)
            body = target.child_by_field_name("body")
            if body is None and kind == "variable_declarator":
                body = (target.child_by_field_name("value") or target).child_by_field_name("body")
            if body is not None and body.named_children:
                node.children = self.nodes(body.named_children, node.start, node.end, "")
        else:
            node.kind = STATEMENT

    def unwrap(self, ts):
        """The definition inside wrappers (export, template, `const f = () => ...`)."""
        seen = 0
        while ts is not None and ts.type in self.grammar.wrappers and seen < 4:
            seen += 1
            inner = ts.child_by_field_name("declaration")
            if inner is None:
                inner = next((c for c in ts.named_children if c.type not in ("comment",)
                              and c.type != "template_parameter_list"), None)
            if ts.type in ("lexical_declaration", "variable_declaration"):
                return inner if inner is not None and _is_function_value(inner) else None
            ts = inner
        return ts

    def name(self, ts) -> str | None:
        """The definition's name, `Type.method` for Go methods, the type for Rust impls."""
        found = ts.child_by_field_name("name")
        if ts.type == "type_declaration" and ts.named_children:
            found = ts.named_children[0].child_by_field_name("name")
        if found is None:
            found = self.declarator_name(ts) or ts.child_by_field_name("type")
        if found is None:
            return None
        name = self.source(found)
        receiver = ts.child_by_field_name("receiver")
        if receiver is not None:
            words = _WORD.findall(self.source(receiver))
            name = f"{words[-1]}.{name}" if words else name
        return name

    def declarator_name(self, ts):
        """C/C++: follow the `declarator` chain down to the identifier."""
        d = ts.child_by_field_name("declarator")
        for _ in range(8):
            if d is None or d.type in _NAMES:
                return d
            d = d.child_by_field_name("declarator") or d.child_by_field_name("name")
        return None

    def source(self, ts) -> str:
        return self.data[ts.start_byte : ts.end_byte].decode("utf-8", "replace")


def _is_function_value(declarator) -> bool:
    value = declarator.child_by_field_name("value")
    return value is not None and value.type in ("arrow_function", "function_expression",
                                                "function", "generator_function")
