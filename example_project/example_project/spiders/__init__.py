"""The example project's spiders: ``catalog`` and ``news``, configured per spider."""
