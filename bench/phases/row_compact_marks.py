# Writes a copy of the row-compact top-k kernel (src/cuda/topk/topk_row_compact.cuh) with
# %globaltimer marks in block 0, thread 0: the sampled bound, the stream, the select among the
# survivors, their compaction (or the exact fallback), the sort and the output.
# bench/phases/marked_kernel.sh row_compact builds it.
#   python3 bench/phases/row_compact_marks.py OUT.cuh
import sys
from marks import Marked, TIMER
marked = Marked('src/cuda/topk/topk_row_compact.cuh')
rep = marked.rep
rep('#pragma once', '#pragma once\n' + TIMER +
    '#define MARK(i) do { if (blockIdx.x == 0 && threadIdx.x == 0) prof_t[i] = gt(); } while (0)\n')
rep('  if (wanted > 0) {\n    // 1. The bound', '  MARK(0);\n  if (wanted > 0) {\n    // 1. The bound')
rep('    const unsigned bound2 = bound * 0x10001u;\n', '    const unsigned bound2 = bound * 0x10001u;\n    MARK(1);\n')
rep('      if (count > kCompactRegion) sh.overflow = 1;\n    }\n    __syncthreads();\n',
    '      if (count > kCompactRegion) sh.overflow = 1;\n    }\n    __syncthreads();\n    MARK(2);\n')
rep('      }, wanted, kth, ties);\n', '      }, wanted, kth, ties);\n      MARK(3);\n')
rep('      __syncthreads();  // the survivors are read', '      __syncthreads();\n      MARK(4);  // the survivors are read')
rep('  // 5. Sorted output', '  __syncthreads(); MARK(5);\n  // 5. Sorted output')
rep('  // 6. Written.\n', '  __syncthreads(); MARK(6);\n  // 6. Written.\n')
rep('q < wanted ? ordered[q] : 0ull);\n}', 'q < wanted ? ordered[q] : 0ull);\n  __syncthreads(); MARK(7);\n}')
marked.write(sys.argv[1])
