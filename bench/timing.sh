# Sourced by the bench scripts (bash): a command's time and memory, and the
# median of figures, as bench/timing.h does for the C benchmarks.

# bench_time OUT CMD...: runs CMD with its standard output in OUT and prints
# "wall_s cpu_s maxrss_kib" (cpu: user + system) of it.
bench_time() {
  local out=$1 t
  shift
  t=$(mktemp)
  /usr/bin/time -f '%e %U %S %M' -o "$t" "$@" >"$out"
  awk '{printf "%s %.3f %s\n", $1, $2 + $3, $4}' "$t"
  rm -f "$t"
}

# The median of the numbers on standard input, one per line (0 when none).
bench_median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print 0 }'; }

# bench_col FILE N: the median of FILE's column N.
bench_col() { awk -v c="$2" '{print $c}' "$1" | bench_median; }
