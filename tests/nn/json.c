/* The fixture reader: recursive descent over a buffer holding the file. */
#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct reader {
    const char *p, *end;
    int depth;
} reader;

static void skip_ws(reader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\r' || *r->p == '\t')) r->p++;
}

static int parse_value(reader *r, json *out);

static void free_members(json *v)
{
    for (size_t i = 0; i < v->n; i++) {
        free_members(&v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    memset(v, 0, sizeof *v);
}

static char *parse_string(reader *r)
{
    if (r->p >= r->end || *r->p != '"') return NULL;
    r->p++;
    size_t cap = 16, n = 0;
    char *s = malloc(cap);
    while (s && r->p < r->end && *r->p != '"') {
        char c = *r->p++;
        if (c == '\\' && r->p < r->end) {
            char e = *r->p++;
            c = e == 'n' ? '\n' : e == 't' ? '\t' : e == '"' || e == '\\' || e == '/' ? e : '?';
            if (e == 'u') r->p += r->end - r->p >= 4 ? 4 : r->end - r->p;
        }
        if (n + 1 >= cap) {
            char *t = realloc(s, cap *= 2);
            if (!t) {
                free(s);
                return NULL;
            }
            s = t;
        }
        s[n++] = c;
    }
    if (!s || r->p >= r->end) {
        free(s);
        return NULL;
    }
    r->p++;
    s[n] = 0;
    return s;
}

/* Arrays and objects: items separated by commas up to `close`. */
static int parse_items(reader *r, json *out, char close, int with_keys)
{
    size_t cap = 0;
    r->p++;
    skip_ws(r);
    if (r->p < r->end && *r->p == close) {
        r->p++;
        return 0;
    }
    for (;;) {
        if (out->n == cap) {
            cap = cap ? cap * 2 : 8;
            json *it = realloc(out->items, cap * sizeof *it);
            if (!it) return -1;
            out->items = it;
            if (with_keys) {
                char **k = realloc(out->keys, cap * sizeof *k);
                if (!k) return -1;
                out->keys = k;
            }
        }
        skip_ws(r);
        if (with_keys) {
            out->keys[out->n] = parse_string(r);
            if (!out->keys[out->n]) return -1;
            skip_ws(r);
            if (r->p >= r->end || *r->p != ':') {
                free(out->keys[out->n]);
                return -1;
            }
            r->p++;
        }
        if (parse_value(r, &out->items[out->n]) != 0) {
            if (with_keys) free(out->keys[out->n]);
            return -1;
        }
        out->n++;
        skip_ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        if (r->p < r->end && *r->p == close) {
            r->p++;
            return 0;
        }
        return -1;
    }
}

static int parse_value(reader *r, json *out)
{
    memset(out, 0, sizeof *out);
    skip_ws(r);
    if (r->p >= r->end || ++r->depth > 64) return -1;
    int rc = 0;
    char c = *r->p;
    if (c == '{') {
        out->type = JSON_OBJ;
        rc = parse_items(r, out, '}', 1);
    } else if (c == '[') {
        out->type = JSON_ARR;
        rc = parse_items(r, out, ']', 0);
    } else if (c == '"') {
        out->type = JSON_STR;
        out->str = parse_string(r);
        rc = out->str ? 0 : -1;
    } else if (!strncmp(r->p, "true", 4) || !strncmp(r->p, "false", 5) || !strncmp(r->p, "null", 4)) {
        out->type = c == 'n' ? JSON_NULL : JSON_BOOL;
        out->num = c == 't';
        r->p += c == 'f' ? 5 : 4;
    } else {
        char *e;
        out->type = JSON_NUM;
        out->num = strtod(r->p, &e);
        if (e == r->p) rc = -1;
        r->p = e;
    }
    r->depth--;
    if (rc) free_members(out);
    return rc;
}

json *json_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            char *b = realloc(buf, cap = cap ? cap * 2 : 65536);
            if (!b) break;
            buf = b;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        if (!got) break;
        n += got;
    }
    fclose(f);
    json *v = buf ? malloc(sizeof *v) : NULL;
    if (v) {
        reader r = {buf, buf + n, 0};
        if (parse_value(&r, v) != 0) {
            free(v);
            v = NULL;
        } else {
            skip_ws(&r);
            if (r.p != r.end) {
                json_free(v);
                v = NULL;
            }
        }
    }
    free(buf);
    return v;
}

void json_free(json *v)
{
    if (!v) return;
    free_members(v);
    free(v);
}

const json *json_get(const json *obj, const char *key)
{
    if (!obj || obj->type != JSON_OBJ) return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (!strcmp(obj->keys[i], key)) return &obj->items[i];
    return NULL;
}
