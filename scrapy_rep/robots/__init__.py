"""One origin's robots.txt, from a request's URL to an adopted entry (SPEC 1-4).

``origin`` names the cache key and the robots.txt URL; ``state`` is the per-origin machine (a table; illegal
transitions raise) and the bounded map of origins; ``refresh`` gets a current entry from the store, another
crawler's fetch, or ``fetch`` (one download through the engine: redirects, size cap), each hop prepared by
``robots_request`` and sent by ``downloads`` in a downloader place (``places``); ``body`` and ``decoding`` undo
content codings within the cap; ``policy`` turns a download into a cached entry; ``spider_robots`` answers a
spider's own robots.txt request from the copy.

It knows nothing of how requests wait or what is logged: it imports ``config``, ``stores``, ``matcher`` and
``_scrapy``, never ``requests``, ``reporting`` or the middleware.
"""
