/* The command line's one figure writer: every command that writes a PNG, SVG or PDF (export,
 * diff, importance, cost) draws through ui/render in memory and writes the bytes through the
 * atomic writer here, so each refuses, names and exits the same way. */
#ifndef ATN_CLI_FIGURE_H
#define ATN_CLI_FIGURE_H

#include "render.h"

/* Draws a figure of width x height points with draw(cr, width, height, user) (PNG: scale
 * pixels per point) and writes it to path through cli_atomic_open / cli_atomic_close: a
 * Ctrl-C while drawing keeps the old file.  folder (NULL: none) is made when missing, after
 * the drawing and before the write (export --all-heads -o NEWDIR/ makes its folder with the
 * first file).  Returns CLI_EXIT_OK; CLI_EXIT_USAGE when the renderer refuses the figure
 * ("PATH: REASON", e.g. over the pixel budget), the folder cannot be made ("FOLDER: cannot
 * create the folder: REASON") or the file cannot be written (cli_atomic_* says why); an
 * interrupted write returns CLI_EXIT_OK and main exits 130. */
int cli_write_figure(const char *path, atn_output_format fmt, double width, double height,
                     double scale, atn_draw_fn draw, void *user, const char *folder);

#endif
