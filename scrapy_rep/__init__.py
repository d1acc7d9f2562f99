"""scrapy-rep: robots.txt obeyed the way Google does, for Scrapy."""

__version__ = "0.1.0"

__all__ = ["__version__"]
