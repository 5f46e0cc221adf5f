/* Symbolization with libdw's Dwfl over this process's own mappings. The
 * session is built once and kept: each module's symbol table and line
 * tables are read on first use, so later traces cost only lookups.
 *
 * Source lines and inlined frames come from the DWARF a module carries in
 * its own file. A module whose DWARF lives only in a separate debug file
 * (Debian's -dbg/-dbgsym packages under /usr/lib/debug) is named from its
 * symbol table: opening that DWARF inflates every compressed debug section
 * at once (libc6-dbg: 70-100 ms of CPU at exit, the whole cost of a sampled
 * run's naming), and the names then do not depend on which -dbg packages a
 * machine happens to have. opprof_stack_separate_debuginfo(1) reads them. */
#define _GNU_SOURCE
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stacks/symbolize.h"

#include "common/error.h"
#include "opprof_trace.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_inline = -1; /* opprof_stack_inline; -1: not set, OPPROF_INLINE gives it */
static int g_separate = -1; /* opprof_stack_separate_debuginfo; -1: OPPROF_SEPARATE_DEBUGINFO gives it */
static Dwfl *g_dwfl;
static char *g_debuginfo_path; /* NULL: the standard places (.debug, /usr/lib/debug) */
static const Dwfl_Callbacks k_callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .debuginfo_path = &g_debuginfo_path,
};

/* (Re)reads the process's mappings. Modules seen before keep what they
 * loaded; unmapped ones are dropped. */
static int report(void)
{
    if (!g_dwfl && !(g_dwfl = dwfl_begin(&k_callbacks))) return -1;
    dwfl_report_begin(g_dwfl);
    int rc = dwfl_linux_proc_report(g_dwfl, getpid());
    dwfl_report_end(g_dwfl, NULL, NULL);
    return rc == 0 ? 0 : -1;
}

static Dwfl_Module *module_of(Dwarf_Addr a)
{
    if (!g_dwfl && report() != 0) return NULL;
    Dwfl_Module *m = dwfl_addrmodule(g_dwfl, a);
    if (!m && report() == 0) m = dwfl_addrmodule(g_dwfl, a); /* loaded since (dlopen) */
    return m;
}

/* Whether the module's line tables and DIEs may be read: its own file has
 * a .debug_info (plain or .zdebug_), or separate debug files are asked for.
 * Kept in the module's user data slot: 1 yes, 2 no. */
static int own_dwarf(Dwfl_Module *m)
{
    void **slot = NULL;
    dwfl_module_info(m, &slot, NULL, NULL, NULL, NULL, NULL, NULL);
    if (slot && *slot) return *slot == (void *)1;
    if (g_separate < 0) {
        const char *env = getenv("OPPROF_SEPARATE_DEBUGINFO");
        g_separate = env && !strcmp(env, "1");
    }
    int own = g_separate;
    Dwarf_Addr bias;
    Elf *elf = own ? NULL : dwfl_module_getelf(m, &bias);
    size_t shstrndx;
    if (elf && elf_getshdrstrndx(elf, &shstrndx) == 0) {
        for (Elf_Scn *scn = NULL; !own && (scn = elf_nextscn(elf, scn));) {
            GElf_Shdr sh;
            const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
            own = name && sh.sh_type != SHT_NOBITS && (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info"));
        }
    }
    if (slot) *slot = own ? (void *)1 : (void *)2;
    return own;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Symbol names carry their version ("memcpy@@GLIBC_2.14"): frames do not. */
static size_t symbol_len(const char *s)
{
    return strcspn(s, "@");
}

static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
}

static int emit_frame(op_frame_fn emit, void *ctx, const char *mod, uint64_t off, const char *file, int line,
                      const char *func, size_t func_len)
{
    char buf[2048];
    int n;
    if (file && *file)
        n = snprintf(buf, sizeof buf, "%s(%d): %.*s", file, line, (int)func_len, func ? func : "??");
    else if (func && func_len)
        n = snprintf(buf, sizeof buf, "%s: %.*s", base_name(mod), (int)func_len, func);
    else
        n = snprintf(buf, sizeof buf, "%s(+0x%" PRIx64 "): ??", base_name(mod), off);
    if (n < 0) return 0;
    if ((size_t)n >= sizeof buf) n = (int)sizeof buf - 1;
    return emit(ctx, buf, (size_t)n);
}

/* The source file of an inlined call site: an index into its unit's files. */
static const char *call_file(Dwarf_Die *cu, Dwarf_Die *inl)
{
    Dwarf_Attribute a;
    Dwarf_Word idx;
    Dwarf_Files *files;
    size_t nfiles;
    if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &a), &idx) != 0) return NULL;
    if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0 || idx >= nfiles) return NULL;
    return dwarf_filesrc(files, idx, NULL, NULL);
}

