# Writes a copy of the row-smem top-k kernel (src/cuda/topk/topk_row_smem.cuh) with %globaltimer
# marks in block 0, thread 0: the load, the bound, each select pass, the winners counted, the
# winners placed in position order, their sort, and the output. bench/phases/marked_kernel.sh
# row_smem builds it.
#   python3 bench/phases/row_smem_marks.py OUT.cuh
import sys
from marks import Marked, TIMER
marked = Marked('src/cuda/topk/topk_row_smem.cuh')
rep = marked.rep
rep('#pragma once', '#pragma once\n' + TIMER +
    '#define MARK(i) do { if (blockIdx.x == 0 && threadIdx.x == 0) prof_t[i] = gt(); } while (0)\n')
rep('  const unsigned wanted = unsigned(std::min<std::uint64_t>(p.k, length));\n',
    '  const unsigned wanted = unsigned(std::min<std::uint64_t>(p.k, length));\n  MARK(0);\n')
rep("  // The row's best rank and the bound", "  __syncthreads(); MARK(1);\n  // The row's best rank and the bound")
rep('  __syncthreads();  // the slots, the warps\' figures, the zeroed histograms\n',
    '  __syncthreads();  // the slots, the warps\' figures, the zeroed histograms\n  MARK(2);\n')
rep('    __syncthreads();  // sh.stream\'s decision and the histograms are rewritten by the next pass\n',
    '    __syncthreads();  // sh.stream\'s decision and the histograms are rewritten by the next pass\n    MARK(3 + pass);\n')
rep('    if (lane == 0) sh.warp_counts[warp] = mine;\n  }\n  __syncthreads();\n',
    '    if (lane == 0) sh.warp_counts[warp] = mine;\n  }\n  __syncthreads();\n  MARK(10);\n')
rep('  __syncthreads();\n\n  // Sorted output', '  __syncthreads();\n  MARK(11);\n\n  // Sorted output')
rep('  for (unsigned q = t; q < p.k; q += kSmemThreads)', '  __syncthreads(); MARK(12);\n  for (unsigned q = t; q < p.k; q += kSmemThreads)')
rep('q < wanted ? ordered[q] : 0ull);\n}', 'q < wanted ? ordered[q] : 0ull);\n  __syncthreads(); MARK(13);\n}')
marked.write(sys.argv[1])
