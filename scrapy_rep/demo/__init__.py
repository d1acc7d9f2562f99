"""The demo: a local multi-origin site (``site``), the example project's spiders crawling it (``crawl``) and the
report of what happened (``report``). Entry point: ``scrapy-rep demo [--compare | --serve]``."""
