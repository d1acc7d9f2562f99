"""Settings of the example project: the two lines that enable scrapy-rep, and a polite crawler's defaults.

Each spider sets its own robots.txt user-agent token (``REP_USER_AGENT``) in ``custom_settings``.
"""

BOT_NAME = "example_project"
SPIDER_MODULES = ["example_project.spiders"]
NEWSPIDER_MODULE = "example_project.spiders"

# scrapy-rep: the add-on replaces Scrapy's built-in robots.txt middleware; ROBOTSTXT_OBEY switches it on.
ADDONS = {"scrapy_rep.Addon": 0}
ROBOTSTXT_OBEY = True

# Who we are. scrapy-rep reads robots.txt groups for the product token (SPEC 6.4) unless REP_USER_AGENT says otherwise.
USER_AGENT = "examplebot/1.0 (+https://example.com/bot)"

# The evidence of each decision (meta["rep_basis"], copied into every item by the spiders) flattened into the items.
ITEM_PIPELINES = {"example_project.pipelines.EvidencePipeline": 300}

CONCURRENT_REQUESTS_PER_DOMAIN = 8
TELNETCONSOLE_ENABLED = False
FEED_EXPORT_ENCODING = "utf-8"
