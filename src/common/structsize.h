/* The public structs that grow (include/opprof.h, at the top): each begins
 * with struct_size, the size the program compiled it with, and the library
 * moves only that many bytes between the program's struct and its own,
 * which holds every field. */
#ifndef OPPROF_COMMON_STRUCTSIZE_H
#define OPPROF_COMMON_STRUCTSIZE_H

#include <stddef.h>

/* How far a struct_size may exceed the library's own size: a program built
 * against a later header. Beyond it the size is garbage (a struct never set
 * up), and scanning that many bytes of the program's memory would be wrong. */
#define OP_STRUCT_GROWTH_MAX 4096

/* OPPROF_OK when size can be the size of the struct `what` ("opprof_config")
 * that the library knows as lib_size bytes, of which the program's struct
 * needs at least min_size. Else OPPROF_E_INVAL with a detail that names fn,
 * the struct and its _init function. */
int op_struct_size_ok(size_t size, size_t lib_size, size_t min_size, const char *fn, const char *what);

/* Reads the program's struct: op_struct_size_ok of the size it starts
 * with, a refusal when it sets bytes beyond lib_size (fields of a later
 * version), then its first bytes over lib, which holds the library's
 * defaults for the fields the program's struct does not have. lib's
 * struct_size becomes lib_size. */
int op_struct_in(void *lib, size_t lib_size, size_t min_size, const void *user, const char *fn, const char *what);

/* Writes lib (lib_size bytes, the library's struct) into the program's
 * struct of user_size bytes: the bytes both have, zeros beyond lib_size, and
 * struct_size = user_size. The caller has checked user_size. */
void op_struct_out(void *user, size_t user_size, const void *lib, size_t lib_size);

/* The struct_size a struct starts with. */
size_t op_struct_size_of(const void *user);

#endif
