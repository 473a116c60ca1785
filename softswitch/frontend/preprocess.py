"""A C preprocessor for P4 sources, keeping an origin map from output positions to source files.

Supports ``#include "f"``/``<f>`` (current dir, ``-I`` dirs, then the built-in ``p4include``),
object- and function-like ``#define``, ``#undef``, ``#if/#ifdef/#ifndef/#elif/#else/#endif``
with integer expressions and ``defined``, ``#pragma once``, ``#error``, ``#line`` is ignored.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from .errors import PreprocessorError
from .ir import Loc

BUILTIN_INCLUDE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                   "p4include")
_MAX_INCLUDE_DEPTH = 64
_TOKEN_RE = re.compile(r"""[A-Za-z_][A-Za-z0-9_]*|\d[\w]*|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|\#\#|\s+|.""",
                       re.DOTALL)
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True, slots=True)
class LineOrigin:
    """Where one output line came from; ``cols`` maps output column ranges (sorted start
    columns, 0-based) to original 1-based columns when macro expansion moved text."""

    file: str
    line: int
    cols: tuple[tuple[int, int], ...] = ()  # (out_col0_start, orig_col1)


@dataclass(slots=True)
class OriginMap:
    """Maps (1-based output line, 1-based output column) to an original ``Loc``."""

    lines: list[LineOrigin] = field(default_factory=list)

    def loc(self, line: int, col: int) -> Loc:
        if not self.lines:
            return Loc("<input>", line, col)
        line = min(max(line, 1), len(self.lines))
        o = self.lines[line - 1]
        if not o.cols:
            return Loc(o.file, o.line, col)
        c0 = col - 1
        best = None
        for start, orig in o.cols:
            if start <= c0:
                best = (start, orig)
            else:
                break
        if best is None:
            return Loc(o.file, o.line, col)
        start, orig = best
        return Loc(o.file, o.line, orig + (c0 - start))

    def to_json(self) -> list:
        return [[o.file, o.line, [list(c) for c in o.cols]] for o in self.lines]

    @classmethod
    def from_json(cls, data: list) -> OriginMap:
        return cls([LineOrigin(f, n, tuple(tuple(c) for c in cols)) for f, n, cols in data])


@dataclass(slots=True)
class Macro:
    name: str
    params: list[str] | None  # None: object-like
    body: str
    variadic: bool = False


@dataclass(slots=True)
class Preprocessed:
    text: str
    origins: OriginMap
    files: list[str]


