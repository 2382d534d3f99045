/* attnscope train's pieces (app/cmd-train*.c): the options as read from the command line,
 * and the experiments that train several models (cmd-train-exp.c). */
#ifndef ATN_CMD_TRAIN_H
#define ATN_CMD_TRAIN_H

#include "train.h"

/* What the command line says: the trainer's options and the command's own (strings borrowed
 * from argv). */
typedef struct train_cli {
    atn_train_options o;
    const char *out_dir, *log_path, *dump, *sweep, *plot;   /* plot: plots[0] */
    const char *plots[3];         /* --plot FILE, given up to three times: the figure in each file */
    int n_plots;
    const char *test_lengths;     /* --test-lengths L1,L2,...: train short / test long */
    const char *schemes;          /* --schemes P1,P2,...: its position schemes (NULL: all five) */
    const char *grad_depths;      /* --grad-depths D1,D2,...: Post-LN vs Pre-LN gradient norms */
    const char *placements;       /* --placements post,pre,...: their norm placements */
    bool positions_given, norm_given, layers_given;
    int32_t log_every, seeds;
    bool help;
} train_cli;

/* Monotonic seconds. */
double train_now_s(void);

/* --test-lengths: one model per position scheme (and seed) trained at --length, evaluated
 * at --length and each test length (atn_trainer_eval_length): a table on stdout, --log
 * FILE.csv|.json, --plot FILE.png|.svg|.pdf.  A CLI_EXIT_* code. */
int train_test_long(const train_cli *tc);

/* --grad-depths: one model per norm placement and depth, each layer's gradient norm over
 * the first --steps steps: a table on stdout, --log, --plot.  A CLI_EXIT_* code. */
int train_grad_depths(const train_cli *tc);

#endif
