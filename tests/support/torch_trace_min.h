/* A test-only loader for PyTorch's legacy trace JSON (a top-level array of
 * flat "X" events: name, ph, ts, dur in integer us, tid, pid, args {}) into
 * the event model. Reads only name/ph/ts/dur/tid; the real streaming reader
 * (src/import) replaces it. Returns NULL when the file cannot be read. */
#ifndef OPPROF_TESTS_TORCH_TRACE_MIN_H
#define OPPROF_TESTS_TORCH_TRACE_MIN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

/* Reads a JSON string at *p (just past its opening quote) into out,
 * resolving only the escapes of plain names. */
static inline size_t ttm_string(const char **p, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *s = *p; *s; s++) {
        if (*s == '"') {
            *p = s + 1;
            break;
        }
        if (*s == '\\' && s[1]) s++;
        if (n + 1 < cap) out[n++] = *s;
    }
    out[n] = '\0';
    return n;
}

static inline opprof_trace *ttm_load(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    rewind(f);
    char *text = malloc((size_t)sz + 1);
    size_t got = text ? fread(text, 1, (size_t)sz, f) : 0;
    fclose(f);
    if (!text || got != (size_t)sz) return free(text), NULL;
    text[sz] = '\0';
    opprof_trace *t = op_trace_new();
    char key[64], name[1024], ph[8];
    const char *p = strchr(text, '{');
    while (t && p) {
        long long ts = 0, dur = 0, tid = 0;
        size_t nlen = 0;
        ph[0] = '\0';
        for (p++; *p && *p != '}';) { /* one flat event; args is "{}" */
            if (*p != '"') { p++; continue; }
            p++;
            ttm_string(&p, key, sizeof key);
            p = strchr(p, ':') + 1;
            while (*p == ' ') p++;
            if (*p == '"' && !strcmp(key, "name")) p++, nlen = ttm_string(&p, name, sizeof name);
            else if (*p == '"' && !strcmp(key, "ph")) p++, ttm_string(&p, ph, sizeof ph);
            else if (*p == '"') p++, ttm_string(&p, key, sizeof key);
            else if (*p == '{') p = strchr(p, '}') + 1;
            else if (!strcmp(key, "ts")) ts = strtoll(p, (char **)&p, 10);
            else if (!strcmp(key, "dur")) dur = strtoll(p, (char **)&p, 10);
            else if (!strcmp(key, "tid")) tid = strtoll(p, (char **)&p, 10);
        }
        if (!strcmp(ph, "X")) {
            int64_t th = op_trace_thread(t, 0, tid);
            uint32_t id = op_trace_intern(t, name, nlen);
            op_trace_add_event(t, (uint32_t)th, id, OPPROF_CAT_CPU_OP, ts * 1000, dur * 1000);
        }
        p = *p ? strchr(p, '{') : NULL;
    }
    free(text);
    if (t && op_trace_finish(t) != OPPROF_OK) {
        opprof_trace_free(t);
        t = NULL;
    }
    return t;
}

#endif
