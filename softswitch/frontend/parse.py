"""Parse preprocessed P4_16 text into a lark tree (LALR, with a token post-pass that tells type
names from other identifiers, as p4c's lexer does)."""
from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator
from functools import lru_cache

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from .errors import P4SyntaxError
from .preprocess import OriginMap

_GRAMMAR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "p4.lark")
# type variables of the built-in core.p4 / v1model.p4
_BUILTIN_TYPE_VARS = ("_HDR", "_I", "_T", "_O", "_D", "_M", "_H")
_DECL_KW = {"HEADER", "STRUCT", "HEADER_UNION", "CONTROL", "PARSER", "PACKAGE"}
_TYPE_START = {"TYPE_IDENT", "BIT", "INT", "BOOL", "VARBIT", "ERROR", "TUPLE", "STRING_KW", "DONTCARE"}
# tokens that can end a type reference, so that an identifier right after them is being declared
_TYPE_END = {"TYPE_IDENT", "BIT", "INT", "BOOL", "ERROR", "STRING_KW", "VOID"}


@lru_cache(maxsize=1)
def _lark() -> Lark:
    with open(_GRAMMAR, encoding="utf-8") as f:
        grammar = f.read()
    return Lark(grammar, parser="lalr", lexer="basic", propagate_positions=True,
                maybe_placeholders=False, cache=False)


