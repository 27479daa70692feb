# Sourced by the scripts: finds nvcc, picks the build directory and parallelism.
if [ -z "${CUDACXX:-}" ] && ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
RXM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RXM_JOBS=${RXM_JOBS:-$(nproc)}
RXM_BUILD=${RXM_BUILD:-$RXM_ROOT/build}
export RXM_ROOT RXM_JOBS RXM_BUILD

# rxm_build DIR [cmake args...]: configure (once) and build everything in DIR.
rxm_build() {
  local dir=$1; shift
  cmake -S "$RXM_ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
  cmake --build "$dir" -j "$RXM_JOBS"
}

# rxm_install_python DIR: installs DIR's build (library, CLI, headers, the Python package) into
# DIR/prefix and puts the package on the path of this machine's python3 (`python3` on the PATH and
# Debian's /usr/bin/python3) with a radixmesh.pth file in its user site-packages, so that
# `python3 -c "import radixmesh"` works without PYTHONPATH; the package finds the C library
# installed beside it. Then checks both.
rxm_install_python() {
  local dir prefix package py site
  dir=$(cd "$1" && pwd) prefix=$(cd "$1" && pwd)/prefix
  cmake --install "$dir" --prefix "$prefix" >/dev/null
  package=$(find "$prefix" -type d -path '*/radixmesh/python' | head -1)
  for py in $(command -v python3 || true) /usr/bin/python3; do
    [ -x "$py" ] || continue
    site=$("$py" -m site --user-site) || continue
    mkdir -p "$site" && echo "$package" > "$site/radixmesh.pth"
    (cd / && "$py" -c "import radixmesh; print('$py: radixmesh', radixmesh.version(), 'from', radixmesh.__file__)")
  done
  (cd / && python3 -m radixmesh info >/dev/null) && echo "python3 -m radixmesh info: ok"
}
