"""The demo's Scrapy project, shipped inside the package so that ``scrapy-rep demo`` runs from an installed wheel:
its settings (``settings``) and its two spiders (``spiders``). ``example_project/`` in the source tree is the same
crawl written as a user's own project (``scrapy.cfg``, ``scrapy crawl``)."""
