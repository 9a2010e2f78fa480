#!/usr/bin/env python3
"""Render the figures described in g2c exercise result files as PNGs.

Every exercise writes a JSON object with a "figures" array; each figure names its output file and
its kind (line, scatter, heatmaps, bar). Values that are strings starting with "/" are JSON pointers
into the same document, so a figure can refer to a series instead of repeating it.

Optional keys, by kind:
  line, scatter  series: label, style, color, marker, size; figure: hlines and vlines
                 ([{"y" or "x", label, color, style}]), logx, logy, aspect ("equal")
  bar            series: label (the legend goes beside the axes); figure: logy, rotate_labels,
                 hlines
  heatmaps       figure: columns, panel_width, panel_height; panel: matrix, cmap, alpha, vmin, vmax,
                 origin, extent, aspect, colorbar (false hides it), x/yticklabels, title, note (a
                 corner text), contours ([{"levels": [...], "matrix" (default: the panel's), color,
                 width}]), points ([{x, y, color, marker, size, alpha, edgecolor, label}]),
                 legend_loc

    scripts/plot.py results/07-attention/strip_mask.json [more.json ...] [--out DIR]

PNGs are written next to each JSON file (or into --out) and their paths are printed.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


class FigureError(ValueError):
    pass


def resolve(document, value):
    """Follows a JSON pointer ("/runs/0/loss") or returns the value itself."""
    if not (isinstance(value, str) and value.startswith("/")):
        return value
    node = document
    for raw in value[1:].split("/"):
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list):
            if not key.isdigit() or int(key) >= len(node):
                raise FigureError(f"JSON pointer {value!r}: no element {key!r}")
            node = node[int(key)]
        elif isinstance(node, dict):
            if key not in node:
                raise FigureError(f"JSON pointer {value!r}: no key {key!r}")
            node = node[key]
        else:
            raise FigureError(f"JSON pointer {value!r} goes through a {type(node).__name__}")
    return node


def finite(values):
    return [v if isinstance(v, (int, float)) and math.isfinite(v) else float("nan") for v in values]


def draw_line(ax, document, figure, scatter=False):
    for series in figure.get("series", []):
        y = finite(resolve(document, series["y"]))
        x = resolve(document, series.get("x")) if "x" in series else list(range(len(y)))
        if len(x) != len(y):
            raise FigureError(f"series {series.get('label')!r}: {len(x)} x values but {len(y)} y values")
        if scatter:
            ax.scatter(x, y, s=series.get("size", 12), label=series.get("label"), alpha=0.8,
                       color=series.get("color"), marker=series.get("marker"))
        else:
            ax.plot(x, y, series.get("style", "-"), label=series.get("label"), marker=series.get("marker"),
                    color=series.get("color"))
    for line in figure.get("hlines", []):
        ax.axhline(line["y"], color=line.get("color", "gray"), linestyle=line.get("style", "--"),
                   linewidth=1, label=line.get("label"))
    for line in figure.get("vlines", []):
        ax.axvline(line["x"], color=line.get("color", "gray"), linestyle=line.get("style", "--"),
                   linewidth=1, label=line.get("label"))
    if figure.get("aspect"):
        ax.set_aspect(figure["aspect"])
    if figure.get("logx"):
        ax.set_xscale("log")
    if figure.get("logy"):
        ax.set_yscale("log")
    ax.set_xlabel(figure.get("xlabel", ""))
    ax.set_ylabel(figure.get("ylabel", ""))
    ax.grid(True, alpha=0.3)
    if any(s.get("label") for s in figure.get("series", [])) or figure.get("hlines") or figure.get("vlines"):
        ax.legend()


def draw_bar(ax, document, figure):
    series = figure.get("series", [])
    count = max(len(series), 1)
    width = 0.8 / count
    labels = None
    for index, entry in enumerate(series):
        y = finite(resolve(document, entry["y"]))
        labels = [str(v) for v in resolve(document, entry.get("x", list(range(len(y)))))]
        positions = [i + (index - (count - 1) / 2) * width for i in range(len(y))]
        ax.bar(positions, y, width=width, label=entry.get("label"))
    for line in figure.get("hlines", []):
        ax.axhline(line["y"], color=line.get("color", "gray"), linestyle=line.get("style", "--"),
                   linewidth=1, label=line.get("label"))
    if labels:
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=figure.get("rotate_labels", 0))
    ax.set_xlabel(figure.get("xlabel", ""))
    ax.set_ylabel(figure.get("ylabel", ""))
    if figure.get("logy"):
        ax.set_yscale("log")
    if any(s.get("label") for s in series) or figure.get("hlines"):
        # Beside the axes, not over them: grouped bars fill the whole plot area.
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)


def draw_heatmaps(fig, document, figure):
    panels = figure.get("panels", [])
    if not panels:
        raise FigureError("a heatmaps figure needs at least one panel")
    columns = figure.get("columns", min(len(panels), 2))
    rows = math.ceil(len(panels) / columns)
    fig.set_size_inches(figure.get("width", figure.get("panel_width", 5.5) * columns),
                        figure.get("height", figure.get("panel_height", 5.0) * rows))
    for index, panel in enumerate(panels):
        ax = fig.add_subplot(rows, columns, index + 1)
        matrix = [finite(row) for row in resolve(document, panel["matrix"])]
        extent = resolve(document, panel.get("extent"))
        origin = panel.get("origin", "upper")
        image = ax.imshow(matrix, cmap=panel.get("cmap", figure.get("cmap", "viridis")),
                          aspect=panel.get("aspect", "auto"), origin=origin, extent=extent,
                          vmin=panel.get("vmin"), vmax=panel.get("vmax"), alpha=panel.get("alpha"))
        if panel.get("colorbar", True):
            fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
        for contour in panel.get("contours", []):
            draw_contour(ax, document, contour, matrix, extent, origin)
        for key, setter, rotation in (("xticklabels", ax.set_xticklabels, 90),
                                      ("yticklabels", ax.set_yticklabels, 0)):
            if key in panel:
                labels = resolve(document, panel[key])
                (ax.set_xticks if key[0] == "x" else ax.set_yticks)(range(len(labels)))
                setter(labels, rotation=rotation, fontsize=panel.get("fontsize", 8))
        for points in panel.get("points", []):
            marker = points.get("marker", "o")
            # Line-only markers (x, +) take their colour from c; an edge colour would repaint them.
            edges = {} if marker in ("x", "+", "|", "_", "1", "2", "3", "4") else {
                "edgecolors": points.get("edgecolor", "white"), "linewidths": 0.3}
            ax.scatter(resolve(document, points["x"]), resolve(document, points["y"]),
                       s=points.get("size", 10), c=points.get("color"), marker=marker,
                       alpha=points.get("alpha"), label=points.get("label"), **edges)
        if any(points.get("label") for points in panel.get("points", [])):
            ax.legend(fontsize=7, loc=panel.get("legend_loc", "best"))
        if panel.get("note"):
            ax.text(0.02, 0.98, panel["note"], transform=ax.transAxes, ha="left", va="top", fontsize=8,
                    bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "none"})
        ax.set_title(panel.get("title", ""))
        ax.set_xlabel(panel.get("xlabel", ""))
        ax.set_ylabel(panel.get("ylabel", ""))


def draw_contour(ax, document, contour, panel_matrix, extent, origin):
    """Level lines over a heatmap panel; levels outside the data's range are left out."""
    matrix = panel_matrix
    if "matrix" in contour:
        matrix = [finite(row) for row in resolve(document, contour["matrix"])]
    values = [v for row in matrix for v in row if math.isfinite(v)]
    if not values:
        return
    levels = sorted(level for level in contour.get("levels", [])
                    if min(values) < level < max(values))
    if levels:
        ax.contour(matrix, levels=levels, colors=contour.get("color", "black"),
                   linewidths=contour.get("width", 1.2), origin=origin, extent=extent)


