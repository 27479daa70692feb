#include "topk_mesh.hpp"

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
                      std::size_t k, const TopkOptions& options, HostArray& out_values, HostArray& out_indices) {
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
  detail::topk_shards(ctx, rq);
}

}  // namespace radixmesh::cli
