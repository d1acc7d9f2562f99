"""scrapy-rep: robots.txt obeyed the way Google does, for Scrapy."""

from ._scrapy import robots_parsed
from .addon import Addon
from .middleware import RobotsMiddleware, RobotsStartMiddleware
from .reporting.adopted import robots_version_adopted
from .requests.page_directives import RobotsTagsMiddleware
from .requests.response_usage import UsageMiddleware
from .robotparser import RobotParser
from .robots.body import RobotsBodyMiddleware

__version__ = "0.2.0"

__all__ = ["Addon", "RobotParser", "RobotsBodyMiddleware", "RobotsMiddleware", "RobotsStartMiddleware",
           "RobotsTagsMiddleware", "UsageMiddleware", "__version__", "robots_parsed", "robots_version_adopted"]
