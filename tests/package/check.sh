#!/usr/bin/env bash
# ctest driver: install the build tree to a temporary prefix, then configure, build and run the
# consumer project against it: main.cpp, and README.md's "C++ API in ten lines" taken from the
# README itself (its #include and namespace lines at file scope, the rest as main's body). With
# nvcc's path and CUDA architectures (CUDA builds), the CUDA consumer is built and run too (it
# skips its run where no GPU is visible). The installed Python package is imported and run too.
#   check.sh BUILD SOURCE WORK [NVCC CUDA_ARCHITECTURES]
set -euo pipefail
build=$1 source=$2 work=$3 nvcc=${4:-} cuda_arch=${5:-}
readme=$source/../../README.md
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
awk '/^```cpp$/ { inside = 1; next } inside && /^```$/ { exit } inside { print }' "$readme" >"$work/readme.snippet"
[ -s "$work/readme.snippet" ] || { echo "no \`\`\`cpp block in $readme"; exit 1; }
{
  echo "// README.md's C++ example as written, wrapped in main() by tests/package/check.sh."
  grep -E '^(#include|namespace )' "$work/readme.snippet"
  echo "#include <algorithm>"
  echo "#include <cstdio>"
  echo "int main() {"
  grep -vE '^(#include|namespace )' "$work/readme.snippet"
  echo '  bool ok = std::is_sorted(keys.rbegin(), keys.rend(), rxm::key_less<float>{});'
  echo '  for (std::size_t i = 0; ok && i + 1 < keys.size(); ++i) ok = keys[i] != keys[i + 1] || ids[i] < ids[i + 1];'
  echo '  std::printf("readme example: %s\n", ok ? "ok" : "FAILED");'
  echo '  return ok ? 0 : 1;'
  echo "}"
} >"$work/readme_example.cpp"
cuda_args=()
[ -n "$nvcc" ] && cuda_args=(-DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="$cuda_arch")
cmake -S "$source" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DREADME_EXAMPLE="$work/readme_example.cpp" "${cuda_args[@]}" >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/consumer"
"$work/consumer/readme_example"
if [ -n "$nvcc" ]; then "$work/consumer/cuda_consumer"; fi
# The installed Python package finds its library with no environment variable (where the
# interpreter has NumPy; Debian's python3 comes first, as in tests/CMakeLists.txt).
pkg=$(ls -d "$work"/prefix/lib*/radixmesh/python 2>/dev/null | head -1)
if [ -n "$pkg" ]; then
  for py in /usr/bin/python3 python3; do
    if "$py" -c "import numpy" 2>/dev/null; then
      env -u RXM_C_LIBRARY PYTHONPATH="$pkg" "$py" -c \
        "import numpy as np, radixmesh; v, i = radixmesh.topk(np.arange(10, dtype=np.float32), 3); assert list(i) == [9, 8, 7]; print('python package: ok', radixmesh.version())"
      PYTHONPATH="$pkg" "$py" -m radixmesh version
      break
    fi
  done
fi
