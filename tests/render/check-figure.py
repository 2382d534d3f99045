#!/usr/bin/env python3
"""What an exported figure draws (export-cli, tests/render/test-export.sh): a renderer that
draws nothing, or the wrong colours, fails.  Standard library only (a PNG reader of its own).

  check-figure.py cells FIGURE MATRIX.json SCALE [MIN_PX]
      FIGURE (.png, or .pdf and .svg rasterised by pdftoppm and rsvg-convert) shows the matrix's
      cells in the colours the colour map gives their values: each cell's colour
      (viridis, from ui/render/colormap-data.c, index floor(v * 256 / vmax) as the renderer
      computes it in float; SCALE fixed: vmax 1, head: the matrix's largest value) covers at
      least MIN_PX pixels (default 400), and the cells whose colour is their own lie in
      their rows and columns, in order, top to bottom and left to right.  An .svg's cells
      are also an embedded image: one of them must be the matrix, in blocks of one colour.
      MATRIX.json: {"rows": [[...], ...]}, or {"panels": [rows, rows, ...]}: matrices side by
      side (a model grid's heads), each on its own scale.
  check-figure.py drawn FIGURE MIN_FRACTION MIN_COLOURS
      at least MIN_FRACTION of the pixels differ from the background (the most common
      colour) and at least MIN_COLOURS colours are used.
  check-figure.py svg FIGURE MIN_GLYPHS MIN_SHAPES
      the SVG uses at least MIN_GLYPHS glyphs (text) and draws at least MIN_SHAPES paths,
      rectangles and images outside its glyph definitions.
  check-figure.py pdf-text FIGURE [--labels MATRIX.json] WORD...
      pdftotext finds every WORD in the PDF, and with --labels every cell's label as the
      heatmap writes it (4 decimals, no trailing zeros, no leading 0: .376 for 0.37604).
  check-figure.py matrix CAPTURE.json heatmap|grid|rollout LAYER HEAD OUT.json
      writes the matrix a figure of an `attnscope run` capture should show: one head's
      attention, every head of the layer side by side, or the rollout of the layers up to LAYER (0.5 A + 0.5 I, A the mean over
      the heads, multiplied from layer 0 up; the worked example has one layer).

Exit 0 when every check holds, 1 with a message per failure otherwise."""
import base64
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import zlib

