/* opprof as an NVTX injection library: with NVTX_INJECTION64_PATH naming
 * libopprof.so, NVTX (header-only, version 3) hands us its function tables
 * and every nvtxRangePush/Pop, nvtxRangeStart/End and domain range of the
 * program becomes a user annotation of the active session.
 *
 * A program linked with libopprof.so gets the very copy it already has
 * (the dynamic loader maps a library once), so the ranges land in the
 * session the program started. Built only where the NVTX 3 headers are. */
#ifdef OPPROF_HAVE_NVTX
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "capture/state.h"
#include "device/ranges.h"

/* The default domain of the plain (non-domain) calls. */
static const char g_default_domain;

/* Wide strings (UTF-32 on Linux) to UTF-8; invalid code points become
 * U+FFFD. Returns buf, truncated to n bytes. */
static const char *utf8_of(const wchar_t *w, char *buf, size_t n)
{
    size_t o = 0;
    if (!w) return "";
    for (; *w && o + 5 < n; w++) {
        uint32_t c = (uint32_t)*w;
        if (c > 0x10ffff || (c >= 0xd800 && c < 0xe000)) c = 0xfffd;
        if (c < 0x80) {
            buf[o++] = (char)c;
        } else if (c < 0x800) {
            buf[o++] = (char)(0xc0 | c >> 6);
            buf[o++] = (char)(0x80 | (c & 0x3f));
        } else if (c < 0x10000) {
            buf[o++] = (char)(0xe0 | c >> 12);
            buf[o++] = (char)(0x80 | (c >> 6 & 0x3f));
            buf[o++] = (char)(0x80 | (c & 0x3f));
        } else {
            buf[o++] = (char)(0xf0 | c >> 18);
            buf[o++] = (char)(0x80 | (c >> 12 & 0x3f));
            buf[o++] = (char)(0x80 | (c >> 6 & 0x3f));
            buf[o++] = (char)(0x80 | (c & 0x3f));
        }
    }
    buf[o] = '\0';
    return buf;
}

/* The site an event's message names. Registered strings are handles to
 * interned sites (see register_string). */
static const opprof_site *site_of(const nvtxEventAttributes_t *a)
{
    char buf[1024];
    if (!a) return op_range_site("");
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: return op_range_site(a->message.ascii ? a->message.ascii : "");
    case NVTX_MESSAGE_TYPE_UNICODE: return opprof_intern(utf8_of(a->message.unicode, buf, sizeof buf),
                                                         OPPROF_CAT_USER_ANNOTATION);
    case NVTX_MESSAGE_TYPE_REGISTERED: return (const opprof_site *)(const void *)a->message.registered;
    default: return op_range_site("");
    }
}

static int NVTX_API push_a(const char *m)
{
    return op_range_push(&g_default_domain, m ? m : "", NULL);
}

static int NVTX_API push_w(const wchar_t *m)
{
    char buf[1024];
    return op_range_push(&g_default_domain, NULL, opprof_intern(utf8_of(m, buf, sizeof buf),
                                                                 OPPROF_CAT_USER_ANNOTATION));
}

/* The message is decoded only when a session records: pushes outside one
 * just count their nesting. */
static int push_attr(const void *domain, const nvtxEventAttributes_t *a)
{
    if (!op_gen_load()) return op_range_push(domain, NULL, NULL);
    return op_range_push(domain, NULL, site_of(a));
}

static int NVTX_API push_ex(const nvtxEventAttributes_t *a)
{
    return push_attr(&g_default_domain, a);
}

static int NVTX_API pop(void)
{
    return op_range_pop(&g_default_domain);
}

static nvtxRangeId_t NVTX_API start_a(const char *m)
{
    return op_range_start(m ? m : "", NULL);
}

static nvtxRangeId_t NVTX_API start_w(const wchar_t *m)
{
    char buf[1024];
    return op_range_start(NULL, opprof_intern(utf8_of(m, buf, sizeof buf), OPPROF_CAT_USER_ANNOTATION));
}

static nvtxRangeId_t NVTX_API start_ex(const nvtxEventAttributes_t *a)
{
    return op_gen_load() ? op_range_start(NULL, site_of(a)) : op_range_start(NULL, NULL);
}

static void NVTX_API end(nvtxRangeId_t id)
{
    op_range_end(id);
}

static int NVTX_API d_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    return push_attr(d ? (const void *)d : &g_default_domain, a);
}

static int NVTX_API d_pop(nvtxDomainHandle_t d)
{
    return op_range_pop(d ? (const void *)d : &g_default_domain);
}

static nvtxRangeId_t NVTX_API d_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    (void)d;
    return start_ex(a);
}

static void NVTX_API d_end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
    (void)d;
    op_range_end(id);
}

/* Domains are interned like names (the same name gives the same handle,
 * as NVTX promises), so handles live as long as the process and never
 * leak. */
