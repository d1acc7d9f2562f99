"""What the crawl is told: log lines, signals, stats that describe rather than decide, the close report (SPEC 8).

``outcome_log`` (a line per origin each time its robots.txt's meaning changes), ``waiting_log`` (requests held),
``close_report`` (what robots.txt stopped), ``announce`` (the ``robots_parsed`` signal, the opt-in crawl-delay),
``soft404`` (an HTML page served as robots.txt), ``internal_errors`` (an unexpected exception, logged once and
turned into a network-error entry), ``startup`` (the lines said once when the crawl starts).

It decides nothing about a request: it imports ``robots`` (to name states and outcomes), ``config``, ``stores``,
``matcher``, ``robotparser`` and ``_scrapy``, never ``requests`` or the middleware.
"""
