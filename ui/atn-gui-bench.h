/* The GUI benchmark harness (`attnscope --gui-bench`): drives the real window headlessly
 * (under Xvfb) and times what a person waits for — from a keystroke to the redrawn Head
 * view, a layer/head switch, the Model view's thumbnails.  Prints a report (or JSON). */
#pragma once

int atn_gui_bench_main(int argc, char **argv);
