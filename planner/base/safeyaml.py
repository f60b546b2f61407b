"""YAML (and JSON) loading that counts: bounded size after alias expansion, bounded nesting, no duplicate
keys, no number too long to convert.

PyYAML's SafeLoader refuses arbitrary objects but not an alias bomb (`b: [*a, *a, ...]` nine levels deep
is a few hundred bytes and ~10^9 values once anything walks it), nor nesting deep enough to exhaust
Python's recursion, and it lets a repeated key silently win. The loader here counts each value as it is
composed, an alias as the size of what it refers to, and stops with the line and column of the problem.
"""

from __future__ import annotations

import json
import re

import yaml
from yaml.composer import Composer, ComposerError
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.events import AliasEvent
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.resolver import Resolver
from yaml.scanner import Scanner

from planner.base.limits import MAX_DOCUMENT_NODES, MAX_NESTING_DEPTH, MAX_QUANTITY_CHARS, short

_MERGE_TAG = "tag:yaml.org,2002:merge"


class YamlProblem(Exception):
    """Why a document was refused: the message, with line and column when known."""


class _Counting(Composer, SafeConstructor, Resolver):
    """The composer and constructor of yaml.SafeLoader, counting; the parser is libyaml's when present."""

    def __init__(self, stream: str):
        self._parser_init(stream)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)
        self._values = 0  # values composed so far, an alias counted as the size of its target
        self._depth = 0
        self._anchored: dict[int, int] = {}  # id(anchored node) -> its size after expansion

    def _parser_init(self, stream: str) -> None:
        raise NotImplementedError

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, AliasEvent):
            node = super().compose_node(parent, index)
            size = self._anchored.get(id(node))
            if size is None:
                raise ComposerError(
                    None, None, f"alias *{event.anchor} refers to a value that contains it", event.start_mark
                )
            self._count(size, event)
            return node
        self._depth += 1
        if self._depth > MAX_NESTING_DEPTH:
            raise ComposerError(None, None, f"nested more than {MAX_NESTING_DEPTH} levels deep", event.start_mark)
        before = self._values
        self._count(1, event)
        node = super().compose_node(parent, index)
        self._depth -= 1
        if event.anchor is not None:
            self._anchored[id(node)] = self._values - before
        return node

    def _count(self, size: int, event) -> None:
        self._values += size
        if self._values > MAX_DOCUMENT_NODES:
            problem = f"more than {MAX_DOCUMENT_NODES:,} values (counting each alias as what it repeats)"
            raise ComposerError(None, None, problem, event.start_mark)

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            _refuse_duplicate_keys(self, node)
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node):
        """A whole number longer than any quantity stays text: the field's own check then names the field
        and its range, and Python never converts a 100,000-digit string (which it refuses) or a long
        sexagesimal 1:2:3:... (which is slow)."""
        if len(node.value) > MAX_QUANTITY_CHARS:
            return self.construct_scalar(node)
        return super().construct_yaml_int(node)


_Counting.add_constructor("tag:yaml.org,2002:int", _Counting.construct_yaml_int)


class _PyLoader(_Counting, Reader, Scanner, Parser):
    def _parser_init(self, stream: str) -> None:
        Reader.__init__(self, stream)
        Scanner.__init__(self)
        Parser.__init__(self)


_Loader: type[_Counting] = _PyLoader
if yaml.__with_libyaml__:  # libyaml's parser is ~6x faster; PyYAML wheels include it
    from yaml._yaml import CParser

    class _CLoader(_Counting, CParser):  # Composer's methods come first: libyaml parses, Python composes
        def _parser_init(self, stream: str) -> None:
            CParser.__init__(self, stream)

    _Loader = _CLoader


def _refuse_duplicate_keys(loader: _Counting, node: yaml.MappingNode) -> None:
    """A key given twice in one mapping (merge keys `<<` may be overridden, as intended)."""
    seen: dict[object, int] = {}
    for key_node, _ in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE_TAG:
            continue
        key = loader.construct_object(key_node)
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key: the constructor reports it
            continue
        if first is not None:
            problem = f"key {short(key)} appears twice (first on line {first}); keep one"
            raise ConstructorError(None, None, problem, key_node.start_mark)
        seen[key] = key_node.start_mark.line + 1


def load_yaml(text: str, loader_class: type[_Counting] | None = None) -> object:
    """The document in text, or YamlProblem("line L, column C: problem")."""
    loader = (loader_class or _Loader)(text)
    try:
        return loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        raise YamlProblem(_marked(exc)) from None
    except yaml.YAMLError as exc:
        raise YamlProblem(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    finally:
        loader.dispose()


def _marked(exc: yaml.MarkedYAMLError) -> str:
    mark = exc.problem_mark or exc.context_mark
    problem = exc.problem or exc.context or "not valid YAML"
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem}" if mark else problem


# A JSON string (with its escapes) or one bracket: enough to measure nesting in one linear pass.
_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def load_json(text: str) -> object:
    """JSON with the same limits: nesting measured before parsing (the json module recurses), numbers
    longer than a quantity and NaN/Infinity refused."""
    depth = 0
    for token in _JSON_TOKENS.finditer(text):
        bracket = token.group()
        if bracket in "[{":
            depth += 1
            if depth > MAX_NESTING_DEPTH:
                line = text.count("\n", 0, token.start()) + 1
                raise YamlProblem(f"line {line}: nested more than {MAX_NESTING_DEPTH} levels deep")
        elif bracket in "]}":
            depth -= 1
    try:
        return json.loads(text, parse_int=_json_int, parse_float=_json_float, parse_constant=_json_constant)
    except json.JSONDecodeError as exc:
        raise YamlProblem(f"line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except _BadNumber as exc:
        raise YamlProblem(f"{_where_in_json(text, exc.literal)}{exc}") from None


class _BadNumber(ValueError):
    """A number the parse hooks refuse; `literal` is its text, to find its line and key afterwards (json's
    hooks are not told where they are)."""

    def __init__(self, message: str, literal: str):
        super().__init__(message)
        self.literal = literal


def _json_int(text: str) -> int:
    if len(text) > MAX_QUANTITY_CHARS:
        raise _BadNumber(f"a number of {len(text):,} digits; at most {MAX_QUANTITY_CHARS}", text)
    return int(text)


def _json_float(text: str) -> float:
    if len(text) > MAX_QUANTITY_CHARS:
        raise _BadNumber(f"a number of {len(text):,} characters; at most {MAX_QUANTITY_CHARS}", text)
    return float(text)


def _json_constant(text: str) -> float:
    raise _BadNumber(f"{text} is not a number JSON allows; write a finite number", text)


# A JSON string (a key when a colon follows) or a bare token (number, constant) outside strings
_JSON_VALUES = re.compile(r'"((?:[^"\\]|\\.)*)"(\s*:)?|[^\s"{}\[\],:]+')


def _where_in_json(text: str, literal: str) -> str:
    """'line L, key "k": ' for the first bare token equal to literal (json.loads parses left to right, so
    the first is the one it refused), naming the last key before it; '' if not found."""
    key = None
    for token in _JSON_VALUES.finditer(text):
        if token.group(2):
            key = token.group(1)
        elif token.group(1) is None and token.group() == literal:
            line = text.count("\n", 0, token.start()) + 1
            return f"line {line}, " + (f"key {short(key)}: " if key is not None else "")
    return ""
