#!/usr/bin/env bash
# Runs a numeric test under one variant of the arithmetic beneath it, so that a result which
# hinges on one machine's rounding fails on every machine, not only on the one that rounds that way.
#
#   run_variant.sh VARIANT COMMAND [ARGUMENTS...]
#
# VARIANT is one of
#   openblas-Prescott, openblas-Sandybridge, openblas-Haswell, openblas-Zen, openblas-SkylakeX:
#       OpenBLAS forced to that kernel (OPENBLAS_CORETYPE; Debian's OpenBLAS otherwise picks one
#       from the CPU, so each machine runs only its own);
#   openblas-2-threads: OpenBLAS's own kernel with OPENBLAS_NUM_THREADS=2;
#   libm-without-fma: glibc's exp, log and friends without their FMA/AVX2 versions, as on a CPU
#       that lacks them (they round differently in the last place).
# Exits 77, which ctest counts as skipped, where this CPU lacks what the variant needs (forcing a
# kernel the CPU cannot run would crash, not test), and where OpenBLAS did not take the kernel.
set -uo pipefail

variant=$1
shift

needs="" kernel=""
case "$variant" in
  openblas-Prescott) kernel=Prescott needs="pni" ;;  # pni: SSE3
  openblas-Sandybridge) kernel=Sandybridge needs="avx" ;;
  openblas-Haswell) kernel=Haswell needs="avx2 fma" ;;
  openblas-Zen) kernel=Zen needs="avx2 fma" ;;
  openblas-SkylakeX) kernel=SkylakeX needs="avx512f avx512dq avx512bw avx512vl" ;;
  openblas-2-threads) export OPENBLAS_NUM_THREADS=2 ;;
  libm-without-fma) needs="fma" ;;  # without FMA the CPU runs these versions anyway
  *)
    echo "run_variant.sh: unknown variant '$variant': use openblas-<Prescott|Sandybridge|Haswell|Zen|SkylakeX>," \
         "openblas-2-threads or libm-without-fma" >&2
    exit 2
    ;;
esac

cpu_flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
for flag in $needs; do
  if [[ "$cpu_flags" != *" $flag "* ]]; then
    echo "skipped: this CPU has no '$flag', which variant $variant needs"
    exit 77
  fi
done

if [ -n "$kernel" ]; then
  export OPENBLAS_CORETYPE=$kernel OPENBLAS_NUM_THREADS=1 OPENBLAS_VERBOSE=2
fi
if [ "$variant" = libm-without-fma ]; then
  export GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA
fi

output=$("$@" 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" -ne 0 ]; then
  echo "failed under $variant: exit status $status"
  exit "$status"
fi
if [ -n "$kernel" ] && ! grep -q "^Core: $kernel\$" <<<"$output"; then
  echo "skipped: OpenBLAS did not run its $kernel kernel (it reported: $(grep -m1 '^Core:' <<<"$output" || echo nothing))"
  exit 77
fi
echo "passed under $variant"
