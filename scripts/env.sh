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