static int call_line(Dwarf_Die *inl)
{
    Dwarf_Attribute a;
    Dwarf_Word v;
    return dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &a), &v) == 0 ? (int)v : 0;
}

static int frames_locked(uint64_t ip, op_frame_fn emit, void *ctx)
{
    Dwarf_Addr a = ip - 1; /* a return address: the call is the byte before */
    Dwfl_Module *m = module_of(a);
    if (!m) {
        char buf[64];
        int n = snprintf(buf, sizeof buf, "0x%" PRIx64 ": ??", (uint64_t)ip);
        return emit(ctx, buf, (size_t)n) ? -1 : 1;
    }
    Dwarf_Addr start = 0;
    const char *mod = dwfl_module_info(m, NULL, &start, NULL, NULL, NULL, NULL, NULL);
    if (!mod) mod = "?";
    GElf_Off soff;
    GElf_Sym sym;
    const char *sname = dwfl_module_addrinfo(m, a, &soff, &sym, NULL, NULL, NULL);
    const char *file = NULL;
    int line = 0;
    int dw = own_dwarf(m);
    Dwfl_Line *l = dw ? dwfl_module_getsrc(m, a) : NULL;
    if (l) file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);

    /* Functions inlined at this address, innermost first: each is a frame
     * of its own, located where its caller called it. */
    int count = 0;
    if (g_inline < 0) {
        const char *env = getenv("OPPROF_INLINE");
        g_inline = !(env && !strcmp(env, "0"));
    }
    Dwarf_Addr bias;
    Dwarf_Die *cu = dw ? dwfl_module_addrdie(m, a, &bias) : NULL;
    Dwarf_Die *scopes = NULL;
    int ns = cu && g_inline ? dwarf_getscopes(cu, a - bias, &scopes) : 0;
    for (int i = 0; i < ns; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag == DW_TAG_subprogram) break;
        if (tag != DW_TAG_inlined_subroutine) continue;
        const char *fn = die_name(&scopes[i]);
        if (emit_frame(emit, ctx, mod, ip - start, file, line, fn, fn ? strlen(fn) : 0)) {
            free(scopes);
            return -1;
        }
        count++;
        file = call_file(cu, &scopes[i]);
        line = call_line(&scopes[i]);
    }
    free(scopes);
    if (emit_frame(emit, ctx, mod, ip - start, file, line, sname, sname ? symbol_len(sname) : 0)) return -1;
    return count + 1;
}

int op_symbolize_frames(uint64_t ip, op_frame_fn emit, void *ctx)
{
    pthread_mutex_lock(&g_lock);
    int n = frames_locked(ip, emit, ctx);
    pthread_mutex_unlock(&g_lock);
    return n;
}

static void copy(char *dst, size_t cap, const char *s, size_t n)
{
    if (n >= cap) n = cap - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

int op_symbolize_function(const void *fn, op_function_info *info)
{
    memset(info, 0, sizeof *info);
    Dwarf_Addr a = (Dwarf_Addr)(uintptr_t)fn;
    pthread_mutex_lock(&g_lock);
    Dwfl_Module *m = module_of(a);
    if (!m) {
        pthread_mutex_unlock(&g_lock);
        snprintf(info->module, sizeof info->module, "0x%" PRIx64, (uint64_t)a);
        return -1;
    }
    Dwarf_Addr start = 0;
    const char *mod = dwfl_module_info(m, NULL, &start, NULL, NULL, NULL, NULL, NULL);
    if (mod) copy(info->module, sizeof info->module, mod, strlen(mod));
    info->offset = a - start;
    GElf_Off soff;
    GElf_Sym sym;
    const char *sname = dwfl_module_addrinfo(m, a, &soff, &sym, NULL, NULL, NULL);
    if (sname) copy(info->name, sizeof info->name, sname, symbol_len(sname));
    Dwfl_Line *l = own_dwarf(m) ? dwfl_module_getsrc(m, a) : NULL;
    const char *file = l ? dwfl_lineinfo(l, NULL, &info->line, NULL, NULL, NULL) : NULL;
    if (file) copy(info->file, sizeof info->file, file, strlen(file));
    pthread_mutex_unlock(&g_lock);
    return 0;
}

int opprof_stack_inline(int on)
{
    if (on != 0 && on != 1) return op_fail(OPPROF_E_INVAL, "opprof_stack_inline: %d is not 0 or 1", on);
    pthread_mutex_lock(&g_lock);
    g_inline = on;
    pthread_mutex_unlock(&g_lock);
    return OPPROF_OK;
}

int opprof_stack_separate_debuginfo(int on)
{
    if (on != 0 && on != 1)
        return op_fail(OPPROF_E_INVAL, "opprof_stack_separate_debuginfo: %d is not 0 or 1", on);
    pthread_mutex_lock(&g_lock);
    g_separate = on;
    pthread_mutex_unlock(&g_lock);
    return OPPROF_OK;
}
