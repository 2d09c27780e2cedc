#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Rewrites a .bpfprof archive with every zlib section stored raw (flag 0x1
cleared; the writer's layout comment, user/archive/writer.c, allows both).

Seeds for the fuzz targets: a mutation of a compressed events block is
almost always a zlib error, of a raw one an event the reader must take or
refuse.   inflate_archive.py IN OUT
"""
import struct
import sys
import zlib


def main():
    data = open(sys.argv[1], "rb").read()
    out = bytearray(data[:16])
    off = 16
    while off + 16 <= len(data):
        typ, flags, length = struct.unpack_from("<IIQ", data, off)
        payload = data[off + 16:off + 16 + length]
        off += 16 + length
        if flags & 1 and len(payload) >= 8:
            payload = payload[:8] + zlib.decompressobj().decompress(payload[8:])
            flags &= ~1
        if typ == 0x454e44 and len(payload) >= 24:   # END: the checksum of what precedes
            payload = payload[:16] + struct.pack("<I", zlib.crc32(out)) + payload[20:]
        out += struct.pack("<IIQ", typ, flags, len(payload)) + payload
    open(sys.argv[2], "wb").write(out)


main()
