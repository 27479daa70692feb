# Writes a copy of the row-cluster top-k kernel (src/cuda/topk/topk_row_cluster.cuh) with
# %globaltimer marks in block 0 of row 0's cluster: after the load, the bound and its list (slices
# of 4096+ values), each pass (and pass 0's steps), the ties taken by position, the winners' list,
# their sort, the counts' barrier, and the end; gathered, the lists' gather and block 0's select,
# sort and writes.
# bench/phases/marked_kernel.sh row_cluster builds it.
#   python3 bench/phases/row_cluster_marks.py OUT.cuh
import sys
from marks import Marked, TIMER
marked = Marked('src/cuda/topk/topk_row_cluster.cuh')
rep = marked.rep
rep('#pragma once','#pragma once\n' + TIMER + '#define MARK(i) do { if (blockIdx.y == 0 && threadIdx.x == 0 && cg::this_cluster().block_rank() == 0) prof_t[i] = gt(); } while (0)\n')
rep('namespace radixmesh::detail::topk_gpu {','namespace radixmesh::detail::topk_gpu {\nnamespace cg = cooperative_groups;')
rep('  cg::cluster_group cluster = cg::this_cluster();','  cg::cluster_group cluster = cg::this_cluster();\n  MARK(0);')
rep('  if (t == 0) sh.listed = 0, sh.bound','  __syncthreads(); MARK(1);\n  if (t == 0) sh.listed = 0, sh.bound')
rep('    bound = std::uint64_t(full) * m >= wanted ? least : 0ull;','    bound = std::uint64_t(full) * m >= wanted ? least : 0ull;\n    MARK(24);')
rep('      in_list = listed_keys <= kClusterCandidates;','      in_list = listed_keys <= kClusterCandidates;\n      MARK(25);')
rep('''    if (bucket == need) break;  // every key of this bucket wins
    if (high == rank_low) ties = true;  // the loop ends here: the last pass is the ties'
  }''','''    MARK(2 + pass);
    if (bucket == need) break;  // every key of this bucket wins
    if (high == rank_low) ties = true;  // the loop ends here: the last pass is the ties'
  }
  MARK(20);''')
rep('''  auto wins_key = [&]''','''  __syncthreads(); MARK(21);
  auto wins_key = [&]''')
rep('''  __syncthreads();
  const unsigned listed = sh.listed < p.k_pad ? sh.listed : p.k_pad;''','''  __syncthreads(); MARK(28);
  const unsigned listed = sh.listed < p.k_pad ? sh.listed : p.k_pad;''')
rep('''  const unsigned start = sh.run_start[me];''','''  MARK(29);
  const unsigned start = sh.run_start[me];''')
rep('''  cluster.barrier_wait();  // every block's count is here''','''  __syncthreads(); MARK(23);
  cluster.barrier_wait();  // every block's count is here''')
rep('''  if (me == 0)
    for (unsigned q = wanted + t; q < p.k; q += blockDim.x) write_place(p, r, begin, q, 0ull);
}''','''  if (me == 0)
    for (unsigned q = wanted + t; q < p.k; q += blockDim.x) write_place(p, r, begin, q, 0ull);
  __syncthreads(); MARK(22);
}''')
rep('''    if (!waited) cluster.barrier_wait(), waited = true;''','''    if (pass == 0) MARK(30);
    if (!waited) cluster.barrier_wait(), waited = true;''')
rep('''    cluster.sync();
    // The digit''','''    __syncthreads(); if (pass == 0) MARK(31);
    cluster.sync(); if (pass == 0) MARK(32);
    // The digit''')
rep('''    const unsigned before = cluster_sum_of_bins_above(count, sh.warp_sum, t, lane, warp);''',
    '''    const unsigned before = cluster_sum_of_bins_above(count, sh.warp_sum, t, lane, warp);
    if (pass == 0) MARK(33);''')
rep('''        if (me == 0) {  // the others' lists are here''','''        MARK(26);
        if (me == 0) {  // the others' lists are here''')
rep('''          write_row(p, buf, r, begin, sh.gathered);''','''          write_row(p, buf, r, begin, sh.gathered);
          __syncthreads(); MARK(27);''')
# Placed from the bins: the sort, then the writes (no counts' barrier, no exchange).
rep('''    sort_run();
    const unsigned mask''','''    sort_run();
    __syncthreads(); MARK(23); MARK(29);
    const unsigned mask''')
rep('''      for (unsigned q = wanted + t; q < p.k; q += blockDim.x) write_place(p, r, begin, q, 0ull);
    return;''','''      for (unsigned q = wanted + t; q < p.k; q += blockDim.x) write_place(p, r, begin, q, 0ull);
    __syncthreads(); MARK(22);
    return;''')
marked.write(sys.argv[1])
