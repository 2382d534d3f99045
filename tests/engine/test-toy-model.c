/* Malformed toy models: each is refused with a message that names what is wrong. */
#include "check.h"
#include "attnscope.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct bad_case {
    const char *json;
    const char *expect;   /* a piece of the message */
} bad_case;

static const bad_case cases[] = {
    {"{", "invalid JSON"},
    {"[1, 2]", "must be a JSON object"},
    {"{\"heads\": 2, \"tokens\": [\"a\"], \"inputs\": [[1, 2]]}", "missing key \"d_model\""},
    {"{\"d_model\": 4, \"tokens\": [\"a\"], \"inputs\": [[1, 2, 3, 4]]}", "missing key \"heads\""},
    {"{\"d_model\": 4, \"heads\": 3, \"tokens\": [\"a\"], \"inputs\": [[1, 2, 3, 4]]}", "3 heads do not divide d_model 4"},
    {"{\"d_model\": 4, \"heads\": 0, \"tokens\": [\"a\"], \"inputs\": [[1, 2, 3, 4]]}", "heads must be positive"},
    {"{\"d_model\": \"4\", \"heads\": 2, \"tokens\": [\"a\"], \"inputs\": [[1, 2, 3, 4]]}", "\"d_model\" must be an integer"},
    {"{\"d_model\": 4.5, \"heads\": 2, \"tokens\": [\"a\"], \"inputs\": [[1, 2, 3, 4]]}", "\"d_model\" must be an integer"},
    {"{\"d_model\": 4, \"heads\": 2, \"inputs\": [[1, 2, 3, 4]]}", "\"tokens\" must be a non-empty array"},
    {"{\"d_model\": 4, \"heads\": 2, \"tokens\": [], \"inputs\": []}", "\"tokens\" must be a non-empty array"},
    {"{\"d_model\": 4, \"heads\": 2, \"tokens\": [\"a\", 7], \"inputs\": [[1, 2, 3, 4], [1, 2, 3, 4]]}", "tokens[1] is not a string"},
    {"{\"d_model\": 4, \"heads\": 2, \"tokens\": [\"a\"]}", "missing key \"inputs\""},
    {"{\"d_model\": 4, \"heads\": 2, \"tokens\": [\"a\", \"b\"], \"inputs\": [[1, 2, 3, 4]]}", "\"inputs\" has 1 rows, expected 2"},
    {"{\"d_model\": 4, \"heads\": 2, \"tokens\": [\"a\"], \"inputs\": [[1, 2, 3]]}", "\"inputs[0]\" has 3 numbers, expected 4"},
    {"{\"d_model\": 4, \"heads\": 2, \"tokens\": [\"a\"], \"inputs\": [[1, 2, \"x\", 4]]}", "\"inputs[0]\"[2] is not a number"},
    {"{\"d_model\": 2, \"heads\": 1, \"tokens\": [\"a\"], \"inputs\": [[1, 2]], \"W_Q\": [[1, 0]]}", "\"layers[0].W_Q\" has 1 rows, expected 2"},
    {"{\"d_model\": 2, \"heads\": 1, \"tokens\": [\"a\"], \"inputs\": [[1, 2]], \"W_K\": [[1, 0], [0]]}", "\"layers[0].W_K[1]\" has 1 numbers, expected 2"},
    {"{\"d_model\": 2, \"heads\": 1, \"tokens\": [\"a\"], \"inputs\": [[1, 2]], \"b_V\": [1, 2, 3]}", "\"layers[0].b_V\" has 3 numbers, expected 2"},
    {"{\"d_model\": 2, \"heads\": 1, \"tokens\": [\"a\"], \"inputs\": [[1, 2]], \"layers\": [{\"Wq\": 1}]}", "unknown key \"Wq\""},
    {"{\"d_model\": 2, \"heads\": 1, \"tokens\": [\"a\"], \"inputs\": [[1, 2]], \"layers\": []}", "\"layers\" must be a non-empty array"},
    {"{\"d_model\": 2, \"heads\": 1, \"tokens\": [\"a\"], \"inputs\": [[1, 2]], \"ffn\": true}", "d_ffn must be"},
    {"{\"d_model\": 2, \"heads\": 1, \"tokens\": [\"a\"], \"inputs\": [[1, 2]], \"ffn\": true, \"d_ffn\": 3}", "lacks W_1 or W_2"},
    {"{\"d_model\": 2, \"heads\": 1, \"tokens\": [\"a\"], \"inputs\": [[1, 2]], \"activation\": \"swish\"}", "unknown activation \"swish\""},
    {"{\"d_model\": 2, \"heads\": 1, \"tokens\": [\"a\"], \"inputs\": [[1, 2]], \"layernorm\": 1}", "\"layernorm\" must be true or false"},
};

