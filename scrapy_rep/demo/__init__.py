"""The demo: a local multi-origin site (``site``), the demo project's spiders crawling it (``crawl``; ``project``:
the crawl of ``example_project/``, shipped in the package) and the report of what happened (``report``). Entry point:
``scrapy-rep demo [--compare | --serve]``."""