def _strip_comments(text: str, fname: str) -> str:
    """Replace comments by spaces (newlines kept) so lines and columns stay put."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                line = text.count("\n", 0, i) + 1
                col = i - text.rfind("\n", 0, i)
                raise PreprocessorError(Loc(fname, line, col), "unterminated comment")
            chunk = text[i:j + 2]
            out.append("".join("\n" if ch == "\n" else " " for ch in chunk))
            i = j + 2
        else:
            j = i
            while j < n and text[j] not in '"/':
                j += 1
            if j == i:
                j = i + 1
            out.append(text[i:j])
            i = j
    return "".join(out)


class _Preprocessor:
    def __init__(self, defines: dict[str, str], include_dirs: list[str]) -> None:
        self.macros: dict[str, Macro] = {}
        for k, v in defines.items():
            self.macros[k] = Macro(k, None, v)
        self.include_dirs = list(include_dirs)
        self.out_lines: list[str] = []
        self.origins: list[LineOrigin] = []
        self.files: list[str] = []
        self.once: set[str] = set()

    # ------------------------------------------------------------------ files
    def find_include(self, name: str, angled: bool, cur_dir: str) -> str | None:
        dirs = ([] if angled else [cur_dir]) + self.include_dirs + [BUILTIN_INCLUDE_DIR]
        for d in dirs:
            p = os.path.join(d, name)
            if os.path.isfile(p):
                return os.path.normpath(p)
        return None

    def run_file(self, path: str, display: str, depth: int, text: str | None = None) -> None:
        if depth > _MAX_INCLUDE_DEPTH:
            raise PreprocessorError(Loc(display, 1, 1), "#include nested too deeply")
        if text is None:
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except (OSError, UnicodeDecodeError) as e:
                raise PreprocessorError(None, f"cannot read {display}: {_read_error(e)}") from None
        self.files.append(display)
        text = _strip_comments(text.replace("\r\n", "\n"), display)
        lines = text.split("\n")
        cur_dir = os.path.dirname(path) or "."
        # cond stack entries: [active, taken_any, parent_active, seen_else, loc]
        conds: list[list] = []
        i = 0
        while i < len(lines):
            lineno = i + 1
            line = lines[i]
            # join continuation lines (directives and macro bodies)
            extra = 0
            while line.endswith("\\") and i + 1 + extra < len(lines):
                extra += 1
                line = line[:-1] + " " + lines[i + extra]
            active = all(c[0] for c in conds)
            stripped = line.lstrip()
            if stripped.startswith("#"):
                col = len(line) - len(stripped) + 1
                self.directive(stripped[1:].strip(), Loc(display, lineno, col), conds, active,
                               cur_dir, depth, path)
                for k in range(extra + 1):
                    self.emit("", display, lineno + k)
            elif active:
                # a function-like macro call may span lines: join until parens balance
                if self._has_open_call(line):
                    while self._has_open_call(line) and i + 1 + extra < len(lines):
                        extra += 1
                        line = line + " " + lines[i + extra]
                expanded, cols = self.expand_line(line, Loc(display, lineno, 1))
                self.out_lines.append(expanded)
                self.origins.append(LineOrigin(display, lineno, cols))
                for k in range(extra):
                    self.emit("", display, lineno + k + 1)
            else:
                for k in range(extra + 1):
                    self.emit("", display, lineno + k)
            i += extra + 1
        if conds:
            raise PreprocessorError(conds[-1][4], "#if without #endif")

    def emit(self, text: str, fname: str, line: int) -> None:
        self.out_lines.append(text)
        self.origins.append(LineOrigin(fname, line))

    def _has_open_call(self, line: str) -> bool:
        toks = [t for t in _TOKEN_RE.findall(line)]
        depth = 0
        for k, t in enumerate(toks):
            if t in self.macros and self.macros[t].params is not None:
                rest = [x for x in toks[k + 1:] if not x.isspace()]
                if rest and rest[0] == "(":
                    depth = 0
                    for x in toks[k + 1:]:
                        if x == "(":
                            depth += 1
                        elif x == ")":
                            depth -= 1
                    if depth > 0:
                        return True
        return False

    # ------------------------------------------------------------------ directives
    def directive(self, d: str, loc: Loc, conds: list[list], active: bool, cur_dir: str,
                  depth: int, path: str) -> None:
        m = re.match(r"([A-Za-z_]+)\s*(.*)$", d, re.DOTALL)
        if not m:
            if not d or not active:
                return
            raise PreprocessorError(loc, f"invalid preprocessor directive '#{d}'")
        name, rest = m.group(1), m.group(2).strip()
        if name in ("if", "ifdef", "ifndef"):
            if not active:
                conds.append([False, True, False, False, loc])
                return
            if name == "if":
                val = self.eval_if(rest, loc)
            else:
                ident = rest.split()[0] if rest.split() else ""
                if not _IDENT_RE.match(ident):
                    raise PreprocessorError(loc, f"#{name} needs a macro name")
                val = (ident in self.macros) == (name == "ifdef")
            conds.append([val, val, True, False, loc])
            return
        if name in ("elif", "else", "endif"):
            if not conds:
                raise PreprocessorError(loc, f"#{name} without #if")
            c = conds[-1]
            if name == "endif":
                conds.pop()
                return
            if c[3]:
                raise PreprocessorError(loc, f"#{name} after #else")
            if name == "else":
                c[3] = True
                c[0] = c[2] and not c[1]
                c[1] = True
            else:
                if c[2] and not c[1]:
                    c[0] = self.eval_if(rest, loc)
                    c[1] = c[0]
                else:
                    c[0] = False
            return
        if not active:
            return
        if name == "include":
            mm = re.match(r'"([^"]+)"|<([^>]+)>', rest)
            if not mm:
                expanded, _ = self.expand_line(rest, loc)
                mm = re.match(r'\s*"([^"]+)"|\s*<([^>]+)>', expanded)
                if not mm:
                    raise PreprocessorError(loc, f"bad #include '{rest}'")
            fname = mm.group(1) or mm.group(2)
            found = self.find_include(fname, mm.group(2) is not None, cur_dir)
            if found is None:
                raise PreprocessorError(loc, f"cannot find include file '{fname}'")
            if found in self.once:
                return
            shown = found if not found.startswith(BUILTIN_INCLUDE_DIR) else fname
            self.run_file(found, shown, depth + 1)
            return
        if name == "define":
            self.define(rest, loc)
        elif name == "undef":
            self.macros.pop(rest.split()[0] if rest else "", None)
        elif name == "pragma":
            if rest.strip() == "once":
                self.once.add(os.path.normpath(path))
        elif name == "error":
            raise PreprocessorError(loc, f"#error {rest}")
        elif name in ("warning", "line"):
            pass
        else:
            raise PreprocessorError(loc, f"unknown preprocessor directive '#{name}'")

    def define(self, rest: str, loc: Loc) -> None:
        m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)(\(([^)]*)\))?\s*(.*)$", rest, re.DOTALL)
        if not m:
            raise PreprocessorError(loc, "#define needs a macro name")
        name = m.group(1)
        if m.group(2) is not None:
            params = [p.strip() for p in m.group(3).split(",") if p.strip()]
            variadic = bool(params) and params[-1] == "..."
            if variadic:
                params[-1] = "__VA_ARGS__"
            for p in params:
                if not _IDENT_RE.match(p):
                    raise PreprocessorError(loc, f"bad macro parameter '{p}'")
            self.macros[name] = Macro(name, params, m.group(4).strip(), variadic)
        else:
            self.macros[name] = Macro(name, None, m.group(4).strip())

    # ------------------------------------------------------------------ expansion
    def expand_line(self, line: str, loc: Loc) -> tuple[str, tuple[tuple[int, int], ...]]:
        """Expand macros in one line; returns text and the column map (empty if unchanged)."""
        toks = _TOKEN_RE.findall(line)
        if not any(t in self.macros for t in toks):
            return line, ()
        out: list[str] = []
        cols: list[tuple[int, int]] = []
        pos_out = 0
        pos_in = 0
        k = 0
        while k < len(toks):
            t = toks[k]
            if t in self.macros:
                repl, consumed = self.expand_at(toks, k, frozenset(), loc)
                if repl is not None:
                    cols.append((pos_out, pos_in + 1))
                    out.append(repl)
                    pos_out += len(repl)
                    width = sum(len(x) for x in toks[k:k + consumed])
                    pos_in += width
                    k += consumed
                    cols.append((pos_out, pos_in + 1))
                    continue
            out.append(t)
            pos_out += len(t)
            pos_in += len(t)
            k += 1
        return "".join(out), tuple(cols)

    def expand_at(self, toks: list[str], k: int, hide: frozenset, loc: Loc) -> tuple[str | None, int]:
        """Expand the macro named by toks[k]; returns (text, number of tokens consumed)."""
        mac = self.macros[toks[k]]
        if mac.name in hide:
            return None, 1
        if mac.params is None:
            return self.expand_text(mac.body, hide | {mac.name}, loc), 1
        j = k + 1
        while j < len(toks) and toks[j].isspace():
            j += 1
        if j >= len(toks) or toks[j] != "(":
            return None, 1
        args: list[str] = []
        cur: list[str] = []
        depth = 0
        j += 1
        while j < len(toks):
            t = toks[j]
            if t == "(":
                depth += 1
            elif t == ")":
                if depth == 0:
                    break
                depth -= 1
            elif t == "," and depth == 0 and not (mac.variadic and len(args) == len(mac.params) - 1):
                args.append("".join(cur).strip())
                cur = []
                j += 1
                continue
            cur.append(t)
            j += 1
        if j >= len(toks):
            raise PreprocessorError(loc, f"unterminated call of macro '{mac.name}'")
        args.append("".join(cur).strip())
        if len(mac.params) == 0 and args == [""]:
            args = []
        if len(args) != len(mac.params):
            raise PreprocessorError(loc, f"macro '{mac.name}' takes {len(mac.params)} arguments,"
                                         f" {len(args)} given")
        body_toks = _TOKEN_RE.findall(mac.body)
        res: list[str] = []
        b = 0
        while b < len(body_toks):
            t = body_toks[b]
            if t == "#" and b + 1 < len(body_toks) and body_toks[b + 1] in mac.params:
                res.append('"' + args[mac.params.index(body_toks[b + 1])].replace('"', '\\"') + '"')
                b += 2
                continue
            if t in mac.params:
                nxt = [x for x in body_toks[b + 1:] if not x.isspace()]
                prev = [x for x in res if not x.isspace()]
                raw = args[mac.params.index(t)]
                if (nxt and nxt[0] == "##") or (prev and prev[-1] == "##"):
                    res.append(raw)
                else:
                    res.append(self.expand_text(raw, hide, loc))
                b += 1
                continue
            res.append(t)
            b += 1
        text = re.sub(r"\s*##\s*", "", "".join(res))
        return self.expand_text(text, hide | {mac.name}, loc), j - k + 1

    def expand_text(self, text: str, hide: frozenset, loc: Loc) -> str:
        toks = _TOKEN_RE.findall(text)
        out: list[str] = []
        k = 0
        while k < len(toks):
            t = toks[k]
            if t in self.macros and t not in hide:
                repl, consumed = self.expand_at(toks, k, hide, loc)
                if repl is not None:
                    out.append(repl)
                    k += consumed
                    continue
            out.append(t)
            k += 1
        return "".join(out)

    # ------------------------------------------------------------------ #if expressions
    def eval_if(self, expr: str, loc: Loc) -> bool:
        # replace defined(X) / defined X before expansion
        def repl(m: re.Match) -> str:
            return "1" if m.group(1) or m.group(2) in self.macros and True else "0"

        expr = re.sub(r"\bdefined\s*\(\s*([A-Za-z_]\w*)\s*\)|\bdefined\s+([A-Za-z_]\w*)",
                      lambda m: "1" if (m.group(1) or m.group(2)) in self.macros else "0", expr)
        expr = self.expand_text(expr, frozenset(), loc)
        return _IfExpr(expr, loc).value() != 0


class _IfExpr:
    """Evaluates a C integer constant expression (undefined identifiers are 0)."""

    _BIN = (("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", "<=", ">", ">="),
            ("<<", ">>"), ("+", "-"), ("*", "/", "%"))

    def __init__(self, text: str, loc: Loc) -> None:
        self.loc = loc
        self.toks = re.findall(r"0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*|[A-Za-z_]\w*|\|\||&&|==|!=|<=|>=|<<|>>|\S",
                               text)
        self.i = 0

    def fail(self, what: str) -> PreprocessorError:
        return PreprocessorError(self.loc, f"bad #if expression: {what}")

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def value(self) -> int:
        if not self.toks:
            raise self.fail("empty")
        v = self.ternary()
        if self.peek() is not None:
            raise self.fail(f"unexpected '{self.peek()}'")
        return v

    def ternary(self) -> int:
        c = self.binary(0)
        if self.peek() == "?":
            self.i += 1
            a = self.ternary()
            if self.peek() != ":":
                raise self.fail("expected ':'")
            self.i += 1
            b = self.ternary()
            return a if c else b
        return c

    def binary(self, level: int) -> int:
        if level == len(self._BIN):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek() in self._BIN[level]:
            op = self.toks[self.i]
            self.i += 1
            right = self.binary(level + 1)
            try:
                left = {"||": lambda a, b: int(bool(a) or bool(b)), "&&": lambda a, b: int(bool(a) and bool(b)),
                        "|": lambda a, b: a | b, "^": lambda a, b: a ^ b, "&": lambda a, b: a & b,
                        "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b),
                        "<": lambda a, b: int(a < b), "<=": lambda a, b: int(a <= b),
                        ">": lambda a, b: int(a > b), ">=": lambda a, b: int(a >= b),
                        "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b,
                        "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
                        "/": lambda a, b: int(a / b), "%": lambda a, b: a % b}[op](left, right)
            except ZeroDivisionError:
                raise self.fail("division by zero") from None
        return left

    def unary(self) -> int:
        t = self.peek()
        if t is None:
            raise self.fail("unexpected end")
        self.i += 1
        if t == "!":
            return int(not self.unary())
        if t == "-":
            return -self.unary()
        if t == "+":
            return self.unary()
        if t == "~":
            return ~self.unary()
        if t == "(":
            v = self.ternary()
            if self.peek() != ")":
                raise self.fail("expected ')'")
            self.i += 1
            return v
        if t[0].isdigit():
            return int(t.rstrip("uUlL"), 0) if not re.match(r"0\d", t) else int(t.rstrip("uUlL"), 8)
        if t[0].isalpha() or t[0] == "_":
            return 0
        raise self.fail(f"unexpected '{t}'")


def preprocess_source(text: str, filename: str, defines: dict[str, str] | None = None,
                      include_dirs: list[str] | None = None) -> Preprocessed:
    """Preprocess ``text`` (named ``filename`` in errors and the origin map)."""
    pp = _Preprocessor(dict(defines or {}), list(include_dirs or []))
    pp.run_file(os.path.abspath(filename) if os.path.exists(filename) else filename, filename, 0, text)
    return Preprocessed("\n".join(pp.out_lines) + "\n", OriginMap(pp.origins), pp.files)


def _read_error(e: OSError | UnicodeDecodeError) -> str:
    """Why a file could not be read, once: ``No such file or directory`` (the OSError's text named the
    path a second time, ``[Errno 2] ...: '/x.p4'``), or where its bytes stop being UTF-8."""
    if isinstance(e, UnicodeDecodeError):
        return f"not UTF-8 text (byte {e.object[e.start]:#04x} at offset {e.start})"
    return e.strerror or str(e)


def preprocess_file(path: str, defines: dict[str, str] | None = None,
                    include_dirs: list[str] | None = None) -> Preprocessed:
    """Preprocess the file at ``path``."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise PreprocessorError(None, f"cannot read {path}: {_read_error(e)}") from None
    return preprocess_source(text, path, defines, include_dirs)
