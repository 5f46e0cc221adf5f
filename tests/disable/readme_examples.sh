#!/bin/sh
# The README's C examples as one program, for the OPPROF_DISABLE build: the
# first (a whole program) as it is; each later one (a fragment) as the body
# of a function that is compiled and linked but not run (one loops forever).
#   readme_examples.sh README.md OUT.c
set -eu
{
  echo '/* Generated from the README by tests/disable/readme_examples.sh. */'
  echo '#include <opprof_trace.h>'
  echo '__attribute__((unused)) static void train_step(void) {}'
  awk '
    /^```c$/ {
      inblock = 1
      n++
      if (n > 1) printf "void readme_example_%d(opprof_trace *trace);\nvoid readme_example_%d(opprof_trace *trace)\n{\n    (void)trace;\n", n, n
      next
    }
    /^```$/ && inblock { inblock = 0; if (n > 1) print "}"; next }
    inblock { print }
  ' "$1"
} > "$2.tmp"
mv "$2.tmp" "$2"
