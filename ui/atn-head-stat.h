/* AtnHeadStat: one row of the Statistics table (one head's numbers from engine/include/analysis.h),
 * as properties so GtkColumnView can sort by them. */
#pragma once

#include <glib-object.h>

#include "analysis.h"

G_BEGIN_DECLS

#define ATN_TYPE_HEAD_STAT (atn_head_stat_get_type())
G_DECLARE_FINAL_TYPE(AtnHeadStat, atn_head_stat, ATN, HEAD_STAT, GObject)

AtnHeadStat *atn_head_stat_new(int layer, int head, const atn_head_stats *stats);
/* A K/V group's row (the Statistics view's "By K/V group"): layer, its K/V head (get_head
 * answers it) and how many query heads it has (k · group_size .. k · group_size + group_size - 1),
 * stats their means (atn_stats_by_kv_group). */
AtnHeadStat *atn_head_stat_new_group(int layer, int kv_head, int group_size, const atn_head_stats *stats);
int atn_head_stat_get_group_size(AtnHeadStat *self);   /* 0: a head's row */
int atn_head_stat_get_layer(AtnHeadStat *self);
int atn_head_stat_get_head(AtnHeadStat *self);
/* New numbers for the same head (a new result): notifies each property that changed, so a
 * table's cells follow without their rows being rebuilt. */
void atn_head_stat_set_stats(AtnHeadStat *self, const atn_head_stats *stats);
/* The text of the "pattern" column instead of the pattern's name (copied; NULL: the pattern's
 * name again): a merged statistics file's label from corpus evidence (atn_corpus_stats_label). */
void atn_head_stat_set_label(AtnHeadStat *self, const char *label);

/* The numeric columns, in table order: the property names. */
extern const char *const atn_head_stat_numeric_props[];

G_END_DECLS
