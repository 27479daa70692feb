// The check every mesh call over shards starts with: one shard per local mesh device.
#pragma once
#include <cstddef>
#include <string>

#include "radixmesh/error.hpp"

namespace radixmesh::mesh {

// call: "sort", "shuffle", "topk"; kind: "" or a word before "shards" ("input ", "output ").
inline void require_shard_per_device(const char* call, const char* kind, std::size_t shards, int locals) {
  require(shards == std::size_t(locals),
          std::string(call) + ": " + std::to_string(shards) + " " + kind + "shards for " + std::to_string(locals) +
              " local mesh devices",
          "pass one span per local mesh device (Context::local_mesh_devices())");
}

}  // namespace radixmesh::mesh
