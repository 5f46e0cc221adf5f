#!/usr/bin/env bash
# Installs opprof into a temporary prefix and builds programs against the
# installed copy, with pkg-config and with CMake's find_package:
#  - rec.c, a plain instrumented program (opprof.h), against libopprof alone:
#    it records, is handed its trace and frees it, and needs libopprof, libc
#    and the loader only (ldd): none of the analysis library's dependencies
#    (zlib, libdw and what libdw pulls in), and not libunwind, which its
#    with_stack session loads when it starts (and the plain one before not);
#  - hello.c reads its trace (opprof_trace.h), against libopprof_trace.
set -euo pipefail
src=$1
build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cat >"$tmp/rec.c" <<'C'
#include <dlfcn.h>
#include <opprof.h>
#include <stdio.h>
OPPROF_SITE(site, "rec");
static int ready;
static void on_ready(const opprof_trace *t, void *user) { (void)user; ready += t != NULL; }
static int unwinder_loaded(void) { return dlopen("libunwind.so.8", RTLD_NOW | RTLD_NOLOAD) != NULL; }
int main(void) {
    opprof_config c; opprof_config_init(&c);
    c.on_trace_ready = on_ready;
    if (opprof_start(&c)) return 1;
    opprof_begin(&site); opprof_end(&site);
    opprof_trace *t = NULL; if (opprof_stop(&t)) return 1;
    int before = unwinder_loaded();
    opprof_trace_free(t);
    c.on_trace_ready = NULL;
    c.with_stack = 1;
    if (opprof_start(&c)) return 1;
    opprof_begin(&site); opprof_end(&site);
    if (opprof_stop(&t)) return 1;
    printf("%d %d %d %d\n", ready, t != NULL, before, unwinder_loaded());
    opprof_trace_free(t);
    return 0;
}
C
cat >"$tmp/hello.c" <<'C'
#include <opprof_trace.h>
#include <stdio.h>
OPPROF_SITE(site, "hello");
int main(void) {
    opprof_config c; opprof_config_init(&c);
    if (opprof_start(&c)) return 1;
    opprof_begin(&site); opprof_end(&site);
    opprof_trace *t; if (opprof_stop(&t)) return 1;
    opprof_event e; opprof_trace_event(t, 0, &e);
    printf("%zu %s\n", opprof_trace_event_count(t), e.name);
    opprof_trace_free(t);
    return 0;
}
C
# A program that links libopprof alone needs libopprof, libc and the loader:
# neither it nor libopprof.so names another library (NEEDED), and no other
# is loaded with it (ldd; linux-vdso is the kernel's).
client_libs='^(linux-vdso\.so\.1|libopprof\.so\.[0-9]+|libc\.so\.6|/.*/ld-linux[-a-z0-9_.]*\.so\.[0-9]+)$'
client_only() {
    local lib
    lib=$(ldd "$1" | awk '/libopprof\.so/ {print $3}')
    [ -n "$lib" ] || { echo "$2: not linked with libopprof.so"; exit 1; }
    if readelf -d "$1" "$lib" | awk '/NEEDED/ {gsub(/[][]/, "", $5); print $5}' | grep -Ev "$client_libs|^ld-linux"; then
        echo "$2: NEEDED names a library beyond libopprof, libc and the loader"; exit 1
    fi
    if ldd "$1" | awk '{print $1}' | grep -Ev "$client_libs"; then
        echo "$2: ldd lists a library beyond libopprof, libc and the loader"; ldd "$1"; exit 1
    fi
}
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig:$tmp/prefix/lib/x86_64-linux-gnu/pkgconfig"
libdir=$(pkg-config --variable=libdir opprof)
cc -o "$tmp/rec_pc" "$tmp/rec.c" $(pkg-config --cflags --libs opprof) -Wl,-rpath,"$libdir"
client_only "$tmp/rec_pc" "pkg-config opprof"
out=$("$tmp/rec_pc")
[ "$out" = "1 1 0 1" ] || { echo "pkg-config opprof build printed '$out' (ready, trace, libunwind before and after with_stack)"; exit 1; }
cc -o "$tmp/hello_pc" "$tmp/hello.c" $(pkg-config --cflags --libs opprof_trace) -Wl,-rpath,"$libdir"
out=$("$tmp/hello_pc")
[ "$out" = "1 hello" ] || { echo "pkg-config opprof_trace build printed '$out'"; exit 1; }
mkdir "$tmp/cm"
cat >"$tmp/cm/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(hello C)
find_package(opprof REQUIRED)
add_executable(rec ../rec.c)
target_link_libraries(rec PRIVATE opprof::opprof)
add_executable(hello ../hello.c)
target_link_libraries(hello PRIVATE opprof::opprof_trace_static)
add_executable(hello_shared ../hello.c)
target_link_libraries(hello_shared PRIVATE opprof::opprof_trace)
CM
cmake -S "$tmp/cm" -B "$tmp/cm/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cm/build" >/dev/null
client_only "$tmp/cm/build/rec" "find_package opprof::opprof"
out=$("$tmp/cm/build/rec")
[ "$out" = "1 1 0 1" ] || { echo "find_package opprof::opprof build printed '$out' (ready, trace, libunwind before and after with_stack)"; exit 1; }
for p in hello hello_shared; do
    out=$("$tmp/cm/build/$p")
    [ "$out" = "1 hello" ] || { echo "find_package $p build printed '$out'"; exit 1; }
done
[ -x "$tmp/prefix/bin/opprof" ] || { echo "CLI not installed"; exit 1; }
echo "install test passed"
