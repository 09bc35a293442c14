"""Text from documents, file names and services, made safe to print on a terminal: one sanitiser for the
`mcp-docs` command line and `docs-agent` (agent_client.text imports it).

A note's heading, a snippet, a file name or a service's error is data, and a terminal acts on some characters
instead of showing them: escape sequences clear the screen (`\\x1b[2J`), retitle the window or draw a link
whose text lies about its target (OSC 8); C1 controls do the same in one byte (U+009B is CSI); explicit bidi
overrides show 'exe.txt' as 'txt.exe' ("Trojan Source"). They are removed from text, and escaped in JSON.
"""

from __future__ import annotations

import json
import re
import shlex

# CSI / OSC / other escape sequences, then any remaining C0/C1 control character except \n and \t.
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Explicit bidi embeddings, overrides and isolates: they reorder what the terminal shows ('txt.exe' for
# 'exe.txt', "Trojan Source"); the implicit marks (LRM, RLM, ALM) that right-to-left text needs are kept.
_BIDI = re.compile(r"[\u202a-\u202e\u2066-\u2069]")
_LINE_SEPARATORS = re.compile(r"[\u2028\u2029]")
# What JSON leaves raw with ensure_ascii=False but a terminal may act on (C1 controls such as CSI, DEL) or
# that reorders or breaks lines: printed as \uXXXX escapes instead, which decode to the same text.
_JSON_UNSAFE = re.compile(r"[\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def terminal_safe(text: str) -> str:
    """Strip ANSI escapes, control characters (keeps newlines and tabs) and bidi overrides before printing
    untrusted text."""
    text = _LINE_SEPARATORS.sub("\n", text.replace("\r\n", "\n"))
    return _BIDI.sub("", _CONTROL.sub("", _ANSI.sub("", text)))


# What may not appear raw in a name printed on one line: every C0/C1 control (newline and tab included: a file
# may be named 'a\nb.md', which printed raw splits the line that lists it into two), DEL, bidi controls and the
# Unicode line separators.
_NAME_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
_NAME_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(ch: str) -> str:
    code = ord(ch)
    return _NAME_ESCAPES.get(ch) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def name_safe(name: str) -> str:
    """A file name, id or folder for one line of text output, its control characters shown as escapes
    ('a\\nb.md'), so the name stays on its line and is seen to hold them; JSON output keeps the name exact."""
    return _NAME_UNSAFE.sub(lambda m: _escape(m.group()), name)


def shell_word(text: str) -> str:
    """`text` quoted for a POSIX shell on one line: shlex.quote, or bash's $'...' when it holds a control
    character (a newline inside '...' would split the command that is meant to be copied)."""
    if not _NAME_UNSAFE.search(text):
        return shlex.quote(text)
    return "$'" + name_safe(text.replace("\\", "\\\\").replace("'", "\\'")) + "'"


def json_safe(value: object) -> str:
    """`value` as one line of JSON, readable (non-ASCII kept) but with no character a terminal would act on."""
    return json_text_safe(json.dumps(value, ensure_ascii=False))


def json_text_safe(text: str) -> str:
    """JSON already serialised (pydantic's model_dump_json, say), with the characters above escaped: JSON
    escapes only U+0000-U+001F, and the rest of the list can only occur inside strings, where \\uXXXX is the
    same text."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


__all__ = ["json_safe", "json_text_safe", "name_safe", "shell_word", "terminal_safe"]
