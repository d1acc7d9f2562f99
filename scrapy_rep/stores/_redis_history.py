"""The Redis store's history of versions (``_history``; docs/stores.md, "History"): its keys, the Lua that records a
version in the script writing the entry (one round trip), and the listing.

Keys, with no expiry (they are evidence; each origin's is bounded by ``REP_HISTORY_VERSIONS``):

- ``{prefix}history:{origin}``, a hash: a field per version, ``{id}:{outcome}``, its value ``FIRST LAST [status,
  url]`` (``first_seen`` and ``last_seen`` as Python writes a float, then the JSON of the latest sighting's status and
  final URL). Times stay the strings the crawler sent: Lua only compares them (``tonumber``), never rewrites one.
- ``{prefix}body:{id}``, a hash: ``b`` the body as entries hold it (zlib), set if absent (``HSETNX``), and ``n`` how
  many history fields name it; the key goes when the last one does, so a file that changes at every download (a
  date in a comment) does not pile up bodies. The script names the body keys of the versions it drops itself (they
  are known only then): like the store's other scripts, it needs one Redis server, not a Cluster.

The body is not sent twice: the script reads it from the entry's record (``_codec``: after the first newline).
"""

from __future__ import annotations

import json
import logging
from typing import Any

import redis.asyncio

from scrapy_rep.stores._base import Entry, HistoryVersion
from scrapy_rep.stores._history import newest_first, records_history, verified

logger = logging.getLogger(__name__)

# record(): a sighting of a version (ARGV: field, seen, latest, limit, body key prefix) of the entry whose record is
# ARGV[1]. A known field has its times widened and, when this sighting is its latest, status and URL replaced; a new
# one takes a reference on its body and may push the origin past ``limit``: the fields last seen longest ago go
# (``newest_first``'s order, from its end), each releasing its body.
_RECORD = r"""
local function record(rows, body, field, seen, latest, limit, prefix)
    local first, last, was = string.match(redis.call('HGET', rows, field) or '', '^(%S+) (%S+) (.*)$')
    if first then
        if tonumber(seen) < tonumber(first) then first = seen end
        if tonumber(seen) >= tonumber(last) then last, was = seen, latest end
        redis.call('HSET', rows, field, first .. ' ' .. last .. ' ' .. was)
        return
    end
    redis.call('HSET', rows, field, seen .. ' ' .. seen .. ' ' .. latest)
    redis.call('HSETNX', body, 'b', string.sub(ARGV[1], string.find(ARGV[1], '\n', 1, true) + 1))
    redis.call('HINCRBY', body, 'n', 1)
    local over = redis.call('HLEN', rows) - tonumber(limit)
    if over <= 0 then
        return
    end
    local all, versions = redis.call('HGETALL', rows), {}
    for i = 1, #all, 2 do
        local f, l = string.match(all[i + 1], '^(%S+) (%S+) ')
        versions[#versions + 1] = {all[i], tonumber(l) or -math.huge, tonumber(f) or -math.huge}
    end
    table.sort(versions, function(a, b)
        if a[2] ~= b[2] then return a[2] < b[2] end
        if a[3] ~= b[3] then return a[3] < b[3] end
        return a[1] > b[1]
    end)
    for i = 1, over do
        redis.call('HDEL', rows, versions[i][1])
        local key = prefix .. string.sub(versions[i][1], 1, 64)
        if redis.call('HINCRBY', key, 'n', -1) <= 0 then
            redis.call('DEL', key)
        end
    end
end
"""


def recording(script: str, keys: int, args: int) -> str:
    """``script`` (Lua of ``keys`` keys and ``args`` arguments, the entry's record first) recording the entry's version
    too: its keys and arguments, then ``history_part``'s."""
    k, a = keys + 1, args + 1
    call = f"record(KEYS[{k}], KEYS[{k + 1}], " + ", ".join(f"ARGV[{a + i}]" for i in range(5)) + ")\n"
    return _RECORD + call + script


#: ``put`` recording the version: the entry's key, then ``history_part``'s; its record and lifetime (ms), then its.
PUT_RECORDING = recording("redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])\nreturn 1\n", 1, 2)


def history_part(prefix: str, entry: Entry, versions: int) -> tuple[list[str], list[str | int]] | None:
    """The keys and arguments ``recording`` adds for ``entry``; None when it records nothing: ``versions`` (the
    fields kept per origin) is 0, or the entry is no fresh download (``records_history``)."""
    version = entry.version
    if not versions or version is None or not records_history(entry):
        return None
    return ([f"{prefix}history:{entry.origin}", f"{prefix}body:{version.id}"],
            [f"{version.id}:{entry.outcome.value}", repr(version.fetched_at),
             json.dumps([version.status, version.url]), versions, f"{prefix}body:"])


async def read_history(client: redis.asyncio.Redis, prefix: str, origin: str) -> list[HistoryVersion]:
    """``origin``'s versions, newest first: its hash, then its bodies in one pipeline (two round trips). A field that
    does not parse is skipped and logged, as ``verified`` skips a damaged one."""
    fields: dict[Any, Any] = await client.hgetall(f"{prefix}history:{origin}")
    rows = []
    for field, value in fields.items():
        try:
            ident, _, outcome = field.decode("ascii").partition(":")
            first, last, latest = value.decode("utf-8").split(" ", 2)
            status, url = json.loads(latest)
            rows.append((ident, outcome, None if status is None else int(status), None if url is None else str(url),
                         float(first), float(last)))
        except (UnicodeDecodeError, TypeError, ValueError) as exc:  # JSONDecodeError is a ValueError
            logger.warning("Skipping a damaged history field of %s (%r): %s", origin, field, exc)
    ids = sorted({row[0] for row in rows})
    async with client.pipeline(transaction=False) as pipe:
        for ident in ids:
            pipe.hget(f"{prefix}body:{ident}", "b")
        bodies: dict[str, Any] = dict(zip(ids, await pipe.execute(), strict=True))
    return newest_first(verified(origin, *row, bodies[row[0]]) for row in rows)
