# Writes a copy of the row-smem top-k kernel (src/cuda/topk/topk_row_smem.cuh) with %globaltimer
# marks in block 0, thread 0: the load, the bound, each select pass, the winners above the k-th
# rank, its equals by position, and the sort and output. bench/phases/marked_kernel.sh row_smem builds it.
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
rep('  if (!exact && need > 0) {\n    // Each thread', '  __syncthreads(); MARK(10);\n  if (!exact && need > 0) {\n    // Each thread')
rep('  __syncthreads();\n  const unsigned count', '  __syncthreads(); MARK(11);\n  const unsigned count')
rep('  write_row(p, buf, r, begin, count);\n}', '  write_row(p, buf, r, begin, count);\n  __syncthreads(); MARK(12);\n}')
marked.write(sys.argv[1])
