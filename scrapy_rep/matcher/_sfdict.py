"""Parsing a Structured Fields Dictionary (RFC 9651 section 4.2.2), the syntax of a ``Content-Usage`` preference.

Only what preference processing needs is kept (draft-ietf-aipref-vocab, "Processing Algorithm"): each member's key
and, when its value is a Token, that Token; any other value (Integer, String, Boolean, Inner List...) and every
parameter is checked for syntax and then dropped. Each member is matched once by an anchored regular expression
whose alternatives start with distinct characters, so parsing is linear in the length of the value.
"""

from __future__ import annotations

import re

_KEY = rb"[a-z*][a-z0-9_\-.*]*"
_TOKEN = rb"[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*"
_BARE_ITEM = (
    rb"(?:-?[0-9]{1,15}(?:\.[0-9]{1,3})?"  # Integer, Decimal (RFC 9651 3.3.1, 3.3.2; digit limits loosely)
    rb'|"(?:[ !#-\[\]-~]|\\["\\])*"'  # String (3.3.3)
    rb"|" + _TOKEN +  # Token (3.3.4)
    rb"|:[A-Za-z0-9+/=]*:"  # Byte Sequence (3.3.5)
    rb"|\?[01]"  # Boolean (3.3.6)
    rb"|@-?[0-9]{1,15}"  # Date (3.3.7)
    rb'|%"(?:[ !#-$&-\[\]-~]|%[0-9a-f]{2})*")'  # Display String (3.3.8)
)
_PARAMETERS = rb"(?:;[ ]*" + _KEY + rb"(?:=" + _BARE_ITEM + rb")?)*"
_INNER_LIST = rb"\((?:[ ]*" + _BARE_ITEM + _PARAMETERS + rb")*[ ]*\)"
_MEMBER = re.compile(
    rb"(" + _KEY + rb")(?:=(?:(" + _TOKEN + rb")|" + _BARE_ITEM + rb"|" + _INNER_LIST + rb"))?" + _PARAMETERS
)
_SEPARATOR = re.compile(rb"[ \t]*,[ \t]*")


def parse_dictionary(value: bytes) -> dict[str, str | None] | None:
    """The members of the Dictionary ``value``: key -> its Token value, or None for any other value.

    None when ``value`` is not a Dictionary (RFC 9651: the whole field then fails, so no preference is known).
    Leading and trailing SP are ignored (RFC 9651 4.2); a repeated key keeps its last value (4.2.2). An empty
    value is an empty Dictionary. Never raises.
    """
    data = value.strip(b" ")
    members: dict[str, str | None] = {}
    pos, end = 0, len(data)
    while pos < end:
        member = _MEMBER.match(data, pos)
        if member is None:
            return None
        key, token = member.group(1, 2)
        name = key.decode("ascii")
        members.pop(name, None)  # RFC 9651 4.2.2: a repeated key overwrites the value and takes the later order
        members[name] = None if token is None else token.decode("ascii")
        pos = member.end()
        if pos == end:
            break
        separator = _SEPARATOR.match(data, pos)
        if separator is None or separator.end() == end:  # junk after a member, or a trailing comma
            return None
        pos = separator.end()
    return members
