"""An example Scrapy project that obeys robots.txt through scrapy-rep (see settings.py and spiders/)."""
