#!/usr/bin/env bash
# Installs opprof into a temporary prefix and builds a tiny program against
# the installed copy twice: with pkg-config and with CMake's find_package.
set -euo pipefail
src=$1
build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
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
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig:$tmp/prefix/lib/x86_64-linux-gnu/pkgconfig"
cc -o "$tmp/hello_pc" "$tmp/hello.c" $(pkg-config --cflags --libs opprof) -Wl,-rpath,"$(pkg-config --variable=libdir opprof)"
out=$("$tmp/hello_pc")
[ "$out" = "1 hello" ] || { echo "pkg-config build printed '$out'"; exit 1; }
mkdir "$tmp/cm"
cat >"$tmp/cm/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(hello C)
find_package(opprof REQUIRED)
add_executable(hello ../hello.c)
target_link_libraries(hello PRIVATE opprof::opprof_static)
CM
cmake -S "$tmp/cm" -B "$tmp/cm/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cm/build" >/dev/null
out=$("$tmp/cm/build/hello")
[ "$out" = "1 hello" ] || { echo "find_package build printed '$out'"; exit 1; }
[ -x "$tmp/prefix/bin/opprof" ] || { echo "CLI not installed"; exit 1; }
echo "install test passed"
