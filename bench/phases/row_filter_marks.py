# Writes a copy of the row-filter top-k kernels (src/cuda/topk/topk_row_filter.cuh) with
# %globaltimer marks in block 0, thread 0: row_filter's seed, stream, raises on the way (time, how
# many, the keys appended at each), final raise; row_filter_finish's load, sort and write.
# bench/phases/marked_kernel.sh row_filter builds it.
#   python3 bench/phases/row_filter_marks.py OUT.cuh
import sys
from marks import Marked, TIMER
marked = Marked('src/cuda/topk/topk_row_filter.cuh')
rep = marked.rep
rep('#pragma once', '#pragma once\n' + TIMER +
    '#define PROF (blockIdx.x == 0 && threadIdx.x == 0)\n'
    '#define MARK(i) do { if (PROF) prof_t[i] = gt(); } while (0)\n'
    '#define ADD(i, v) do { if (PROF) prof_t[i] += (v); } while (0)\n')
# row_filter: 0 start, 1 seeded, 2 streamed; 3 raises' ns, 4 raises, 5 keys at them, 6 keys
# appended; 7 the final raise done. row_filter_finish: 10 start, 11 loaded (15: keys), 12 sorted
# (the whole sort; 0: write_row's path), 13 written.
rep('  const ValueTiles<T> src(p.values + begin, 0, length, p.options, p.index_bits);\n'
    '  unsigned long long* slots',
    '  MARK(0);\n  const ValueTiles<T> src(p.values + begin, 0, length, p.options, p.index_bits);\n'
    '  unsigned long long* slots')
rep('  unsigned raise_at = f.raise_after;\n', '  MARK(1);\n  unsigned raise_at = f.raise_after;\n')
rep('      threshold = kth_floor(slots, count, threshold, k, sh);\n      raised = true, due = false;\n',
    '      const unsigned long long c0 = gt();\n      ADD(4, 1); ADD(5, count);\n'
    '      threshold = kth_floor(slots, count, threshold, k, sh);\n      ADD(3, gt() - c0);\n'
    '      raised = true, due = false;\n')
rep('  __syncthreads();\n  const unsigned count = sh.count;\n  // A raised threshold',
    '  __syncthreads();\n  const unsigned count = sh.count;\n  MARK(2); ADD(6, count);\n  // A raised threshold')
rep('  if (!listed) threshold = kth_floor(slots, count, threshold, k, sh);\n',
    '  if (!listed) threshold = kth_floor(slots, count, threshold, k, sh);\n  MARK(7);\n')
rep('  if (state.count == kFilterListed) return;\n', '  if (state.count == kFilterListed) return;\n  MARK(10);\n')
rep('  const unsigned count = sh.count;\n  const std::uint64_t begin = p.rows.begin(r);\n',
    '  const unsigned count = sh.count;\n  MARK(11); ADD(15, count);\n  const std::uint64_t begin = p.rows.begin(r);\n')
rep('    for (unsigned q = threadIdx.x; q < p.k; q += blockDim.x) write_place(p, r, begin, q, ordered[q]);\n    return;\n',
    '    MARK(12);\n    for (unsigned q = threadIdx.x; q < p.k; q += blockDim.x) write_place(p, r, begin, q, ordered[q]);\n'
    '    __syncthreads(); MARK(13);\n    return;\n')
rep('  write_row(p, buf, r, begin, count);\n}', '  write_row(p, buf, r, begin, count);\n  __syncthreads(); MARK(13);\n}')

marked.write(sys.argv[1])
