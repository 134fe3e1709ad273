"""Read an 8-bit RGB(A) PNG (what Chromium writes) to check screenshots
without anything beyond the standard library."""
import struct
import zlib

from .files import DataError


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def read(path):
    """(width, height, [row bytes]); each row holds width * channels bytes."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise DataError(f"{path}: not a PNG")
    pos, idat, width = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            if depth != 8 or colour not in (2, 6):
                raise DataError(f"{path}: only 8-bit RGB or RGBA is read here")
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    if width is None:
        raise DataError(f"{path}: no IHDR")
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        ftype, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        if ftype == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 255
        elif ftype == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif ftype == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif ftype == 4:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                up_left = prev[i - channels] if i >= channels else 0
                line[i] = (line[i] + _paeth(left, prev[i], up_left)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, channels, rows


def colour_counts(path, colours, tolerance=12):
    """{colour "#rrggbb": pixels within tolerance of it} and the share of
    pixels that are not (near) white, per band of rows: [(first row, share)]."""
    width, height, channels, rows = read(path)
    want = {c: tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in colours}
    counts = {c: 0 for c in colours}
    ink = []
    for y, row in enumerate(rows):
        dark = 0
        for x in range(0, width * channels, channels):
            r, g, b = row[x], row[x + 1], row[x + 2]
            if r < 240 or g < 240 or b < 240:
                dark += 1
                for c, (wr, wg, wb) in want.items():
                    if abs(r - wr) <= tolerance and abs(g - wg) <= tolerance and abs(b - wb) <= tolerance:
                        counts[c] += 1
        ink.append(dark / width)
    return width, height, counts, ink


def widest_run(path, colour, tolerance=12):
    """The longest horizontal run of pixels within tolerance of colour
    ("#rrggbb") in any row of the PNG at path: how wide a bar of that
    colour is drawn, in pixels."""
    width, _, channels, rows = read(path)
    want = tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))
    best = 0
    for row in rows:
        run = 0
        for x in range(0, width * channels, channels):
            if all(abs(row[x + i] - want[i]) <= tolerance for i in range(3)):
                run += 1
                best = max(best, run)
            else:
                run = 0
    return best
