"""The demo: a local multi-origin site (``site``), the demo project's spiders crawling it (``crawl``; ``project``:
the crawl of ``example_project/``, shipped in the package) and the report of what happened (``report``). Entry point:
``scrapy-rep demo [--compare | --serve]``. It uses the package as a user does (its front door, ``_scrapy`` for the
crawler runner); only ``cli`` imports it."""
