"""The fleet profile: the example project's settings, plus scrapy-redis's shared scheduler and dupefilter and
scrapy-rep's Redis store, for many workers crawling one queue (docs/fleet.md).

    SCRAPY_SETTINGS_MODULE=example_project.fleet_settings scrapy crawl fleet

Only this profile loads ``example_project.fleet`` (and so imports scrapy-redis).
"""

import os

from example_project.settings import *  # noqa: F403  (the project's defaults, the add-on and ROBOTSTXT_OBEY)

SPIDER_MODULES = ["example_project.fleet"]
NEWSPIDER_MODULE = "example_project.fleet"

# scrapy-redis: one request queue and one dupefilter in Redis, shared by every worker; kept when a worker stops, so a
# worker that leaves (or a fleet that restarts) loses no request.
SCHEDULER = "scrapy_redis.scheduler.Scheduler"
DUPEFILTER_CLASS = "scrapy_redis.dupefilter.RFPDupeFilter"
SCHEDULER_PERSIST = True
REDIS_URL = os.environ.get("REDIS_URL", "redis://localhost:6379")

# A worker with nothing to do for this many seconds (empty start-URL key, empty shared queue) closes.
MAX_IDLE_TIME_BEFORE_CLOSE = 10

# scrapy-rep: the add-on (example_project.settings) with one robots.txt cache and one fetch lease per origin for the
# whole fleet, in the Redis that scrapy-redis uses (REDIS_URL).
ADDONS = {"scrapy_rep.Addon": 0}
ROBOTSTXT_OBEY = True
REP_STORE = "redis"
REP_USER_AGENT = "examplebot"
