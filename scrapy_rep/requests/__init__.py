"""A checked request's journey: wait for its origin's robots.txt, then go on, be forbidden or be dropped (SPEC 2.1,
8.1-8.2).

``waiting`` (a request waits for its origin's entry: parked, released, dropped at REP_HOLD_TIMEOUT or at close),
``parking`` (where a waiting request lives: out of the downloader's active set, back through the scheduler),
``dry_run`` (REP_ENFORCE = False: what would be stopped is sent and counted), ``usage`` (usage preferences into
``meta["rep_usage"]``; REP_CONTENT_USES).

It imports the rooms below it (``robots``, ``reporting``, ``config``, ``stores``, ``matcher``, ``_scrapy``), never
the middleware; nothing below imports it.
"""
