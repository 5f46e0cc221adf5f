#!/usr/bin/env bash
# Installs opprof into a temporary prefix and builds programs against the
# installed copy, with pkg-config and with CMake's find_package:
#  - rec.c, a plain instrumented program (opprof.h), against libopprof alone:
#    it records, is handed its trace and frees it, and needs none of the
#    analysis library's dependencies (zlib, libdw and what libdw pulls in);
#  - hello.c reads its trace (opprof_trace.h), against libopprof_trace.
set -euo pipefail
src=$1
build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cat >"$tmp/rec.c" <<'C'
#include <opprof.h>
#include <stdio.h>
OPPROF_SITE(site, "rec");
static int ready;
static void on_ready(const opprof_trace *t, void *user) { (void)user; ready += t != NULL; }
int main(void) {
    opprof_config c; opprof_config_init(&c);
    c.on_trace_ready = on_ready;
    if (opprof_start(&c)) return 1;
    opprof_begin(&site); opprof_end(&site);
    opprof_trace *t = NULL; if (opprof_stop(&t)) return 1;
    printf("%d %d\n", ready, t != NULL);
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
# A program that links libopprof alone needs none of these: neither it nor
# libopprof.so names one (NEEDED), and none is loaded with it (ldd) but
# liblzma, which Debian's libunwind itself needs (its MiniDebugInfo).
analysis_deps='libz\.|libdw\.|libelf\.|liblzma\.|libbz2\.|libopprof_trace\.'
client_only() {
    local lib
    lib=$(ldd "$1" | awk '/libopprof\.so/ {print $3}')
    [ -n "$lib" ] || { echo "$2: not linked with libopprof.so"; exit 1; }
    if readelf -d "$1" "$lib" | grep NEEDED | grep -E "$analysis_deps"; then
        echo "$2: NEEDED names an analysis library"; exit 1
    fi
    if ldd "$1" | grep -v liblzma | grep -E "$analysis_deps"; then
        echo "$2: ldd lists an analysis library"; exit 1
    fi
}
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig:$tmp/prefix/lib/x86_64-linux-gnu/pkgconfig"
libdir=$(pkg-config --variable=libdir opprof)
cc -o "$tmp/rec_pc" "$tmp/rec.c" $(pkg-config --cflags --libs opprof) -Wl,-rpath,"$libdir"
client_only "$tmp/rec_pc" "pkg-config opprof"
out=$("$tmp/rec_pc")
[ "$out" = "1 1" ] || { echo "pkg-config opprof build printed '$out'"; exit 1; }
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
[ "$out" = "1 1" ] || { echo "find_package opprof::opprof build printed '$out'"; exit 1; }
for p in hello hello_shared; do
    out=$("$tmp/cm/build/$p")
    [ "$out" = "1 hello" ] || { echo "find_package $p build printed '$out'"; exit 1; }
done
[ -x "$tmp/prefix/bin/opprof" ] || { echo "CLI not installed"; exit 1; }
echo "install test passed"
