"""Inputs of the matcher benchmark: the shared robots.txt corpus, URLs to decide, and synthetic rule files.

Everything is derived from a ``random.Random`` with a fixed seed, so every run (and every parser) sees the same
inputs.
"""

from __future__ import annotations

import random
import re
import string
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus" / "robots"

_RULE_LINE = re.compile(rb"^[ \t]*(?:dis)?allow[ \t]*:?[ \t]*([^\s#]+)", re.IGNORECASE | re.MULTILINE)
_WORDS = [
    "search",
    "cart",
    "account",
    "products",
    "blog",
    "admin",
    "api",
    "tag",
    "wp-content",
    "images",
    "user",
    "login",
    "catalog",
    "static",
    "news",
    "category",
    "item",
    "help",
    "private",
    "download",
]
_EXTENSIONS = ["pdf", "php", "html", "json", "xml", "jpg", "zip", "aspx"]
_PARAMS = ["sort", "q", "page", "ref", "sessionid", "filter", "lang", "utm_source"]


def load_corpus(directory: Path = CORPUS) -> list[tuple[str, bytes]]:
    """The corpus files as (site name, body), sorted by name; empty when the directory is absent."""
    if not directory.is_dir():
        return []
    return [(path.stem, path.read_bytes()) for path in sorted(directory.iterdir()) if path.is_file()]


def urls_for(site: str, body: bytes, rng: random.Random, count: int) -> list[str]:
    """``count`` full URLs for ``site``: half built from the file's own rule patterns, half random paths."""
    patterns = [match.group(1).decode("utf-8", "replace") for match in _RULE_LINE.finditer(body)]
    paths = []
    for i in range(count):
        if patterns and i % 2 == 0:
            paths.append(_path_from_pattern(rng.choice(patterns), rng))
        else:
            paths.append(random_path(rng))
    return [f"https://{site}{_percent_encode(path)}" for path in paths]


def random_path(rng: random.Random) -> str:
    """A plausible crawler path: a few words, maybe a file extension, maybe a query."""
    segments = [rng.choice(_WORDS) if rng.random() < 0.7 else _token(rng) for _ in range(rng.randint(1, 4))]
    path = "/" + "/".join(segments)
    if rng.random() < 0.3:
        path += "." + rng.choice(_EXTENSIONS)
    elif rng.random() < 0.3:
        path += "/"
    if rng.random() < 0.3:
        path += f"?{rng.choice(_PARAMS)}={_token(rng)}"
    return path


def synthetic_robots(rules: int, rng: random.Random) -> str:
    """A robots.txt with one ``*`` group of ``rules`` rules: 80% plain prefixes, 20% wildcards (realistic shapes:
    an extension with ``$``, a query parameter, a directory anywhere, a file type under a directory)."""
    lines = ["User-agent: *"]
    for i in range(rules):
        kind = "Allow" if rng.random() < 0.2 else "Disallow"
        if rng.random() < 0.8:
            pattern = random_path(rng).split("?")[0] + (f"-{i}" if rng.random() < 0.5 else "")
        else:
            pattern = rng.choice(
                [
                    f"/*.{rng.choice(_EXTENSIONS)}{i}$",
                    f"/*?{rng.choice(_PARAMS)}{i}=",
                    f"/*/{rng.choice(_WORDS)}-{i}/",
                    f"/{rng.choice(_WORDS)}-{i}/*.{rng.choice(_EXTENSIONS)}",
                ]
            )
        lines.append(f"{kind}: {pattern}")
    return "\n".join(lines) + "\n"


def _path_from_pattern(pattern: str, rng: random.Random) -> str:
    """A path the pattern likely matches (stars filled in), sometimes made longer so it may not."""
    anchored = pattern.endswith("$")
    pieces = (pattern[:-1] if anchored else pattern).split("*")
    path = "".join(piece + (_token(rng) if i < len(pieces) - 1 else "") for i, piece in enumerate(pieces))
    if not anchored or rng.random() < 0.3:
        path += rng.choice(["", "", "x", "/page.html", "?id=7"])
    return path if path.startswith("/") else "/" + path


def _token(rng: random.Random) -> str:
    return "".join(rng.choices(string.ascii_lowercase + string.digits, k=rng.randint(2, 8)))


def _percent_encode(path: str) -> str:
    """Non-ASCII, space and control characters percent-encoded, as a crawler sends them."""
    return "".join(
        char if 0x20 < ord(char) < 0x7F else "".join(f"%{byte:02X}" for byte in char.encode()) for char in path
    )
