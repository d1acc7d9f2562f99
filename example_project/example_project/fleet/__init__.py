"""The fleet spider (scrapy-redis): loaded only by the ``fleet_settings`` profile, so the rest of the example project
(``scrapy list`` shows ``catalog`` and ``news``) imports and runs without scrapy-redis installed."""
