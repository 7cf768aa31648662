#!/usr/bin/env bash
# meshcomm.h compiles as strict C11 (and as C++), and the library's dynamic symbols are the
# C ABI's meshcomm* functions and mangled C++ names only.
#   check_abi.sh CC LIBRARY INCLUDE_DIR GENERATED_INCLUDE_DIR
set -euo pipefail
cc=$1 library=$2 include=$3 generated=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '#include <meshcomm/meshcomm.h>\nint main(void) { int v = 0; return meshcommGetVersion(&v) == meshcommSuccess ? 0 : 1; }\n' >"$work/use.c"
"$cc" -std=c11 -Wall -Wextra -pedantic -Werror -I"$include" -I"$generated" -c "$work/use.c" -o "$work/use.o"
echo "meshcomm.h compiles as C11 with -Wall -Wextra -pedantic -Werror"
c_symbols=$(nm -D --defined-only "$library" | awk '{print $3}' | grep -v '^_Z' || true)
strays=$(grep -v '^meshcomm' <<<"$c_symbols" || true)
if [[ -n "$strays" ]]; then
  echo "the library exports C symbols outside meshcomm*:"
  echo "$strays"
  exit 1
fi
echo "the library exports $(wc -l <<<"$c_symbols") C symbols, all meshcomm*"
