"""Attribute Info message (spec IV.A.2.v): where an object keeps dense attributes (the Link
Info message's fields, with a 2-byte maximum creation index)."""
from .link_info import LinkInfo, decode_info, encode_info


class AttributeInfo(LinkInfo):
    """Decoded Attribute Info message."""


def decode(cur):
    return decode_info(cur, AttributeInfo, 2)


def encode(info, ctx):
    """Encode an Attribute Info message (spec IV.A.2.v)."""
    return encode_info(info, ctx, 2)


DECODERS = {0x15: decode}
