"""Settings of the demo's project: scrapy-rep through its add-on (each spider sets its user-agent and tokens).

The demo loads them with ``Settings.setmodule`` and adds its short retry and hold times (``crawl.DEMO_SETTINGS``).
"""

BOT_NAME = "scrapy_rep_demo"
SPIDER_MODULES = ["scrapy_rep.demo.project.spiders"]

ADDONS = {"scrapy_rep.Addon": 0}
ROBOTSTXT_OBEY = True
TELNETCONSOLE_ENABLED = False