static nvtxDomainHandle_t domain_of(const char *name)
{
    char buf[1100];
    size_t n = strlen(name);
    if (n > 1000) n = 1000;
    memcpy(buf, "nvtx domain ", 12);
    memcpy(buf + 12, name, n);
    buf[12 + n] = '\0';
    return (nvtxDomainHandle_t)(void *)opprof_intern(buf, OPPROF_CAT_OTHER);
}

static nvtxDomainHandle_t NVTX_API domain_create_a(const char *name)
{
    return domain_of(name ? name : "");
}

static nvtxDomainHandle_t NVTX_API domain_create_w(const wchar_t *name)
{
    char buf[1024];
    return domain_of(utf8_of(name, buf, sizeof buf));
}

static void NVTX_API domain_destroy(nvtxDomainHandle_t d)
{
    (void)d; /* ranges may still name it: kept */
}

static nvtxStringHandle_t NVTX_API register_string_a(nvtxDomainHandle_t d, const char *s)
{
    (void)d;
    return (nvtxStringHandle_t)(void *)opprof_intern(s ? s : "", OPPROF_CAT_USER_ANNOTATION);
}

static nvtxStringHandle_t NVTX_API register_string_w(nvtxDomainHandle_t d, const wchar_t *s)
{
    char buf[1024];
    (void)d;
    return (nvtxStringHandle_t)(void *)opprof_intern(utf8_of(s, buf, sizeof buf), OPPROF_CAT_USER_ANNOTATION);
}

static int set_slot(NvtxFunctionTable table, unsigned size, unsigned id, NvtxFunctionPointer fn)
{
    if (id >= size || !table[id]) return -1;
    *table[id] = fn;
    return 0;
}

#define FN(f) ((NvtxFunctionPointer)(void (*)(void))(f))

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table);

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table)
{
    if (!get_table) return 0;
    const NvtxExportTableCallbacks *cb = (const NvtxExportTableCallbacks *)get_table(NVTX_ETID_CALLBACKS);
    if (!cb || cb->struct_size < sizeof *cb || !cb->GetModuleFunctionTable) return 0;
    const NvtxExportTableVersionInfo *vi = (const NvtxExportTableVersionInfo *)get_table(NVTX_ETID_VERSIONINFO);
    if (vi && vi->struct_size >= sizeof *vi && vi->SetInjectionNvtxVersion) vi->SetInjectionNvtxVersion(NVTX_VERSION);

    NvtxFunctionTable core = NULL, core2 = NULL;
    unsigned ncore = 0, ncore2 = 0;
    if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &ncore) || !core) return 0;
    if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &ncore2) || !core2) return 0;
    int rc = 0;
    rc |= set_slot(core, ncore, NVTX_CBID_CORE_RangePushA, FN(push_a));
    rc |= set_slot(core, ncore, NVTX_CBID_CORE_RangePushW, FN(push_w));
    rc |= set_slot(core, ncore, NVTX_CBID_CORE_RangePushEx, FN(push_ex));
    rc |= set_slot(core, ncore, NVTX_CBID_CORE_RangePop, FN(pop));
    rc |= set_slot(core, ncore, NVTX_CBID_CORE_RangeStartA, FN(start_a));
    rc |= set_slot(core, ncore, NVTX_CBID_CORE_RangeStartW, FN(start_w));
    rc |= set_slot(core, ncore, NVTX_CBID_CORE_RangeStartEx, FN(start_ex));
    rc |= set_slot(core, ncore, NVTX_CBID_CORE_RangeEnd, FN(end));
    rc |= set_slot(core2, ncore2, NVTX_CBID_CORE2_DomainRangePushEx, FN(d_push_ex));
    rc |= set_slot(core2, ncore2, NVTX_CBID_CORE2_DomainRangePop, FN(d_pop));
    rc |= set_slot(core2, ncore2, NVTX_CBID_CORE2_DomainRangeStartEx, FN(d_start_ex));
    rc |= set_slot(core2, ncore2, NVTX_CBID_CORE2_DomainRangeEnd, FN(d_end));
    rc |= set_slot(core2, ncore2, NVTX_CBID_CORE2_DomainCreateA, FN(domain_create_a));
    rc |= set_slot(core2, ncore2, NVTX_CBID_CORE2_DomainCreateW, FN(domain_create_w));
    rc |= set_slot(core2, ncore2, NVTX_CBID_CORE2_DomainDestroy, FN(domain_destroy));
    rc |= set_slot(core2, ncore2, NVTX_CBID_CORE2_DomainRegisterStringA, FN(register_string_a));
    rc |= set_slot(core2, ncore2, NVTX_CBID_CORE2_DomainRegisterStringW, FN(register_string_w));
    return rc == 0;
}
#else
/* Without the NVTX 3 headers there is nothing to inject into. */
typedef int op_nvtx_unavailable;
#endif
