"""Byte sources (reading) and sinks (writing)."""
from .source import ByteSource, open_source

__all__ = ["ByteSource", "open_source"]
