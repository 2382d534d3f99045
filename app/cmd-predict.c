/* attnscope predict: the masked-LM head's top guesses for every [MASK] in the text, or,
 * for a causal model (GPT-2), the next-token guesses after the last token (--after N: after
 * token N). */
#include "cli.h"

#include <stdio.h>
#include <string.h>

/* A guess as the text output names it: its token, or "#id" for a model without a tokenizer
 * (random:SHAPE), whose tokens read "?". */
static const char *pred_text(const atn_prediction *p) {
    static char buf[32];
    if (p->token && strcmp(p->token, "?"))
        return p->token;
    snprintf(buf, sizeof buf, "#%d", p->id);
    return buf;
}

int cmd_predict(int argc, char **argv) {
    cli_args a;
    static const char *const flags[] = {"help", "json", CLI_INTERVENTION_FLAGS, NULL};
    if (!cli_parse(&a, "attnscope predict", argc, argv, flags))
        return CLI_EXIT_USAGE;
    if (cli_flag(&a, "help")) {
        printf("Usage: attnscope predict --model M --text \"the cat sat on the [MASK] .\" [--top K] [--json]\n"
               "       attnscope predict --model GPT2 (--text T | --ids 1,2,3) [--after N] [--top K] [--json]\n\n"
               "Lists the most likely words for each [MASK] token, with probabilities.  A causal model\n"
               "(GPT-2) guesses the next token instead: after the last token, or after token N (0-based),\n"
               "seeing only the tokens up to it.\n");
        return 0;
    }
    bool ok = true;
    long top = cli_get_int(&a, "top", 5, 1, 100, &ok);
    bool json = cli_flag(&a, "json");
    if (!ok)
        return CLI_EXIT_USAGE;
    const char *after_s = cli_get(&a, "after");
    long after = cli_get_int(&a, "after", -1, 0, CLI_MAX_INDEX, &ok);
    if (!ok)
        return CLI_EXIT_USAGE;
    atn_model *model;
    atn_encoding *enc;
    atn_run *run;
    int rc = cli_model_run(&a, &model, &enc, &run);
    if (rc == CLI_EXIT_OK && atn_model_is_encoder_decoder(model)) {
        /* the decoder's next-token guesses after each target position (teacher forcing) */
        const atn_capture *cap = atn_run_capture(run);
        int32_t from = after_s ? (int32_t)after : 0, to = after_s ? (int32_t)after : cap->n_tgt - 1;
        if (from >= cap->n_tgt) {
            cli_error("attnscope predict: --after %ld: the decoder input has tokens 0..%d", after, cap->n_tgt - 1);
            rc = CLI_EXIT_USAGE;
        }
        if (json && rc == CLI_EXIT_OK)
            printf("[");
        for (int32_t pos = from; pos <= to && rc == CLI_EXIT_OK; pos++) {
            atn_prediction p[100];
            atn_error err = {0};
            if (atn_predict_next(model, cap, pos, (int32_t)top, p, &err)) {
                rc = cli_fail(&err);
                break;
            }
            if (json) {
                printf("%s\n  {\"after\": %d, \"target_id\": %d, \"next\": [", pos > from ? "," : "", pos,
                       cap->target_ids[pos]);
                for (long r = 0; r < top; r++) {
                    printf("%s{\"token\": ", r ? ", " : "");
                    cli_json_string(stdout, p[r].token);
                    printf(", \"id\": %d, \"prob\": %.6f}", p[r].id, p[r].prob);
                }
                printf("]}");
            } else {
                printf("decoder: next token after target position %d (id %d):\n", pos, cap->target_ids[pos]);
                for (long r = 0; r < top; r++)
                    printf("  %2ld. %-16s %.4f\n", r + 1, pred_text(&p[r]), p[r].prob);
            }
        }
        if (json && rc == CLI_EXIT_OK)
            printf("\n]\n");
    } else if (rc == CLI_EXIT_OK && !atn_model_is_causal(model) && after_s) {
        cli_error("attnscope predict: --after: model \"%s\" is not a causal model (it predicts [MASK] tokens, "
                  "not the next token)", atn_model_name(model));
        rc = CLI_EXIT_USAGE;
    } else if (rc == CLI_EXIT_OK && atn_model_is_causal(model)) {
        /* next-token guesses: after token --after, else after the last real (unpadded) token */
        const atn_capture *cap = atn_run_capture(run);
        int32_t pos = (int32_t)after;
        if (!after_s)
            for (int32_t i = 0; i < cap->n; i++)
                if (cap->enc->mask[i])
                    pos = i;
        if (pos < 0 || pos >= cap->n) {
            cli_error("attnscope predict: --after %ld: the input has tokens 0..%d", after, cap->n - 1);
            rc = CLI_EXIT_USAGE;
        } else {
            atn_prediction p[100];
            atn_error err = {0};
            if (atn_predict_next(model, cap, pos, (int32_t)top, p, &err)) {
                rc = cli_fail(&err);
            } else if (json) {
                printf("[\n  {\"after\": %d, \"token\": ", pos);
                cli_json_string(stdout, cap->enc->tokens[pos].text);
                printf(", \"next\": [");
                for (long r = 0; r < top; r++) {
                    printf("%s{\"token\": ", r ? ", " : "");
                    cli_json_string(stdout, p[r].token);
                    printf(", \"id\": %d, \"prob\": %.6f}", p[r].id, p[r].prob);
                }
                printf("]}\n]\n");
            } else {
                printf("next token after position %d (%s):\n", pos, cap->enc->tokens[pos].text);
                for (long r = 0; r < top; r++)
                    printf("  %2ld. %-16s %.4f\n", r + 1, pred_text(&p[r]), p[r].prob);
            }
        }
    } else if (rc == CLI_EXIT_OK) {
        const atn_capture *cap = atn_run_capture(run);
        int found = 0;
        if (json)
            printf("[");
        for (int32_t i = 0; i < cap->n && rc == CLI_EXIT_OK; i++) {
            if (cap->enc->tokens[i].role != ATN_TOKEN_MASK)
                continue;
            atn_prediction p[100];
            atn_error err = {0};
            if (atn_predict_position(model, cap, i, (int32_t)top, p, &err)) {
                rc = cli_fail(&err);
                break;
            }
            if (json) {
                printf("%s\n  {\"position\": %d, \"predictions\": [", found ? "," : "", i);
                for (long r = 0; r < top; r++) {
                    printf("%s{\"token\": ", r ? ", " : "");
                    cli_json_string(stdout, p[r].token);
                    printf(", \"id\": %d, \"prob\": %.6f}", p[r].id, p[r].prob);
                }
                printf("]}");
            } else {
                printf("[MASK] at position %d:\n", i);
                for (long r = 0; r < top; r++)
                    printf("  %2ld. %-16s %.4f\n", r + 1, pred_text(&p[r]), p[r].prob);
            }
            found++;
        }
        if (json && rc == CLI_EXIT_OK)
            printf("\n]\n");
        if (!found && rc == CLI_EXIT_OK && !atn_model_has_mlm_head(model)) {
            cli_error("attnscope predict: model \"%s\" has no masked-LM head (cls.predictions.*) to guess [MASK] "
                      "tokens with", atn_model_name(model));
            rc = CLI_EXIT_USAGE;
        } else if (!found && rc == CLI_EXIT_OK) {
            cli_error("attnscope predict: the text has no [MASK] token to predict");
            rc = CLI_EXIT_USAGE;
        }
    }
    atn_run_free(run);
    atn_encoding_free(enc);
    atn_model_free(model);
    return rc;
}