SRC = os.environ.get("ATN_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def read_png(data):
    """(width, height, rows): rows[y] a bytes object of width * 3 (RGB; alpha dropped after
    compositing over white, as a viewer shows it)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, ihdr = 8, [], None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    w, h, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError("PNG of depth %d, colour type %d, interlace %d: not read here" % (depth, ctype, interlace))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if ft == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif ft == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif ft == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif ft == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        prev = line
        if bpp == 4:   # over white
            out = bytearray(w * 3)
            for x in range(w):
                r, g, b, a = line[4 * x:4 * x + 4]
                out[3 * x:3 * x + 3] = bytes(((v * a + 255 * (255 - a)) // 255) for v in (r, g, b))
            rows.append(bytes(out))
        else:
            rows.append(bytes(line))
    return w, h, rows


def raster(path):
    """The figure as pixels: a PNG read, a PDF rasterised at 72 dpi (1 pt = 1 px) by
    pdftoppm, an SVG by rsvg-convert (at its 96 dpi)."""
    if path.endswith(".svg"):
        png = subprocess.run(["rsvg-convert", "-f", "png", path], check=True, capture_output=True).stdout
        return read_png(png)
    if path.endswith(".pdf"):
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(["pdftoppm", "-png", "-r", "72", "-singlefile", path, os.path.join(tmp, "page")],
                           check=True)
            with open(os.path.join(tmp, "page.png"), "rb") as f:
                return read_png(f.read())
    with open(path, "rb") as f:
        return read_png(f.read())


def viridis():
    with open(os.path.join(SRC, "ui", "render", "colormap-data.c")) as f:
        text = f.read()
    body = text[text.index("atn_cmap_viridis[256]"):]
    body = body[body.index("{") + 1:body.index("}")]
    tab = [int(v, 16) for v in re.findall(r"0x([0-9a-fA-F]{6})", body)]
    assert len(tab) == 256 and tab[0] == 0x440154, "viridis table not found"
    return [bytes(((c >> 16) & 255, (c >> 8) & 255, c & 255)) for c in tab]


def cell_colours(rows, scale):
    """Each cell's colour, as ui/render/colormap.c's atn_render_matrix_pixels: vmin 0,
    k = (float)(256 / vmax), index floor(v * k) in float, clamped to 0..255."""
    tab = viridis()
    vmax = 1.0 if scale == "fixed" else max(max(r) for r in rows)
    k = f32(256.0 / vmax)
    out = []
    for r in rows:
        line = []
        for v in r:
            f = f32(f32(v) * k)
            line.append(tab[0 if f <= 0 else 255 if f >= 255 else int(f)])
        out.append(line)
    return out


def colour_positions(w, h, pix, wanted):
    """For each colour in wanted: the x and y of every pixel of that colour."""
    pos = {c: ([], []) for c in wanted}
    for y in range(h):
        row = pix[y]
        for c in wanted:
            start = 0
            while True:
                i = row.find(c, start)
                if i < 0:
                    break
                if i % 3 == 0:
                    pos[c][0].append(i // 3)
                    pos[c][1].append(y)
                    start = i + 3
                else:
                    start = i + 1
    return pos


def panel_colours(panels, scale):
    """The panels' cell colours side by side (one row of panels)."""
    cols = [cell_colours(p, scale) for p in panels]
    return [sum((c[i] for c in cols), []) for i in range(len(panels[0]))]


def check_cells_raster(path, panels, scale, min_px, fails):
    w, h, pix = raster(path)
    want = panel_colours(panels, scale)
    mat = [sum((p[i] for p in panels), []) for i in range(len(panels[0]))]
    count = {}
    for line in want:
        for c in line:
            count[c] = count.get(c, 0) + 1
    pos = colour_positions(w, h, pix, set(count))
    centre = {}
    for (i, line) in enumerate(want):
        for (j, c) in enumerate(line):
            xs, ys = pos[c]
            need = min_px * count[c]
            if len(xs) < need:
                fails.append("%s: cell %d,%d (value %.4f): %d pixels of its colour #%s, expected at least %d" %
                             (path, i, j, mat[i][j], len(xs), c.hex(), need))
                continue
            if count[c] == 1:   # the middle of its 10th..90th percentiles: text inside, a colour bar entry outside
                xs, ys = sorted(xs), sorted(ys)
                lo, hi = len(xs) // 10, len(xs) * 9 // 10
                centre[(i, j)] = ((xs[lo] + xs[hi]) / 2, (ys[lo] + ys[hi]) / 2, xs[hi] - xs[lo], ys[hi] - ys[lo])
    for (a, ca) in centre.items():
        for (b, cb) in centre.items():
            if a >= b:
                continue
            for axis, idx in (("row", 0), ("column", 1)):
                d = cb[1 - idx] - ca[1 - idx]              # y for rows, x for columns
                tol = min(ca[3 - idx], cb[3 - idx]) / 4     # a quarter of the cell's extent
                if a[idx] == b[idx] and abs(d) > tol:
                    fails.append("%s: cells %s and %s are in the same %s but %g px apart across it" %
                                 (path, a, b, axis, d))
                elif a[idx] < b[idx] and d <= tol:
                    fails.append("%s: cell %s is not %s cell %s (%g px)" %
                                 (path, b, "below" if axis == "row" else "right of", a, d))
                elif a[idx] > b[idx] and d >= -tol:
                    fails.append("%s: cell %s is not %s cell %s (%g px)" %
                                 (path, a, "below" if axis == "row" else "right of", b, -d))
    return len(centre)


def check_cells_svg(path, panels, scale, fails):
    """For each panel, one embedded image is its matrix: rows x cols blocks, each of one
    colour, the cell's."""
    with open(path) as f:
        text = f.read()
    images = [read_png(base64.b64decode(d)) for d in re.findall(r'xlink:href="data:image/png;base64,([^"]+)"', text)]
    for (p, mat) in enumerate(panels):
        want = cell_colours(mat, scale)
        n_r, n_c = len(mat), len(mat[0])
        found = False
        for (w, h, pix) in images:
            if w % n_c or h % n_r:
                continue
            bw, bh = w // n_c, h // n_r
            ok = True
            for i in range(n_r):
                for j in range(n_c):
                    c = want[i][j] * bw
                    ok = ok and all(pix[y][3 * j * bw:3 * (j + 1) * bw] == c for y in range(i * bh, (i + 1) * bh))
            found = found or ok
        if not found:
            fails.append("%s: no embedded image is matrix %d (%dx%d) in its colours (images: %s)" %
                         (path, p, n_r, n_c, ", ".join("%dx%d" % (w, h) for (w, h, _) in images) or "none"))


def check_drawn(path, min_fraction, min_colours, fails):
    w, h, pix = raster(path)
    hist = {}
    for row in pix:
        for x in range(0, 3 * w, 3):
            c = row[x:x + 3]
            hist[c] = hist.get(c, 0) + 1
    bg, n_bg = max(hist.items(), key=lambda kv: kv[1])
    fraction = 1 - n_bg / (w * h)
    if fraction < min_fraction:
        fails.append("%s: %.2f%% of the pixels differ from the background #%s, expected at least %.2f%%" %
                     (path, 100 * fraction, bg.hex(), 100 * min_fraction))
    if len(hist) < min_colours:
        fails.append("%s: %d colours, expected at least %d" % (path, len(hist), min_colours))


def check_svg(path, min_glyphs, min_shapes, fails):
    with open(path) as f:
        text = f.read()
    body = re.sub(r"<defs>.*?</defs>", "", text, flags=re.S)
    glyphs = len(re.findall(r'<use[^>]*xlink:href="#glyph', body))
    shapes = len(re.findall(r"<(?:path|rect|image|use)\b(?![^>]*#glyph)", body))
    if glyphs < min_glyphs:
        fails.append("%s: %d glyphs drawn, expected at least %d" % (path, glyphs, min_glyphs))
    if shapes < min_shapes:
        fails.append("%s: %d paths, rectangles and images drawn, expected at least %d" % (path, shapes, min_shapes))


def cell_label(v):
    text = ("%.4f" % v).rstrip("0").rstrip(".")
    return text[1:] if text.startswith("0.") else text


def check_pdf_text(path, words, fails):
    text = subprocess.run(["pdftotext", path, "-"], check=True, capture_output=True, text=True).stdout
    for word in words:
        if word not in text:
            fails.append("%s: %r not in its text (%r)" % (path, word, " ".join(text.split())[:200]))


def write_matrix(capture, what, layer, head, out):
    with open(capture) as f:
        att = json.load(f)["attentions"]
    if what == "heatmap":
        rows = att[layer][head]
    elif what == "grid":
        with open(out, "w") as f:
            json.dump({"panels": att[layer]}, f)
        return
    else:
        n = len(att[0][0])
        rows = [[1.0 if i == j else 0.0 for j in range(n)] for i in range(n)]
        for lay in att[:layer + 1]:
            a = [[0.5 * sum(h[i][j] for h in lay) / len(lay) + (0.5 if i == j else 0.0) for j in range(n)]
                 for i in range(n)]
            rows = [[sum(a[i][k] * rows[k][j] for k in range(n)) for j in range(n)] for i in range(n)]
    with open(out, "w") as f:
        json.dump({"rows": rows}, f)


def main(argv):
    fails = []
    cmd = argv[1]
    if cmd == "matrix":
        write_matrix(argv[2], argv[3], int(argv[4]), int(argv[5]), argv[6])
        return 0
    path = argv[2]
    if cmd == "cells":
        with open(argv[3]) as f:
            m = json.load(f)
        panels = m["panels"] if "panels" in m else [m["rows"]]
        if path.endswith(".svg"):
            check_cells_svg(path, panels, argv[4], fails)
        check_cells_raster(path, panels, argv[4], int(argv[5]) if len(argv) > 5 else 400, fails)
    elif cmd == "drawn":
        check_drawn(path, float(argv[3]), int(argv[4]), fails)
    elif cmd == "svg":
        check_svg(path, int(argv[3]), int(argv[4]), fails)
    elif cmd == "pdf-text":
        words = argv[3:]
        if words[:1] == ["--labels"]:
            with open(words[1]) as f:
                m = json.load(f)
            words = words[2:] + [cell_label(v) for r in m["rows"] for v in r]
        check_pdf_text(path, words, fails)
    else:
        print("check-figure.py: unknown check %r" % cmd, file=sys.stderr)
        return 2
    for msg in fails:
        print("check-figure: " + msg, file=sys.stderr)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