class _PostLex:
    """Re-types tokens: TYPE_IDENT, TARG_OPEN, ANNOT_BODY, table property keywords.

    Like p4c's lexer, an identifier is a TYPE_IDENT when it names a type *in scope*: a field,
    parameter, variable or instance declared with a type's name hides that type until the end
    of its block (parameters: until the end of the body that follows them).
    """

    always_accept = ()

    def __init__(self, text: str) -> None:
        self.text = text
        self.types: set[str] = set(_BUILTIN_TYPE_VARS)

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        buf: deque[Token] = deque()
        it = iter(stream)

        def peek(k: int = 0) -> Token | None:
            while len(buf) <= k:
                try:
                    buf.append(next(it))
                except StopIteration:
                    return None
            return buf[k]

        def take() -> Token | None:
            if buf:
                return buf.popleft()
            return next(it, None)

        prev: Token | None = None
        decl_next = False  # next IDENT is the name of a type being declared
        enum_pending = False
        extern_pending = False
        typedef_pending = False
        targ_decl_depth = 0  # inside <...> of a generic declaration
        decl_name_emitted = False
        table_depth = -1  # brace depth at which the current table body opened
        depth = 0
        table_pending = False
        angles = 0  # open type-argument / width brackets
        closed_angle = False  # the previous token is a '>' that closed type arguments
        paren = 0
        hidden: list[set[str]] = [set()]  # per brace depth: type names hidden by declarations
        pending: set[str] = set()  # type names declared as parameters, hidden in the next body
        while True:
            tok = take()
            if tok is None:
                return
            t = tok.type
            v = tok.value
            if t == "TYPE_KW":  # 'type' is also a name, as p4c allows (a field 'type', h.type)
                nxt = peek()
                if prev is not None and prev.value == "." and prev.type != "STRING" or \
                        nxt is not None and nxt.type != "STRING" and nxt.value in (";", "=", ")", ",", ":", "]"):
                    tok = Token.new_borrow_pos("IDENT", v, tok)
                    t = "IDENT"
            out = tok
            if prev is not None and prev.value == "@" and prev.type != "STRING":
                # annotation name (may be a keyword) and optional body: (unstructured) or
                # [structured] (P4_16 spec 18.2), kept as the text between the brackets
                out = Token.new_borrow_pos("IDENT", v, tok)
                nxt = peek()
                if nxt is not None and nxt.value in ("(", "[") and nxt.type != "STRING":
                    opener = nxt.value
                    closer = ")" if opener == "(" else "]"
                    take()
                    level = 1
                    last = nxt
                    while level:
                        x = take()
                        if x is None:
                            raise UnexpectedEOF([closer])
                        if x.type != "STRING":
                            if x.value == opener:
                                level += 1
                            elif x.value == closer:
                                level -= 1
                        last = x
                    body = self.text[nxt.end_pos:last.start_pos].strip()
                    yield out
                    prev = out
                    kind = "ANNOT_BODY" if opener == "(" else "ANNOT_SBODY"
                    ann = Token(kind, body, nxt.start_pos, nxt.line, nxt.column,
                                last.end_line, last.end_column, last.end_pos)
                    yield ann
                    prev = ann
                    continue
            elif t == "IDENT":
                nxt = peek()
                nv = nxt.value if nxt is not None else None
                if depth == 0 and not paren and v not in self.types and nxt is not None \
                        and nxt.type == "IDENT" and (prev is None or prev.value in (";", "}") or
                                                     prev.type in ("ANNOT_BODY", "EXTERN") or
                                                     prev.type == "IDENT"):
                    self._generic_return_type(v, peek)
                declared = v in self.types and prev is not None and (
                    (prev.type in _TYPE_END or closed_angle) and nv != "(" and nv != "<"
                    or prev.value == ")" and prev.type != "STRING" and nv == ";"
                    or prev.type in ("ACTION", "TABLE"))
                if declared:
                    (pending if paren else hidden[-1]).add(v)
                elif targ_decl_depth:
                    self.types.add(v)
                elif decl_next or (enum_pending and not (prev is not None and prev.value == "<")):
                    self.types.add(v)
                    decl_next = enum_pending = False
                    decl_name_emitted = True
                    out = tok
                elif extern_pending and prev is not None and prev.type == "EXTERN":
                    if nv in ("{", "<"):
                        self.types.add(v)
                        decl_name_emitted = True
                    elif v in self.types:  # `extern T f<T>(...)`: T is the return type
                        out = Token.new_borrow_pos("TYPE_IDENT", v, tok)
                    extern_pending = False
                elif typedef_pending and nv == ";":
                    self.types.add(v)
                    typedef_pending = False
                elif table_depth >= 0 and depth == table_depth + 1 and v in ("key", "actions", "entries") \
                        and nv == "=":
                    out = Token.new_borrow_pos("KW_" + v.upper(), v, tok)
                elif table_depth >= 0 and v == "priority" and nv == "=":
                    out = Token.new_borrow_pos("PRIORITY_KW", v, tok)
                elif v in self.types and not any(v in h for h in hidden) and not (
                        nv == "." and (prev is None or prev.value != ".")
                        and (peek(1) is not None and peek(1).value == "apply" and peek(1).type != "STRING")):
                    # 'Ctl.apply(...)' (direct application of a control type) stays a name
                    out = Token.new_borrow_pos("TYPE_IDENT", v, tok)
                if extern_pending and nv == "(":
                    extern_pending = False  # function name: its type params follow "<"
                    decl_name_emitted = True
                elif nv in ("(", "<") and prev is not None and (prev.type in _TYPE_START or prev.type == "VOID"
                                                        or prev.value == ">"):
                    decl_name_emitted = True  # function / method prototype name
            elif t in _DECL_KW:
                decl_next = True
            elif t == "ENUM":
                enum_pending = True
            elif t == "EXTERN":
                extern_pending = True
            elif t in ("TYPEDEF", "TYPE_KW"):
                typedef_pending = True
            elif t == "TABLE":
                table_pending = True
            elif v == "<" and t != "STRING":
                nxt = peek()
                if nxt is not None and nxt.type == "IDENT" and nxt.value in self.types:
                    nxt_is_type = not any(nxt.value in h for h in hidden)
                else:
                    nxt_is_type = nxt is not None and nxt.type in _TYPE_START
                if nxt_is_type:
                    after = peek(1)
                    if after is not None and after.value == "." and after.type != "STRING":
                        nxt_is_type = False  # `a < E.x`: a comparison with an enum/error member
                if decl_name_emitted and prev is not None and prev.type in ("IDENT", "TYPE_IDENT"):
                    out = Token.new_borrow_pos("TARG_OPEN", v, tok)
                    targ_decl_depth = 1
                    angles += 1
                elif prev is not None and (prev.type in ("IDENT", "TYPE_IDENT", "TUPLE", "VALUE_SET")) \
                        and nxt_is_type:
                    out = Token.new_borrow_pos("TARG_OPEN", v, tok)
                    angles += 1
                elif prev is not None and prev.type in ("BIT", "INT", "VARBIT"):
                    angles += 1
            elif v == ">" and t != "STRING":
                if angles:
                    angles -= 1
                    targ_decl_depth = 0
                    yield out
                    prev = out
                    closed_angle = True
                    continue
                else:
                    nxt = peek()
                    if nxt is not None and nxt.value == ">" and nxt.start_pos == tok.end_pos:
                        take()
                        out = Token("SHR", ">>", tok.start_pos, tok.line, tok.column, nxt.end_line,
                                    nxt.end_column, nxt.end_pos)
            elif v == "{" and t != "STRING":
                depth += 1
                hidden.append(pending if not paren else set())
                pending = set()
                if table_pending:
                    table_depth = depth - 1
                    table_pending = False
            elif v == "}" and t != "STRING":
                depth -= 1
                if len(hidden) > 1:
                    hidden.pop()
                if depth == table_depth:
                    table_depth = -1
            elif v == "(" and t != "STRING":
                paren += 1
            elif v == ")" and t != "STRING":
                paren = max(0, paren - 1)
            elif v == ";" and t != "STRING" and not paren:
                pending = set()
            if v in ("(", "{", ";") and t != "STRING" and not targ_decl_depth:
                decl_name_emitted = False
            yield out
            prev = out
            closed_angle = False


    def _generic_return_type(self, ret: str, peek) -> None:
        """``T f<T>(...)`` at the top level: the return type is a type parameter declared after
        it (p4c's grammar takes an identifier there).  When the identifier after the next one
        opens type parameters that name it, those become types before the return type is
        emitted, so it lexes as a type."""
        after = peek(1)
        if after is None or after.value != "<" or after.type == "STRING":
            return
        names: list[str] = []
        k = 2
        while True:
            x = peek(k)
            if x is None or x.type == "STRING" or x.value not in (",",) and x.type != "IDENT":
                break
            if x.type == "IDENT":
                names.append(x.value)
            k += 1
        x = peek(k)
        if x is None or x.value != ">" or peek(k + 1) is None or peek(k + 1).value != "(":
            return
        if ret in names:
            self.types.update(names)


