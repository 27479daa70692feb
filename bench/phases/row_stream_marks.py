# Writes a copy of the row-stream top-k kernel (src/cuda/topk/topk_row_stream.cuh) with
# %globaltimer marks in block (0, 0), thread 0: the seed, the tiles streamed (compactions left out),
# the compactions inside the stream (time, how many, the keys they took), and the row's output:
# its last compaction, its sort and its write. bench/phases/marked_kernel.sh row_stream builds it.
#   python3 bench/phases/row_stream_marks.py OUT.cuh
import sys
from marks import Marked, TIMER
marked = Marked('src/cuda/topk/topk_row_stream.cuh')
rep = marked.rep
rep('#pragma once', '#pragma once\n' + TIMER +
    '#define PROF (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0)\n'
    '#define MARK(i) do { if (PROF) prof_t[i] = gt(); } while (0)\n'
    '#define ADD(i, v) do { if (PROF) prof_t[i] += (v); } while (0)\n')
# 0: start, 1: seeded, 2: streamed; 3: compaction ns, 4: compactions, 5: keys compacted, 6: keys
# left at the end; 7: the output's compaction done, 8: sorted, 9: written.
rep('  StreamBuffer buf{stream_keys, stream_keys + p.capacity, sh};\n  const std::size_t r = p.row0 + blockIdx.y;\n'
    '  const std::uint64_t begin = p.rows.begin(r), length',
    '  StreamBuffer buf{stream_keys, stream_keys + p.capacity, sh};\n  MARK(0);\n  const std::size_t r = p.row0 + blockIdx.y;\n'
    '  const std::uint64_t begin = p.rows.begin(r), length')
rep('      if (threadIdx.x < src.loose())\n        if (const unsigned long long key = src.loose_key(threadIdx.x); key > threshold) put(key);\n',
    '      __syncthreads(); MARK(1);\n'
    '      if (threadIdx.x < src.loose())\n        if (const unsigned long long key = src.loose_key(threadIdx.x); key > threshold) put(key);\n')
rep('          threshold = buf.keep_best(buf.sh.count, k, 64 - Tiles::W, k + k / 4);\n',
    '          const unsigned long long c0 = gt();\n          ADD(4, 1); ADD(5, buf.sh.count);\n'
    '          threshold = buf.keep_best(buf.sh.count, k, 64 - Tiles::W, k + k / 4);\n          ADD(3, gt() - c0);\n')
rep('      const unsigned count = buf.sh.count;\n      __syncthreads();\n      return count;',
    '      const unsigned count = buf.sh.count;\n      __syncthreads();\n      MARK(2); ADD(6, count);\n      return count;')
rep('  unsigned size = p.k_pad;\n', '  __syncthreads(); MARK(7);\n  unsigned size = p.k_pad;\n')
rep('  for (unsigned q = threadIdx.x; q < p.k; q += blockDim.x) write_place(p, r, begin, q, q < count ? ordered[q] : 0ull);\n',
    '  __syncthreads(); MARK(8);\n'
    '  for (unsigned q = threadIdx.x; q < p.k; q += blockDim.x) write_place(p, r, begin, q, q < count ? ordered[q] : 0ull);\n'
    '  __syncthreads(); MARK(9);\n')

marked.write(sys.argv[1])
