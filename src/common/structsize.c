#include "common/structsize.h"

#include <string.h>

#include "common/error.h"

size_t op_struct_size_of(const void *user)
{
    size_t size;
    memcpy(&size, user, sizeof size);
    return size;
}

int op_struct_size_ok(size_t size, size_t lib_size, size_t min_size, const char *fn, const char *what)
{
    if (size == 0)
        return op_fail(OPPROF_E_INVAL, "%s: %s.struct_size is 0: set the struct up with %s_init first", fn, what,
                       what);
    if (size < min_size || size % sizeof(size_t) != 0 || size > lib_size + OP_STRUCT_GROWTH_MAX)
        return op_fail(OPPROF_E_INVAL,
                       "%s: %s.struct_size %zu is not the size of any %s (this library's is %zu): set the struct "
                       "up with %s_init",
                       fn, what, size, what, lib_size, what);
    return OPPROF_OK;
}

int op_struct_in(void *lib, size_t lib_size, size_t min_size, const void *user, const char *fn, const char *what)
{
    if (!user) return op_fail(OPPROF_E_INVAL, "%s: the %s is NULL", fn, what);
    size_t size = op_struct_size_of(user);
    int rc = op_struct_size_ok(size, lib_size, min_size, fn, what);
    if (rc != OPPROF_OK) return rc;
    const unsigned char *bytes = user;
    for (size_t i = lib_size; i < size; i++)
        if (bytes[i])
            return op_fail(OPPROF_E_INVAL,
                           "%s: the %s sets fields this libopprof %s does not know (the program's struct has %zu "
                           "bytes, this library's %zu): run it with the libopprof it was built against",
                           fn, what, opprof_version(), size, lib_size);
    memcpy(lib, user, size < lib_size ? size : lib_size);
    memcpy(lib, &lib_size, sizeof lib_size);
    return OPPROF_OK;
}

void op_struct_out(void *user, size_t user_size, const void *lib, size_t lib_size)
{
    memcpy(user, lib, user_size < lib_size ? user_size : lib_size);
    if (user_size > lib_size) memset((unsigned char *)user + lib_size, 0, user_size - lib_size);
    memcpy(user, &user_size, sizeof user_size);
}
