"""Where robots.txt outcomes are cached (SPEC 3): the entry format and the store interface."""

from ._base import FORMAT_VERSION, CorruptEntry, Entry, Outcome, Store, StoreError

__all__ = ["FORMAT_VERSION", "CorruptEntry", "Entry", "Outcome", "Store", "StoreError"]
