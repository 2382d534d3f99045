/* The post-processors of a tokenizer.json pipeline, as the Rust tokenizers library's
 * processors module runs them: BertProcessing, RobertaProcessing, TemplateProcessing,
 * ByteLevel (offset trimming) and Sequence.  They add the special tokens and set the type
 * ids of the encodings of one sequence or a pair.  Reading them from the file is
 * tok-pipeline-json.c's. */
#include "tokenize/tok-pipeline-private.h"

#include <stdlib.h>

/* ---- post-processing -------------------------------------------------------------- */

int atn_tp_added_count(const postproc *pp, bool pair) {
    if (!pp)
        return 0;
    switch (pp->type) {
    case PP_BERT:
        return pair ? 3 : 2;
    case PP_ROBERTA:
        return pair ? 4 : 2;
    case PP_TEMPLATE: {
        int n = 0;
        const tpl_piece *v = pair ? pp->pair : pp->single;
        int k = pair ? pp->n_pair : pp->n_single;
        for (int i = 0; i < k; i++)
            if (v[i].special)
                n += v[i].n_ids;
        return n;
    }
    case PP_SEQUENCE: {
        int n = 0;
        for (int i = 0; i < pp->n_kids; i++)
            n += atn_tp_added_count(&pp->kids[i], pair);
        return n;
    }
    default:
        return 0;
    }
}

/* byte_level::process_offsets.  The library trims a count of characters off the offsets
 * it reports in characters (what transformers' offset_mapping gives); here the spans are
 * in bytes, so the same characters are stepped over in the original text src. */
static void trim_offsets(ebuf *e, bool add_prefix_space, const char *src) {
    for (size_t i = 0; i < e->n; i++) {
        etok *t = &e->v[i];
        int32_t lead = t->lead, trail = t->trail;
        if (t->special || t->start < 0 || !src)
            continue;
        if (lead > 0) {
            bool is_first = i == 0 || t->start == 0;
            if (is_first && add_prefix_space && lead == 1)
                lead = 0;
            int32_t p = t->start;
            for (int32_t k = 0; k < lead && p < t->end; k++) {
                p++;
                while (p < t->end && ((unsigned char)src[p] & 0xC0) == 0x80)
                    p++;
            }
            t->start = p;
        }
        if (trail > 0) {
            /* offsets.1 >= trailing_spaces, in characters */
            int32_t chars_before = 0;
            for (int32_t p = 0; p < t->end && chars_before < trail; p++)
                chars_before += ((unsigned char)src[p] & 0xC0) != 0x80;
            if (chars_before >= trail) {
                int32_t p = t->end;
                for (int32_t k = 0; k < trail && p > t->start; k++) {
                    p--;
                    while (p > t->start && ((unsigned char)src[p] & 0xC0) == 0x80)
                        p--;
                }
                t->end = p;
            }
        }
    }
}

/* A token the post-processor adds: its text is the vocabulary entry of its id (checked to
 * exist at load), trimming looks at the name the processor gives. */
static etok special_tok(const pipeline *pl, int32_t id, const char *text, int32_t type_id) {
    etok t = {id, -1, -1, -1, type_id, true, false, false, atn_tp_id_text(pl, id), -1, 0, 0};
    atn_tp_count_trim(text, &t.lead, &t.trail);
    return t;
}

/* Runs processor pp on the n_enc (1 or 2) encodings. */
bool atn_tp_post_process(const pipeline *pl, const postproc *pp, ebuf *enc, int n_enc,
                         const char *const src[2]) {
    switch (pp->type) {
    case PP_BYTELEVEL:
        if (pp->trim_offsets)
            for (int i = 0; i < n_enc; i++)
                trim_offsets(&enc[i], pp->add_prefix_space, src[i]);
        return true;
    case PP_SEQUENCE:
        for (int i = 0; i < pp->n_kids; i++)
            if (!atn_tp_post_process(pl, &pp->kids[i], enc, n_enc, src))
                return false;
        return true;
    case PP_BERT:
    case PP_ROBERTA: {
        bool rob = pp->type == PP_ROBERTA;
        if (rob && pp->trim_offsets)
            for (int i = 0; i < n_enc; i++)
                trim_offsets(&enc[i], pp->add_prefix_space, src[i]);
        for (int i = 0; i < n_enc; i++) {
            int32_t ty = rob ? 0 : i;
            ebuf o = {0};
            bool ok = true;
            if (i == 0)
                ok = atn_tp_eb_push(&o, special_tok(pl, pp->cls_id, pp->cls, 0));
            else if (rob)
                ok = atn_tp_eb_push(&o, special_tok(pl, pp->sep_id, pp->sep, 0));
            for (size_t k = 0; k < enc[i].n && ok; k++) {
                etok t = enc[i].v[k];
                t.type_id = ty;
                ok = atn_tp_eb_push(&o, t);
            }
            ok = ok && atn_tp_eb_push(&o, special_tok(pl, pp->sep_id, pp->sep, ty));
            if (!ok) {
                free(o.v);
                return false;
            }
            free(enc[i].v);
            enc[i] = o;
        }
        return true;
    }
    case PP_TEMPLATE: {
        const tpl_piece *v = n_enc == 2 ? pp->pair : pp->single;
        int k = n_enc == 2 ? pp->n_pair : pp->n_single;
        ebuf o = {0};
        bool ok = true;
        for (int i = 0; i < k && ok; i++) {
            if (v[i].special) {
                for (int m = 0; m < v[i].n_ids && ok; m++)
                    ok = atn_tp_eb_push(&o, special_tok(pl, v[i].ids[m], v[i].tokens[m],
                                                        v[i].type_id));
            } else if (v[i].seq < n_enc) {
                const ebuf *from = &enc[v[i].seq];
                for (size_t q = 0; q < from->n && ok; q++) {
                    etok t = from->v[q];
                    t.type_id = v[i].type_id;
                    ok = atn_tp_eb_push(&o, t);
                }
            }
        }
        if (!ok) {
            free(o.v);
            return false;
        }
        for (int i = 0; i < n_enc; i++) {
            free(enc[i].v);
            enc[i] = (ebuf){0};
        }
        enc[0] = o;
        return true;
    }
    }
    return true;
}

static void postproc_clear(postproc *p) {
    free(p->cls);
    free(p->sep);
    for (int pass = 0; pass < 2; pass++) {
        tpl_piece *v = pass ? p->pair : p->single;
        int n = pass ? p->n_pair : p->n_single;
        for (int i = 0; i < n; i++) {
            free(v[i].ids);
            for (int k = 0; k < v[i].n_ids; k++)
                free(v[i].tokens[k]);
            free(v[i].tokens);
        }
        free(v);
    }
    for (int i = 0; i < p->n_kids; i++)
        postproc_clear(&p->kids[i]);
    free(p->kids);
}

void atn_tp_free_postproc(postproc *p) {
    if (p) {
        postproc_clear(p);
        free(p);
    }
}