def parse_text(text: str, origins: OriginMap) -> Tree:
    """Parse preprocessed text; syntax errors are reported at the original location."""
    post = _PostLex(text)
    lark = _lark()
    try:
        tokens = post.process(lark.lex(text, dont_ignore=False))
        return _normalise(_parse_tokens(lark, tokens))
    except UnexpectedToken as e:
        tok = e.token
        if tok.type == "$END":
            raise P4SyntaxError(origins.loc(_last_line(text), 1), "syntax error: unexpected end of input") \
                from None
        raise P4SyntaxError(origins.loc(tok.line, tok.column), f"syntax error: unexpected '{tok.value}'") \
            from None
    except UnexpectedCharacters as e:
        raise P4SyntaxError(origins.loc(e.line, e.column),
                            f"syntax error: unexpected character {text[e.pos_in_stream]!r}") from None
    except UnexpectedEOF:
        raise P4SyntaxError(origins.loc(_last_line(text), 1), "syntax error: unexpected end of input") \
            from None
    except UnexpectedInput as e:
        raise P4SyntaxError(origins.loc(getattr(e, "line", 1), getattr(e, "column", 1)),
                            "syntax error") from None


def _normalise(tree: Tree) -> Tree:
    """``G<A>.apply(args);`` as a statement (its own grammar rule: a statement starting with a
    type is otherwise a declaration) becomes the call statement it is, shaped as any other."""
    for st in tree.iter_subtrees():
        if st.data == "spec_apply_stmt":
            kids = [c for c in st.children if isinstance(c, Tree) and c.data != "annotations"]
            spec, mname, args = kids
            member = Tree("spec_type_member", [spec, mname], meta=spec.meta)
            st.children = [Tree("call_expr", [member, args], meta=st.meta)]
            st.data = "call_stmt"
    return tree


def _last_line(text: str) -> int:
    return max(1, text.rstrip().count("\n") + 1)


def _parse_tokens(lark: Lark, tokens: Iterator[Token]) -> Tree:
    """Feed an already post-processed token stream to lark's LALR parser."""
    interactive = lark.parse_interactive("")
    for tok in tokens:
        interactive.feed_token(tok)
    return interactive.feed_eof()
