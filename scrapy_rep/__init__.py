"""scrapy-rep: robots.txt obeyed the way Google does, for Scrapy."""

from .addon import Addon
from .middleware import RobotsBodyMiddleware, RobotsMiddleware
from .robotparser import RobotParser

__version__ = "0.1.0"

__all__ = ["Addon", "RobotParser", "RobotsBodyMiddleware", "RobotsMiddleware", "__version__"]
