"""Normalized forms of a source for deduplication.

`ast_hash`: sha256 of the AST after docstrings are dropped and every identifier the source
binds (classes, functions, parameters, variables, import aliases) is renamed to v0, v1, ...
in order of first appearance. Attribute names, keyword-argument names, module paths in
imports, literals and unbound builtins (`len`, `super`) are kept. Comments never reach the
AST. Two copies of a module that differ only in names, comments, docstrings or formatting
hash the same.

`tokens`: the token stream of the docstring-free source with identifiers mapped to ID,
numbers to NUM and strings to STR; keywords, operators, attribute names (a name after `.`)
and unbound builtins are kept. extract emits it twice: `tokens` of the whole self-contained
source and `class_tokens` of the module class's own ClassDef only (the input of MinHash over
token 5-grams, so that inlined helpers shared by unrelated modules do not make them alike).
"""

from __future__ import annotations

import ast
import hashlib
import io
import keyword
import tokenize

from kernelsmith_curate.scope import BUILTIN_NAMES
from kernelsmith_curate.strip import strip_docstrings


def _bound_names(tree: ast.AST) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.alias):
            out.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            out.update(node.names)
    return out


class _Renamer(ast.NodeVisitor):
    def __init__(self, bound: set[str]) -> None:
        self.bound = bound
        self.names: dict[str, str] = {}

    def _map(self, name: str) -> str:
        if name not in self.bound:
            return name
        return self.names.setdefault(name, f"v{len(self.names)}")

    def visit_Name(self, node: ast.Name) -> None:
        node.id = self._map(node.id)

    def visit_arg(self, node: ast.arg) -> None:
        node.arg = self._map(node.arg)
        self.generic_visit(node)

    def visit_alias(self, node: ast.alias) -> None:
        if node.asname:
            node.asname = self._map(node.asname)

    def _visit_def(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        node.name = self._map(node.name)
        self.generic_visit(node)

    visit_FunctionDef = _visit_def
    visit_AsyncFunctionDef = _visit_def
    visit_ClassDef = _visit_def

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            node.name = self._map(node.name)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        node.names = [self._map(n) for n in node.names]

    visit_Nonlocal = visit_Global


def normalized_tree(source: str) -> ast.Module:
    tree = strip_docstrings(ast.parse(source))
    _Renamer(_bound_names(tree)).visit(tree)
    return tree


def ast_hash(source: str) -> str:
    """Hex sha256 of the normalized AST. Raises SyntaxError."""
    dump = ast.dump(normalized_tree(source), annotate_fields=False, include_attributes=False)
    return hashlib.sha256(dump.encode("utf-8")).hexdigest()


def tokens(source: str) -> list[str]:
    """The normalized token stream. Raises SyntaxError."""
    tree = strip_docstrings(ast.parse(source))
    bound = _bound_names(tree)
    text = ast.unparse(tree)
    out: list[str] = []
    prev = ""
    skip = {tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.COMMENT,
            tokenize.ENDMARKER, tokenize.ENCODING}
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type in skip:
            continue
        if tok.type == tokenize.NAME:
            if keyword.iskeyword(tok.string) or prev == ".":
                t = tok.string
            elif tok.string in BUILTIN_NAMES and tok.string not in bound:
                t = tok.string
            else:
                t = "ID"
        elif tok.type == tokenize.NUMBER:
            t = "NUM"
        elif tok.type == tokenize.STRING:
            t = "STR"
        else:
            t = tok.string
        out.append(t)
        prev = tok.string
    return out
