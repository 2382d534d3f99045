/* AtnTraceView's insides, shared by atn-trace-view.c (the view: the plan applied to the
 * steps' widgets, recomputing, stepping, the figure, the GObject), atn-trace-view-inputs.c
 * (a toy model's editable inputs and Reset) and atn-trace-view-layout.c (the key tables'
 * column fit, the divider, the heatmap stacked above the steps, measure and allocation).
 * Not for other files: they use atn-trace-view.h. */
#pragma once

#include "atn-trace-view.h"

#include "atn-trace-plan.h"

G_BEGIN_DECLS

typedef struct tstep_widgets {
    GtkWidget *box;
    GtkLabel *formula, *note;
    GtkGrid *grid;      /* a table, or */
    GtkFlowBox *flow;   /* a vector that wraps (AtnTracePlanStep.vector) */
    GtkLabel **cells;   /* [rows][cols]; NULL for a long table (list) */
    int rows, cols;
    /* a long table (rows > ATN_TRACE_LIST_ROWS: "show all n keys" at a long input): a
       GtkColumnView over the rows, which makes widgets for the visible rows only, in a scroller
       of its own; the text it shows, [rows][cols] (row 0 the titles), is kept here */
    GtkColumnView *list;
    char **list_cells;
} tstep_widgets;

/* Above this many rows a table is a GtkColumnView (tens of thousands of labels would take
 * seconds to make and lay out). */
#define ATN_TRACE_LIST_ROWS 100

typedef struct input_cell {
    atn_toy_matrix which;
    int row, col;
} input_cell;

struct _AtnTraceView {
    GtkWidget parent_instance;
    GtkWidget *box;
    GtkDropDown *query_drop;
    int drop_stack;          /* the stack whose query tokens query_drop lists (atn_stack_kind) */
    GtkLabel *step_label, *intro_label, *legend_label, *hidden_label;
    GtkButton *prev_button, *next_button, *all_button;
    GtkSpinButton *layer_spin, *head_spin;
    GtkToggleButton *reveal_button;
    GtkPaned *paned;
    GtkWidget *side_box;
    GtkButton *reset_button;     /* in the inputs (toy models), or NULL */
    GtkLabel *input_error;       /* why a typed number was refused, or NULL */
    GtkScrolledWindow *scroller;
    GtkBox *sheet, *inputs_box, *steps_box;
    AtnHeatmap *heatmap;
    GtkWidget *keys_box;         /* "Keys listed: top [8] · Show all n keys", above 16 keys */
    GtkSpinButton *top_spin;
    GtkCheckButton *all_keys;

    AtnSession *session;
    AtnResult *result;       /* what the trace was computed from */
    atn_trace *trace;
    int step;
    gboolean reveal;         /* later steps hidden until reached */
    int paned_width;         /* the width the side pane was last sized for */
    int paned_pos;           /* the divider set for it (divider_for) */
    gboolean stacked;        /* the heatmap's pane is inside the sheet, above the steps (side_useful) */
    guint stack_idle_id;     /* an idle moving it (the hierarchy does not change during an allocation) */
    guint scroll_tick_id;    /* scrolling to the step once it is laid out */
    int scroll_frames;
    int max_cols;            /* columns of d_k the key/value tables show: as many as fit the sheet */
    guint cols_idle_id;      /* an idle applying want_cols (a table is not rebuilt during an allocation) */
    guint warm_id;           /* an idle building the steps' tables while the view is hidden (warm_cb) */
    int warm_step;           /* the next step warm_cb builds */
    AtnTracePlanStep *warm_plans;   /* [ATN_TRACE_STEP_COUNT], the shapes warm_cb builds, or NULL */
    AtnModelHandle *tables_model;   /* the model whose result the tables were last built for while
                                       hidden (compared, never dereferenced: not held) */
    int want_cols;           /* what the last allocation found to fit */
    /* the key table's column widths at the last measure (px), for the trace and font they were
       measured with: see fit_cols */
    guint trace_gen, colw_gen;   /* each computed trace gets the next number */
    char *colw_font;
    int colw_fixed, colw_ell, colw[8], colw_k;
    GHashTable *colw_cache;   /* 'b'|'r' + text with its digits as 0 -> width px, for colw_font */
    guint colw_measured;      /* texts measured with Pango for the column fit (tests) */
    double font_scale;
    gboolean dirty;
    gboolean syncing;
    tstep_widgets steps[ATN_TRACE_STEP_COUNT];
    GtkWidget *check;        /* "Check my work" (atn-check-work.c), after the inputs */
    GHashTable *inputs;      /* "which:row:col" -> GtkEntry (borrowed) */
    AtnModelHandle *inputs_model;
    int inputs_layer;
};


/* The inputs of a toy model's layer (X and the layer's weights), rebuilt when the model or
 * layer changed since the last call; nothing for other models (atn-trace-view-inputs.c). */
void _atn_trace_view_build_inputs(AtnTraceView *self);

/* Layout (atn-trace-view-layout.c). */
/* Measures the key table's column widths (keys8: its plan with 8 columns, or NULL to make
 * one) into colw_*, for fit_cols. */
void _atn_trace_view_measure_cols(AtnTraceView *self, const AtnTracePlanStep *keys8);
/* The side pane's least width (px). */
int _atn_trace_view_side_floor(AtnTraceView *self);
/* Moves the heatmap's pane into the sheet, above the steps (stacked), or back beside it. */
void _atn_trace_view_set_stacked(AtnTraceView *self, gboolean stacked);
/* Sets the divider again when the view's width changed (the paned's notify::max-position). */
void _atn_trace_view_on_paned_width(GtkPaned *paned, GParamSpec *p, AtnTraceView *self);
/* GtkWidget's measure and size_allocate for the view. */
void _atn_trace_view_measure(GtkWidget *widget, GtkOrientation o, int for_size, int *min, int *nat, int *min_base,
                             int *nat_base);
void _atn_trace_view_size_allocate(GtkWidget *widget, int width, int height, int baseline);

G_END_DECLS
