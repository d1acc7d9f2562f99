"""Where robots.txt outcomes are cached (SPEC 3): the entry format, the store interface and the stores."""

from ._base import FORMAT_VERSION, CorruptEntry, Entry, Outcome, Store, StoreError
from .memory import MemoryStore

__all__ = ["FORMAT_VERSION", "CorruptEntry", "Entry", "MemoryStore", "Outcome", "Store", "StoreError"]
