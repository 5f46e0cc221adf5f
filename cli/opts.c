/* The table-driven option parser (see opts.h). */
#include "opts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

void cli_usage(const cli_spec *spec, FILE *f, int full)
{
    fprintf(f, "usage: opprof %s %s\n", spec->command, spec->usage);
    if (!full) {
        fprintf(f, "Run 'opprof %s --help' for the options.\n", spec->command);
        return;
    }
    fprintf(f, "\n%s\n\noptions:\n", spec->about);
    for (size_t i = 0; i < spec->nopts; i++) {
        const cli_option *o = &spec->opts[i];
        if (!o->help) continue; /* an old spelling */
        char head[64];
        if (o->kind == CLI_OPT_LONG_OPT) snprintf(head, sizeof head, "%s[=%s]", o->name, o->arg);
        else snprintf(head, sizeof head, "%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        fprintf(f, "  %-26s %s\n", head, o->help);
    }
}

static int bad(const cli_spec *spec, const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "opprof %s: ", spec->command);
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    cli_usage(spec, stderr, 0);
    return -1;
}

int cli_bad_usage(const cli_spec *spec, const char *what)
{
    bad(spec, "%s%s", what, "");
    return CLI_BAD_INPUT;
}

static int in_choices(const char *choices, const char *v)
{
    size_t n = strlen(v);
    for (const char *c = choices; *c;) {
        const char *bar = strchr(c, '|');
        size_t len = bar ? (size_t)(bar - c) : strlen(c);
        if (len == n && !strncmp(c, v, n)) return 1;
        c += len + (bar != NULL);
    }
    return 0;
}

static int set(const cli_spec *spec, const cli_option *o, const char *v, void *out)
{
    char *field = (char *)out + o->offset;
    if (o->kind == CLI_OPT_STRING) {
        if (o->choices && !in_choices(o->choices, v)) return bad(spec, "%s takes one of %s", o->name, o->choices);
        *(const char **)(void *)field = v;
        return 0;
    }
    if (o->kind == CLI_OPT_LIST) {
        cli_list *l = (cli_list *)(void *)field;
        if (l->n == CLI_LIST_MAX) return bad(spec, "%s is given more than 64 times%s", o->name, "");
        l->item[l->n++] = v;
        return 0;
    }
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (!*v || *end || errno || x < o->min || x > o->max) {
        char range[96];
        snprintf(range, sizeof range, "a whole number from %ld to %ld", o->min, o->max);
        fprintf(stderr, "opprof %s: %s wants %s, not '%s'\n", spec->command, o->name, range, v);
        cli_usage(spec, stderr, 0);
        return -1;
    }
    *(long *)(void *)field = x;
    return 0;
}

int cli_parse(const cli_spec *spec, int argc, char **argv, void *out, const char **pos, int *npos)
{
    *npos = 0;
    int only_pos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_pos || a[0] != '-' || !strcmp(a, "-")) {
            if (spec->rest) {
                *npos = i;
                return 0;
            }
            if (*npos >= spec->max_pos) return bad(spec, "unexpected argument '%s'%s", a, "");
            pos[(*npos)++] = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            only_pos = 1;
            continue;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            cli_usage(spec, stdout, 1);
            return 1;
        }
        const char *eq = strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        const cli_option *o = NULL;
        for (size_t k = 0; k < spec->nopts && !o; k++)
            if (strlen(spec->opts[k].name) == len && !strncmp(spec->opts[k].name, a, len)) o = &spec->opts[k];
        if (!o) return bad(spec, "unknown option '%s'%s", a, "");
        if (o->kind == CLI_OPT_FLAG) {
            if (eq) return bad(spec, "%s takes no value%s", o->name, "");
            *(int *)(void *)((char *)out + o->offset) = 1;
            continue;
        }
        if (o->kind == CLI_OPT_LONG_OPT && !eq) {
            *(long *)(void *)((char *)out + o->offset) = -1;
            continue;
        }
        const char *v = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
        if (!v) return bad(spec, "%s needs a value (%s)", o->name, o->arg);
        if (set(spec, o, v, out) != 0) return -1;
    }
    if (spec->rest) {
        *npos = argc;
        return 0;
    }
    if (*npos < spec->min_pos) return bad(spec, "missing %s%s", spec->usage, "");
    return 0;
}
