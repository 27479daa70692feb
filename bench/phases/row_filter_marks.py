# Writes a copy of the row-filter top-k kernels (src/cuda/topk/topk_row_filter.cuh) with
# %globaltimer marks in block 0, thread 0: row_filter's seed, stream, raises on the way (time, how
# many, the keys appended at each), final raise; row_filter_finish's load, then its sort and write.
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
# appended; 7 the final raise done. row_filter_finish: 10 start, 11 loaded (15: keys), 13 sorted and
# written (write_row).
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
rep('  write_row<T, kFinishSortMax>(p, buf, r, p.rows.begin(r), sh.count);\n}',
    '  MARK(11); ADD(15, sh.count);\n  write_row<T, kFinishSortMax>(p, buf, r, p.rows.begin(r), sh.count);\n'
    '  __syncthreads(); MARK(13);\n}')

marked.write(sys.argv[1])
