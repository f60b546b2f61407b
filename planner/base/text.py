"""Text a person can trust: what input text may hold, and how output shows what it must not hide.

Names come from vendor workbooks, web pages and e-mails, and some characters in them change what a reader
sees without being seen themselves:

- control characters (C0 but tab/LF/CR, DEL, C1, U+FFFE/U+FFFF): they break the XLSX writer and drive
  terminals. Refused everywhere.
- invisible and direction-changing characters: the bidirectional embeddings, overrides and isolates
  (U+202A-U+202E, U+2066-U+2069; "Trojan Source", CVE-2021-42574: a U+202E makes "Quote $1000" read with
  its digits reordered), the directional marks (U+200E, U+200F, U+061C), the line and paragraph separators
  (U+2028, U+2029, which editors and some terminals break lines on) and the zero-width spaces (U+200B,
  U+2060, U+FEFF, which make two different names look alike). Refused at load with the file, row and
  column, unless the user keeps them (`planner --keep-invisible`, for right-to-left names that need marks).
- line breaks: a name is one line; a carriage return not followed by a line feed returns the cursor and
  hides the start of the line it is printed on. Refused in one-line fields (every field but a catalog
  row's notes), and a bare CR refused in notes too.

On output, `visible` is the one guard: every text planner prints (cli.base.echo), writes to CSV
(report.csvtext) or to a workbook (report.xlsx.put) shows each such character as an escape (`\\u202e`,
`\\r`), never raw and never silently dropped. JSON escapes them itself (json.dumps' ensure_ascii).
"""

from __future__ import annotations

import re
import unicodedata

from planner.base.limits import MAX_CELL_CHARS, MAX_LIST_ITEMS

_CONTROL_CLASS = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff"
_INVISIBLE_CLASS = "\u061c\u200b\u200e\u200f\u2028\u2029\u202a-\u202e\u2060\u2066-\u2069\ufeff"
_CONTROL = re.compile(f"[{_CONTROL_CLASS}]")
_INVISIBLE = re.compile(f"[{_INVISIBLE_CLASS}]")
_LINE_BREAK = re.compile("[\r\n]")
_BARE_CR = re.compile("\r(?!\n)")
# Anything text might be refused for or escaped for (a row's cells are searched at once, joined by tab)
_ANY = re.compile(f"[{_CONTROL_CLASS}{_INVISIBLE_CLASS}\r\n]")
_CONTROL_NAMES = {0x00: "NUL", 0x07: "BEL", 0x08: "BS", 0x0A: "LF", 0x0D: "CR", 0x1B: "ESC", 0x7F: "DEL"}

MULTILINE_COLUMNS = frozenset({"notes"})  # catalog columns that may hold line feeds

_keep_invisible = False


def keep_invisible(keep: bool) -> None:
    """Accept (True) or refuse (False, the default) invisible and direction-changing characters in input
    text. Kept characters are still shown escaped in every output."""
    global _keep_invisible
    _keep_invisible = bool(keep)


def _describe(match: re.Match) -> str:
    code = ord(match.group())
    name = _CONTROL_NAMES.get(code) or unicodedata.name(match.group(), "")
    return f"U+{code:04X}{f' ({name})' if name else ''} at position {match.start() + 1}"


def check_text(value: str, max_chars: int = MAX_CELL_CHARS, lines: bool = False) -> str:
    """value unchanged, or ValueError saying which character (or the length) is refused and the fix.
    lines: a multi-line field (line feeds allowed, a bare CR not)."""
    if len(value) > max_chars:
        raise ValueError(f"text of {len(value):,} characters; at most {max_chars:,}")
    found = _CONTROL.search(value)
    if found:
        raise ValueError(f"contains the control character {_describe(found)}; remove it")
    found = (_BARE_CR if lines else _LINE_BREAK).search(value)
    if found:
        what = "a carriage return not followed by a line feed" if lines else "a line break"
        why = "it hides the start of the line it is printed on" if lines else "this field is one line"
        raise ValueError(f"contains {what}, {_describe(found)} ({why}); remove it")
    found = None if _keep_invisible else _INVISIBLE.search(value)
    if found:
        raise ValueError(
            f"contains the invisible character {_describe(found)}, which changes or hides how the text around it "
            "reads; remove it (or run `planner --keep-invisible ...` to keep it, shown escaped in every output)"
        )
    return value


def text_problem(cells: dict[str, object]) -> tuple[str, str] | None:
    """(column, what is wrong) for the first text cell of a catalog row that check_text refuses, or None.
    Fast for the usual clean row: one regex search over all its text."""
    texts = [v for v in cells.values() if isinstance(v, str)]
    if not _ANY.search("\t".join(texts)) and max(map(len, texts), default=0) <= MAX_CELL_CHARS:
        return None
    for column, value in cells.items():
        if isinstance(value, str):
            try:
                check_text(value, lines=column in MULTILINE_COLUMNS)
            except ValueError as exc:
                return str(column), str(exc)
    return None


def check_value(value: object, max_chars: int = MAX_CELL_CHARS) -> object:
    """value unchanged, or ValueError: text (also inside lists and dicts) must pass check_text as one line,
    lists and dicts hold at most MAX_LIST_ITEMS items. A before-validator for every field of a model."""
    if isinstance(value, str):
        check_text(value, max_chars)
    elif isinstance(value, list | tuple | dict):
        if len(value) > MAX_LIST_ITEMS:
            raise ValueError(f"{len(value):,} items; at most {MAX_LIST_ITEMS:,}")
        for item in value.items() if isinstance(value, dict) else value:
            check_value(item, max_chars)
    return value


def _escape(match: re.Match) -> str:
    char = match.group()
    if char == "\r":
        return "\\r"
    if char == "\n":
        return "\\n"
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_HIDDEN_LINES = re.compile(f"[{_CONTROL_CLASS}{_INVISIBLE_CLASS}]|\r(?!\n)")


def visible(text: str, lines: bool = False) -> str:
    """text with every control, invisible or direction-changing character and (one-line: lines=False)
    every CR and LF written as an escape (\\u202e, \\r, \\n); with lines=True line feeds (and CRLF) stay."""
    pattern = _HIDDEN_LINES if lines else _ANY
    return pattern.sub(_escape, text) if pattern.search(text) else text


def printable(text: str, max_chars: int = MAX_CELL_CHARS) -> str:
    """visible(text, lines=True) cut to max_chars: for writers (XLSX) that must not fail on, or show raw,
    text a validator should have refused already."""
    text = visible(text, lines=True)
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"