int main(void) {
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        atn_error err = {0};
        atn_model *m = atn_model_parse_toy_json(cases[i].json, strlen(cases[i].json), "lesson.json", &err);
        CHECK_MSG(m == NULL, "case %zu was accepted", i);
        CHECK_MSG(strstr(err.message, cases[i].expect) != NULL, "case %zu: message \"%s\" lacks \"%s\"", i,
                  err.message, cases[i].expect);
        CHECK_MSG(strncmp(err.message, "lesson.json", 11) == 0, "case %zu: message \"%s\" does not name the file", i,
                  err.message);
        atn_model_free(m);
    }
    /* a missing file and a missing built-in name */
    atn_error err = {0};
    CHECK(atn_model_open("/nonexistent/lesson.json", NULL, NULL, &err) == NULL);
    CHECK(strstr(err.message, "/nonexistent/lesson.json") != NULL);
    CHECK(atn_model_open("no-such-model", NULL, NULL, &err) == NULL);
    CHECK(strstr(err.message, "no-such-model") != NULL && strstr(err.message, "built-in models") != NULL);

    /* a good minimal model with the layer keys at the top level */
    const char *good = "{\"d_model\": 2, \"heads\": 1, \"tokens\": [\"a\", \"b\"], \"inputs\": [[1, 0], [0, 1]], "
                       "\"W_Q\": [[2, 0], [0, 2]]}";
    atn_model *m = atn_model_parse_toy_json(good, strlen(good), "good.json", &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    if (m) {
        atn_encoding *enc;
        CHECK(atn_model_encode_toy(m, NULL, &enc, &err) == ATN_OK);
        atn_run *run = atn_run_new(m);
        CHECK(atn_run_forward(run, enc, NULL, &err) == ATN_OK);
        /* q0 = [2, 0], k = [1,0],[0,1]: scores [2, 0] / sqrt 2 */
        double e = exp(2 / sqrt(2.0));
        CHECK_NEAR(atn_run_capture(run)->attn[0], e / (e + 1), 1e-6);
        /* a toy model takes no text */
        atn_encoding *e2 = NULL;
        CHECK(atn_model_encode(m, "hello", NULL, &e2, &err) == ATN_E_INVALID && strstr(err.message, "toy model"));
        /* save and reload gives the same model */
        char path[] = "/tmp/atn-toy-XXXXXX";
        int fd = mkstemp(path);
        close(fd);
        CHECK_MSG(atn_model_toy_save_json(m, path, &err) == ATN_OK, "%s", err.message);
        atn_model *m2 = atn_model_open_toy_json(path, &err);
        CHECK_MSG(m2 != NULL, "%s", err.message);
        if (m2) {
            float v;
            CHECK(atn_model_toy_get(m2, ATN_TOY_WQ, 0, 1, 1, &v, &err) == ATN_OK && v == 2.0f);
            CHECK(atn_model_toy_get(m2, ATN_TOY_X, 0, 1, 1, &v, &err) == ATN_OK && v == 1.0f);
            atn_model_free(m2);
        }
        /* float noise: 1.1f is saved as "1.1", not 1.1000000238418579; each number is the
           shortest decimal that reads back to the same float (the same bits) */
        float vals[] = {1.1f, 0.1f, -3.3333333f, 1.0f / 3.0f, 1e-7f, 123456.78f, -0.0f, 3.4028235e38f,
                        1.17549435e-38f, 0.3f};
        int nv = (int)(sizeof vals / sizeof vals[0]);
        for (int i = 0; i < nv; i++)
            CHECK(atn_model_toy_set(m, i < 4 ? ATN_TOY_X : i < 8 ? ATN_TOY_WQ : ATN_TOY_WV, 0, (i % 4) / 2, i % 2, vals[i], &err) == ATN_OK);
        CHECK_MSG(atn_model_toy_save_json(m, path, &err) == ATN_OK, "%s", err.message);
        FILE *fp = fopen(path, "rb");
        char text[8192] = {0};
        size_t got = fp ? fread(text, 1, sizeof text - 1, fp) : 0;
        if (fp)
            fclose(fp);
        CHECK(got > 0);
        CHECK_MSG(strstr(text, "1.1000000238418579") == NULL && strstr(text, "0.10000000149011612") == NULL,
                  "float noise in the saved JSON:\n%s", text);
        CHECK_MSG(strstr(text, "[[1.1, 0.1], [-3.3333333, 0.33333334]]") != NULL && strstr(text, "\"ln_eps\":\t1e-05") != NULL,
                  "shortest decimals missing:\n%s", text);
        m2 = atn_model_open_toy_json(path, &err);
        CHECK_MSG(m2 != NULL, "%s", err.message);
        for (int i = 0; m2 && i < nv; i++) {
            float v = 0;
            CHECK(atn_model_toy_get(m2, i < 4 ? ATN_TOY_X : i < 8 ? ATN_TOY_WQ : ATN_TOY_WV, 0, (i % 4) / 2, i % 2, &v, &err) == ATN_OK);
            CHECK_MSG(memcmp(&v, &vals[i], sizeof v) == 0, "value %d: saved %.9g, read back %.9g", i, vals[i], v);
        }
        atn_model_free(m2);
        /* 2000 random bit patterns (every exponent) through the file, bit for bit */
        uint32_t seed = 12345;
        for (int round = 0; round < 500; round++) {
            float want[4];
            for (int k = 0; k < 4; k++) {
                uint32_t bits;
                do {
                    seed = seed * 1664525u + 1013904223u;
                    bits = seed;
                } while (((bits >> 23) & 0xff) == 0xff);   /* no NaN or infinity */
                memcpy(&want[k], &bits, sizeof bits);
                CHECK(atn_model_toy_set(m, ATN_TOY_WK, 0, k / 2, k % 2, want[k], &err) == ATN_OK);
            }
            CHECK(atn_model_toy_save_json(m, path, &err) == ATN_OK);
            m2 = atn_model_open_toy_json(path, &err);
            CHECK_MSG(m2 != NULL, "%s", err.message);
            for (int k = 0; m2 && k < 4; k++) {
                float v = 0;
                CHECK(atn_model_toy_get(m2, ATN_TOY_WK, 0, k / 2, k % 2, &v, &err) == ATN_OK);
                CHECK_MSG(memcmp(&v, &want[k], sizeof v) == 0, "random %08x: read back %.9g", (unsigned)seed, v);
            }
            atn_model_free(m2);
        }
        unlink(path);
        atn_run_free(run);
        atn_encoding_free(enc);
        atn_model_free(m);
    }
    return check_summary("toy-model");
}
