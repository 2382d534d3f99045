/* AtnCheckWork: "Check my work" in the Trace view — a student types their own numbers for a
 * step (scores, scaled scores, softmax, output; one line per step, numbers separated by
 * spaces or semicolons), and the first step where theirs differ from the model's (each held
 * to one unit of its last typed decimal, engine/include/check-work.h) is marked in the trace
 * and explained with the trace's own numbers.  Checked again as they type and whenever the
 * trace changes. */
#pragma once

#include <gtk/gtk.h>

#include "attnscope.h"
#include "check-work.h"

G_BEGIN_DECLS

#define ATN_TYPE_CHECK_WORK (atn_check_work_get_type())
G_DECLARE_FINAL_TYPE(AtnCheckWork, atn_check_work, ATN, CHECK_WORK, GtkWidget)

GtkWidget *atn_check_work_new(void);
/* The trace to check against (borrowed: valid until the next call; NULL: none, nothing
 * checked), its key tokens' labels ([trace->n], borrowed likewise, or NULL) and the widget
 * whose steps are marked (the Trace view: atn_trace_view_get_step_widget's boxes get the
 * CSS class "check-differs"), re-checking what is typed. */
void atn_check_work_set_trace(AtnCheckWork *self, const atn_trace *trace, const char *const *tokens,
                              GtkWidget *trace_view);

/* For tests: the entry of step (type into it as a user would), the marked trace step
 * (an atn_trace_step; -1: none) and the explanation shown (borrowed). */
GtkEditable *atn_check_work_get_entry(AtnCheckWork *self, atn_check_step step);
int atn_check_work_get_marked(AtnCheckWork *self);
const char *atn_check_work_get_message(AtnCheckWork *self);

G_END_DECLS