def readable_mode():
    """What a plain open() would give a new file here (0644 under the usual umask 022): mkstemp's
    private 0600 is right for a temporary file, not for a result someone else may read."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def render(document, figure, out_dir):
    if not isinstance(figure, dict) or "file" not in figure or "kind" not in figure:
        raise FigureError("every figure needs a 'file' and a 'kind'")
    kind = figure["kind"]
    fig = plt.figure(figsize=(figure.get("width", 7), figure.get("height", 4.5)))
    if kind == "heatmaps":
        draw_heatmaps(fig, document, figure)
    else:
        ax = fig.add_subplot(1, 1, 1)
        if kind == "line":
            draw_line(ax, document, figure)
        elif kind == "scatter":
            draw_line(ax, document, figure, scatter=True)
        elif kind == "bar":
            draw_bar(ax, document, figure)
        else:
            raise FigureError(f"unknown figure kind {kind!r} (expected line, scatter, heatmaps or bar)")
    fig.suptitle(figure.get("title", ""))
    fig.tight_layout()
    path = os.path.join(out_dir, os.path.basename(figure["file"]))
    # Write through a temporary file so an interrupted run never leaves a broken PNG behind.
    handle, temporary = tempfile.mkstemp(suffix=".png", dir=out_dir)
    os.close(handle)
    try:
        fig.savefig(temporary, dpi=figure.get("dpi", 120))
        os.chmod(temporary, readable_mode())
        os.replace(temporary, path)
    finally:
        plt.close(fig)
        if os.path.exists(temporary):
            os.remove(temporary)
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", help="result JSON files written by the exercises")
    parser.add_argument("--out", help="folder for the PNGs (default: next to each JSON file)")
    args = parser.parse_args(argv)
    failures = 0
    for path in args.results:
        try:
            with open(path, encoding="utf-8") as handle:
                document = json.load(handle)
        except (OSError, json.JSONDecodeError) as error:
            print(f"plot.py: cannot read {path}: {error}", file=sys.stderr)
            failures += 1
            continue
        figures = document.get("figures", []) if isinstance(document, dict) else []
        if not figures:
            print(f"plot.py: {path} describes no figures", file=sys.stderr)
            continue
        out_dir = args.out or os.path.dirname(os.path.abspath(path))
        os.makedirs(out_dir, exist_ok=True)
        for figure in figures:
            try:
                print(f"wrote {render(document, figure, out_dir)}")
            except (FigureError, KeyError, TypeError, ValueError) as error:
                name = figure.get("file", "?") if isinstance(figure, dict) else "?"
                print(f"plot.py: {path}: figure {name}: {error}", file=sys.stderr)
                failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
