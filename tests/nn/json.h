/* A small JSON reader for the test fixtures: numbers, strings, arrays,
 * objects, true/false/null, read whole into a tree. Not a general parser:
 * string escapes beyond the simple ones become '?'. */
#ifndef OPPROF_TESTS_NN_JSON_H
#define OPPROF_TESTS_NN_JSON_H

#include <stddef.h>

typedef enum json_type { JSON_NULL, JSON_BOOL, JSON_NUM, JSON_STR, JSON_ARR, JSON_OBJ } json_type;

typedef struct json {
    json_type type;
    double num;          /* JSON_NUM, JSON_BOOL (0 or 1) */
    char *str;           /* JSON_STR */
    size_t n;            /* JSON_ARR, JSON_OBJ: number of items */
    struct json *items;  /* the values */
    char **keys;         /* JSON_OBJ: the keys */
} json;

/* The file's value, NULL when it cannot be read or parsed. */
json *json_read_file(const char *path);
void json_free(json *v);
/* The member named key of an object, NULL when absent or not an object. */
const json *json_get(const json *obj, const char *key);

#endif
