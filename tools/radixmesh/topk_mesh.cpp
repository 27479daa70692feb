#include "topk_mesh.hpp"

#include <cstdio>
#include <cstring>

#include "radixmesh/topk_shards.hpp"

namespace radixmesh::cli {

std::size_t block_first(std::size_t columns, int parts, int d) {
  return columns * std::size_t(d) / std::size_t(parts);
}
std::size_t block_width(std::size_t columns, int parts, int d) {
  return block_first(columns, parts, d + 1) - block_first(columns, parts, d);
}

HostArray column_block(const HostArray& values, std::size_t rows, std::size_t first, std::size_t width) {
  const std::size_t b = size_of(values.type()), columns = values.size() / rows;
  HostArray block(values.type(), rows * width);
  for (std::size_t r = 0; r < rows; ++r)
    std::memcpy(static_cast<std::byte*>(block.data()) + r * width * b,
                static_cast<const std::byte*>(values.data()) + (r * columns + first) * b, width * b);
  return block;
}

HostArray read_column_block(const std::filesystem::path& path, KeyType type, std::size_t rows, std::size_t columns,
                            std::size_t first, std::size_t width) {
  if (rows == 1) return read_array_slice(path, type, first, width);
  const std::size_t b = size_of(type);
  HostArray block(type, rows * width);
  for (std::size_t r = 0; r < rows; ++r) {
    const HostArray row = read_array_slice(path, type, r * columns + first, width);
    std::memcpy(static_cast<std::byte*>(block.data()) + r * width * b, row.data(), width * b);
  }
  return block;
}

void topk_over_blocks(Context& ctx, const std::vector<HostArray>& blocks, std::size_t rows, bool batched,
                      std::size_t k, const TopkOptions& options, HostArray& out_values, HostArray& out_indices,
                      const TopkShardOptions& mesh) {
  detail::ShardTopkRequest rq;
  rq.type = out_values.type();
  for (const HostArray& b : blocks) {
    rq.values.push_back(b.data());
    rq.sizes.push_back(b.size());
  }
  rq.rows = rows;
  rq.batched = batched;
  rq.k = k;
  rq.options = options;
  rq.index_bytes = size_of(out_indices.type());
  rq.out_values = out_values.data();
  rq.out_indices = out_indices.data();
  rq.path = mesh.path;
  rq.phases = mesh.phases;
  detail::topk_shards(ctx, rq);
}

TopkShardPath parse_topk_path(const std::string& text) {
  if (text == "auto") return TopkShardPath::automatic;
  if (text == "candidates") return TopkShardPath::candidates;
  if (text == "radix-select") return TopkShardPath::radix_select;
  throw Error(ErrorCode::invalid_argument,
              "--path '" + text + "' is not a top-k path. fix: use auto, candidates or radix-select");
}

std::string explain_topk(const TopkPhases& ph, int devices) {
  char line[512];
  if (ph.path == TopkShardPath::radix_select)
    std::snprintf(line, sizeof line,
                  "path: radix select (%d digit passes; no candidates move)\n"
                  "steps: counting passes %.3f ms, winners gathered %.3f ms, taken and ordered %.3f ms\n",
                  ph.select_passes, ph.local_ms, ph.gather_ms, ph.merge_ms);
  else
    std::snprintf(line, sizeof line,
                  "path: candidates (%zu per row from %d devices; automatic takes the radix select only above 2^27 "
                  "candidates: below, it measured slower, docs/design/mesh-topk.md)\n"
                  "steps: local top-k %.3f ms, candidates gathered %.3f ms, final top-k %.3f ms\n",
                  ph.candidates_per_row, devices, ph.local_ms, ph.gather_ms, ph.merge_ms);
  return line;
}

}  // namespace radixmesh::cli
