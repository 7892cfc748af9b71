"""Source code: the file as text (LF), with the programming language set for the code chunker."""

from __future__ import annotations

import re
from pathlib import Path

from docqa.ingest.readers.base import Reader
from docqa.ingest.readers.text import decode_source
from docqa.types import Document

LANGUAGES = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".go": "go", ".java": "java", ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp", ".hpp": "cpp", ".hh": "cpp",
    ".hxx": "cpp", ".ipp": "cpp", ".rs": "rust",
    ".sh": "bash", ".bash": "bash", ".zsh": "bash", ".ksh": "bash",
    ".rb": "ruby", ".php": "php", ".cs": "csharp", ".kt": "kotlin", ".kts": "kotlin",
    ".swift": "swift", ".scala": "scala", ".sc": "scala", ".lua": "lua", ".sql": "sql",
    ".r": "r", ".pl": "perl", ".pm": "perl", ".m": "objc", ".mm": "objc", ".dart": "dart",
    ".ex": "elixir", ".exs": "elixir", ".erl": "erlang", ".hs": "haskell", ".ml": "ocaml",
    ".clj": "clojure", ".groovy": "groovy", ".gradle": "groovy", ".jl": "julia",
    ".ps1": "powershell", ".bat": "batch", ".cmd": "batch", ".vue": "vue", ".svelte": "svelte",
    ".css": "css", ".scss": "scss", ".sass": "sass", ".less": "less", ".proto": "protobuf",
    ".tf": "hcl", ".hcl": "hcl", ".zig": "zig", ".nim": "nim", ".f90": "fortran",
    ".asm": "asm", ".s": "asm", ".cmake": "cmake", ".mk": "make", ".graphql": "graphql",
}
FILENAMES = {
    "makefile": "make", "gnumakefile": "make", "dockerfile": "dockerfile",
    "containerfile": "dockerfile", "cmakelists.txt": "cmake", "rakefile": "ruby",
    "gemfile": "ruby", "vagrantfile": "ruby", "jenkinsfile": "groovy", "justfile": "make",
}
_INTERPRETERS = {
    "python": "python", "python2": "python", "python3": "python", "node": "javascript",
    "deno": "typescript", "bun": "javascript", "sh": "bash", "bash": "bash", "zsh": "bash",
    "dash": "bash", "ksh": "bash", "ruby": "ruby", "perl": "perl", "php": "php", "lua": "lua",
    "rscript": "r", "pwsh": "powershell",
}
_SHEBANG = re.compile(rb"^#![ \t]*(\S+)(?:[ \t]+(?:-\S+[ \t]+)*(\S+))?")


def shebang_language(head: bytes) -> str | None:
    """The language a `#!` line names (`#!/usr/bin/env python3` → python), or None."""
    match = _SHEBANG.match(head)
    if not match:
        return None
    program = match.group(1).rsplit(b"/", 1)[-1]
    if program == b"env" and match.group(2):
        program = match.group(2).rsplit(b"/", 1)[-1]
    name = re.sub(r"[\d.]+$", "", program.decode("ascii", "replace").lower())
    return _INTERPRETERS.get(name) or _INTERPRETERS.get(program.decode("ascii", "replace").lower())


def code_language(path: Path, head: bytes = b"") -> str | None:
    """Language from the extension, the file name, or the shebang line."""
    return (LANGUAGES.get(path.suffix.lower()) or FILENAMES.get(path.name.lower())
            or shebang_language(head))


class CodeReader(Reader):
    """Source code in any language of LANGUAGES; extension-less scripts by their shebang."""

    type = "code"
    extensions = tuple(LANGUAGES)
    filenames = tuple(FILENAMES)

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        return path.suffix == "" and shebang_language(head) is not None

    def read(self, path: Path, data: bytes) -> Document:
        text, encoding = decode_source(path, data)
        language = code_language(path, data[:256])
        return Document(path=str(path), type=self.type, text=text, language=language,
                        metadata={"encoding": encoding, "lines": text.count("\n") + 1})
