"""Kernel source: find and parse a function's text, and format errors at the user's line.

Every error the compiler raises goes through ``KernelSource.error`` so that all of them read
alike: the message first, then ``File "...", line N, in name`` with the source line and a caret
under the offending node, then a hint of what to write instead.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
from dataclasses import dataclass

from ..errors import GpuKernelError, GpuKernelTypeError


@dataclass(frozen=True)
class SourceLoc:
    """A node's place in the user's file: absolute line, character columns on that line."""
    lineno: int
    col: int            # 0-based character column of the node start
    end_col: int        # character column where the underline ends (exclusive)

    def __repr__(self) -> str:
        return f"L{self.lineno}:{self.col}"


def _byte_to_char(line: str, byte_offset: int) -> int:
    return len(line.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore"))


def _indented_block(lines: list, start: int) -> list:
    """The decorators and ``def`` starting at ``lines[start]`` and every following line indented
    deeper than the ``def`` (blank and comment lines inside included, as Python's tokenizer
    ignores their indentation), or [] when there is no ``def``."""
    k = start
    while k < len(lines) and not lines[k].lstrip().startswith(("def ", "async def ")):
        text = lines[k].strip()
        if text and not text.startswith(("@", "#")):
            return []
        k += 1
    if k == len(lines):
        return []
    depth = len(lines[k]) - len(lines[k].lstrip())
    last = k
    for end in range(k + 1, len(lines)):
        line = lines[end]
        text = line.strip()
        if text and not text.startswith("#"):
            if len(line) - len(line.lstrip()) <= depth:
                break
            last = end
    return lines[start:last + 1]


class KernelSource:
    """The parsed source of one kernel function plus what is needed to point into it."""

    def __init__(self, fn):
        self.fn = fn
        self.name = getattr(fn, "__name__", "<kernel>")
        code = getattr(fn, "__code__", None)
        if code is None:
            raise GpuKernelTypeError(
                f"@Gpu expects a plain Python function, got {type(fn).__name__}")
        self.filename = code.co_filename
        error = None
        for lines, first in self._candidates(fn, code):
            indent = len(lines[0]) - len(lines[0].lstrip()) if lines else 0
            try:
                module = ast.parse(textwrap.dedent("".join(lines)))
                break
            except SyntaxError as exc:               # e.g. a lambda or a partial line
                error = exc
        else:
            if error is None:
                raise self._no_source(code)
            raise GpuKernelError(
                f"cannot parse the source of kernel {self.name} ({error.msg}); define the "
                f"kernel with 'def' in a file or notebook cell",
                self.filename, first) from None
        self.firstlineno = first
        self.lines = lines                       # the function's lines, as in the file
        self.indent = indent
        self.tree = self._find_def(module, code)

    # -- finding the source --------------------------------------------------------------
    def _candidates(self, fn, code):
        """Possible source blocks of the function, cheapest first: the lines its indentation
        delimits (no tokenizer: ``inspect`` compiles tokenize's regexes on first use, a good
        part of a first decoration: docs/performance.md, "Start-up and argument packing"), then
        ``inspect``'s. A block cut short by a string or bracket that
        spans a less-indented line does not parse, and the next candidate is tried."""
        all_lines = linecache.getlines(code.co_filename)
        start = code.co_firstlineno - 1
        if 0 <= start < len(all_lines):
            block = _indented_block(all_lines, start)
            if block:
                yield block, code.co_firstlineno
        try:
            lines, first = inspect.getsourcelines(fn)
            if lines:
                yield lines, max(first, 1)
                return
        except (OSError, TypeError):
            pass
        if all_lines:
            try:
                block = inspect.getblock(all_lines[start:])
                if block:
                    yield list(block), code.co_firstlineno
            except Exception:
                pass

    def _no_source(self, code) -> GpuKernelError:
        return GpuKernelError(
            f"source not available for kernel {self.name} (defined in {code.co_filename}); "
            f"@Gpu translates the function's source text, so define the kernel in a file or a "
            f"notebook cell (code run with 'python -c' or exec() of a string has no source)",
            code.co_filename, code.co_firstlineno)

    def _find_def(self, module: ast.Module, code) -> ast.FunctionDef:
        for node in ast.walk(module):
            if isinstance(node, ast.FunctionDef) and node.name == code.co_name:
                return node
            if isinstance(node, ast.AsyncFunctionDef) and node.name == code.co_name:
                self.error(node, f"kernel {self.name} is 'async def'",
                           "write a plain 'def' function", cls=GpuKernelTypeError)
        raise GpuKernelError(
            f"cannot find the 'def {code.co_name}' of kernel {self.name} in its source; define "
            f"the kernel with 'def' in a file or notebook cell", self.filename, self.firstlineno)

    # -- locations -------------------------------------------------------------------------
    def abs_line(self, node_lineno: int) -> int:
        return self.firstlineno + node_lineno - 1

    def line_text(self, abs_lineno: int) -> str:
        k = abs_lineno - self.firstlineno
        if 0 <= k < len(self.lines):
            return self.lines[k].rstrip("\r\n")
        return ""

    def loc(self, node: ast.AST) -> SourceLoc:
        lineno = getattr(node, "lineno", 1)
        absl = self.abs_line(lineno)
        raw = self.line_text(absl)
        dedented_line = raw[self.indent:] if raw[:self.indent].strip() == "" else raw.lstrip()
        col = _byte_to_char(dedented_line, getattr(node, "col_offset", 0) or 0)
        end_lineno = getattr(node, "end_lineno", lineno) or lineno
        if end_lineno == lineno and getattr(node, "end_col_offset", None) is not None:
            end = _byte_to_char(dedented_line, node.end_col_offset)
        else:
            end = len(dedented_line.rstrip())
        shift = len(raw) - len(dedented_line)
        return SourceLoc(absl, col + shift, max(end + shift, col + shift + 1))

    def source_of(self, abs_lineno: int) -> str:
        return self.line_text(abs_lineno).strip()

    def format_location(self, loc: SourceLoc) -> str:
        raw = self.line_text(loc.lineno)
        stripped = raw.lstrip()
        lead = len(raw) - len(stripped)
        block = f'  File "{self.filename}", line {loc.lineno}, in {self.name}'
        if stripped:
            width = min(loc.end_col, len(raw.rstrip())) - loc.col
            block += f"\n    {stripped.rstrip()}\n    {' ' * (loc.col - lead)}{'^' * max(width, 1)}"
        return block

    def error(self, node, message: str, hint: str | None = None, cls=GpuKernelError):
        """Raise ``cls`` located at ``node`` (an AST node or a SourceLoc)."""
        loc = node if isinstance(node, SourceLoc) else self.loc(node)
        text = f"{message}\n{self.format_location(loc)}"
        if hint:
            text += f"\nhint: {hint}"
        raise cls(text, self.filename, loc.lineno, loc.col + 1, self.line_text(loc.lineno))
