/* AtnHeadStat: one head's statistics as sortable properties. */
#include "atn-head-stat.h"
#include "atn-head-stat-test.h"

#include "atn-labels.h"

#include <glib/gi18n.h>
#include <string.h>

struct _AtnHeadStat {
    GObject parent_instance;
    int layer, head;
    int group_size;   /* 0: a head's row; else a K/V group's (head = its K/V head, of this many query heads) */
    atn_head_stats s;
    char *label;   /* shown instead of the pattern's name (a merged file's corpus label), or NULL */
};

G_DEFINE_FINAL_TYPE(AtnHeadStat, atn_head_stat, G_TYPE_OBJECT)

enum {
    PROP_0,
    PROP_LAYER,
    PROP_HEAD,
    PROP_INDEX,      /* layer * 1000 + head: sorts by layer then head */
    PROP_ENTROPY,
    PROP_CLS,
    PROP_SEP,
    PROP_SELF,
    PROP_PREV,
    PROP_NEXT,
    PROP_DISTANCE,
    PROP_PATTERN,
    N_PROPS
};
static GParamSpec *props[N_PROPS];

const char *const atn_head_stat_numeric_props[] = {"entropy", "cls", "sep", "self", "prev", "next", "distance", NULL};

static void atn_head_stat_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec) {
    AtnHeadStat *self = ATN_HEAD_STAT(object);
    switch (id) {
    case PROP_LAYER: g_value_set_int(value, self->layer); break;
    case PROP_HEAD: g_value_set_int(value, self->head); break;
    case PROP_INDEX: g_value_set_int(value, self->layer * 1000 + self->head); break;
    case PROP_ENTROPY: g_value_set_double(value, self->s.entropy); break;
    case PROP_CLS: g_value_set_double(value, self->s.cls); break;
    case PROP_SEP: g_value_set_double(value, self->s.sep); break;
    case PROP_SELF: g_value_set_double(value, self->s.self); break;
    case PROP_PREV: g_value_set_double(value, self->s.prev); break;
    case PROP_NEXT: g_value_set_double(value, self->s.next); break;
    case PROP_DISTANCE: g_value_set_double(value, self->s.distance); break;
    case PROP_PATTERN:   /* an attention file's layer without this head: no numbers (NaN, shown "—") */
        g_value_set_string(value, atn_head_stats_absent(&self->s) ? _("no head")
                                  : self->label ? self->label : atn_label_pattern(self->s.pattern));
        break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

static void atn_head_stat_finalize(GObject *object) {
    g_free(ATN_HEAD_STAT(object)->label);
    G_OBJECT_CLASS(atn_head_stat_parent_class)->finalize(object);
}

static void atn_head_stat_class_init(AtnHeadStatClass *klass) {
    GObjectClass *oc = G_OBJECT_CLASS(klass);
    oc->finalize = atn_head_stat_finalize;
    oc->get_property = atn_head_stat_get_property;
    GParamFlags f = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;
    props[PROP_LAYER] = g_param_spec_int("layer", NULL, NULL, 0, G_MAXINT, 0, f);
    props[PROP_HEAD] = g_param_spec_int("head", NULL, NULL, 0, G_MAXINT, 0, f);
    props[PROP_INDEX] = g_param_spec_int("index", NULL, NULL, 0, G_MAXINT, 0, f);
    props[PROP_ENTROPY] = g_param_spec_double("entropy", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 0, f);
    props[PROP_CLS] = g_param_spec_double("cls", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 0, f);
    props[PROP_SEP] = g_param_spec_double("sep", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 0, f);
    props[PROP_SELF] = g_param_spec_double("self", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 0, f);
    props[PROP_PREV] = g_param_spec_double("prev", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 0, f);
    props[PROP_NEXT] = g_param_spec_double("next", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 0, f);
    props[PROP_DISTANCE] = g_param_spec_double("distance", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 0, f);
    props[PROP_PATTERN] = g_param_spec_string("pattern", NULL, NULL, NULL, f);
    g_object_class_install_properties(oc, N_PROPS, props);
}

static void atn_head_stat_init(AtnHeadStat *self) {}

AtnHeadStat *atn_head_stat_new(int layer, int head, const atn_head_stats *stats) {
    AtnHeadStat *self = g_object_new(ATN_TYPE_HEAD_STAT, NULL);
    self->layer = layer;
    self->head = head;
    self->s = *stats;
    return self;
}

AtnHeadStat *atn_head_stat_new_group(int layer, int kv_head, int group_size, const atn_head_stats *stats) {
    AtnHeadStat *self = atn_head_stat_new(layer, kv_head, stats);
    self->group_size = group_size;
    return self;
}

int atn_head_stat_get_group_size(AtnHeadStat *self) {
    g_return_val_if_fail(ATN_IS_HEAD_STAT(self), 0);
    return self->group_size;
}

int atn_head_stat_get_layer(AtnHeadStat *self) {
    g_return_val_if_fail(ATN_IS_HEAD_STAT(self), 0);
    return self->layer;
}
int atn_head_stat_get_head(AtnHeadStat *self) {
    g_return_val_if_fail(ATN_IS_HEAD_STAT(self), 0);
    return self->head;
}
void atn_head_stat_set_stats(AtnHeadStat *self, const atn_head_stats *stats) {
    g_return_if_fail(ATN_IS_HEAD_STAT(self));
    g_return_if_fail(stats != NULL);
    atn_head_stats was = self->s;
    self->s = *stats;
    g_object_freeze_notify(G_OBJECT(self));
#define NOTIFY_IF(field, prop) \
    if (memcmp(&was.field, &stats->field, sizeof was.field)) \
        g_object_notify_by_pspec(G_OBJECT(self), props[prop]);
    NOTIFY_IF(entropy, PROP_ENTROPY)
    NOTIFY_IF(cls, PROP_CLS)
    NOTIFY_IF(sep, PROP_SEP)
    NOTIFY_IF(self, PROP_SELF)
    NOTIFY_IF(prev, PROP_PREV)
    NOTIFY_IF(next, PROP_NEXT)
    NOTIFY_IF(distance, PROP_DISTANCE)
    NOTIFY_IF(pattern, PROP_PATTERN)
#undef NOTIFY_IF
    g_object_thaw_notify(G_OBJECT(self));
}

const atn_head_stats *atn_head_stat_get_stats(AtnHeadStat *self) {
    g_return_val_if_fail(ATN_IS_HEAD_STAT(self), NULL);
    return &self->s;
}

void atn_head_stat_set_label(AtnHeadStat *self, const char *label) {
    g_return_if_fail(ATN_IS_HEAD_STAT(self));
    if (!g_strcmp0(self->label, label))
        return;
    g_free(self->label);
    self->label = g_strdup(label);
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_PATTERN]);
}
