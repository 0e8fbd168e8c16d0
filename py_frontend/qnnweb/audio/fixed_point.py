"""What a C store into a narrower integer type leaves: two's complement wrap."""

UINT32_MASK = 0xFFFFFFFF


def int16(x):
    return ((x + 0x8000) & 0xFFFF) - 0x8000


def int32(x):
    return ((x + 0x80000000) & UINT32_MASK) - 0x80000000
