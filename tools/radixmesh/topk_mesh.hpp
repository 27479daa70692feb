// radixmesh topk on several mesh devices (--devices 0,1 | 0,0,0,0 | cpu:N) and under mpirun: the
// input cut into column blocks, one per mesh device (a plain array is one row), and the top-k over
// them (radixmesh/topk_shards.hpp), which equals the one-device result.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "radixmesh/io.hpp"
#include "radixmesh/topk.hpp"
#include "radixmesh/topk_shards.hpp"

namespace radixmesh::cli {

// Block d's first column and width when `columns` are cut evenly into `parts` blocks.
std::size_t block_first(std::size_t columns, int parts, int d);
std::size_t block_width(std::size_t columns, int parts, int d);

// Columns [first, first + width) of every row of `values` (rows x columns, row-major).
HostArray column_block(const HostArray& values, std::size_t rows, std::size_t first, std::size_t width);
// The same block read from a file with positioned reads (an MPI rank's share of the file).
HostArray read_column_block(const std::filesystem::path& path, KeyType type, std::size_t rows, std::size_t columns,
                            std::size_t first, std::size_t width);

// The top-k over the local blocks (one per local mesh device of ctx; rows of each) into host
// outputs of rows * k entries (out_indices: i32 or i64). Collective on MPI contexts.
void topk_over_blocks(Context& ctx, const std::vector<HostArray>& blocks, std::size_t rows, bool batched,
                      std::size_t k, const TopkOptions& options, HostArray& out_values, HostArray& out_indices,
                      const TopkShardOptions& mesh = {});

// --path: auto, candidates or radix-select.
TopkShardPath parse_topk_path(const std::string& text);
// --explain's lines: the path taken and why, and each step's time.
std::string explain_topk(const TopkPhases& phases, int devices);

}  // namespace radixmesh::cli
