#include "mesh/sort_checks.hpp"

#include "mesh/shard_count.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/multisplit.hpp"

namespace radixmesh::detail {
namespace {

constexpr const char* agreement_fields[] = {"key type", "value width", "order", "begin_bit", "end_bit",
                                            "mesh_digit_bits"};

std::string field_value(const Agreement& a, int field) {
  switch (field) {
    case 0: return std::string(name_of(KeyType(a.type)));
    case 1: return a.value_bytes ? std::to_string(a.value_bytes) + " bytes" : "no values";
    case 2: return a.order ? "descending" : "ascending";
    case 3: return std::to_string(a.begin_bit);
    case 4: return std::to_string(a.end_bit);
    default: return std::to_string(a.digit_bits);
  }
}

// One side (the input, or the output of sort_shards_into) of local device i's shard.
void validate_side(const ShardSortArgs& a, const ShardSpans& side, const char* what, std::size_t i,
                   const std::string& who, const comm::Location& where) {
  require(side.sizes[i] == 0 || side.keys[i] != nullptr, std::string("sort: the ") + what + "keys of " + who + " are null",
          "pass the shard's storage");
  if (a.device_resident) {
    require(where.cuda_device >= 0, "sort: device_span shards on CPU " + who,
            "pass host spans (std::span) on CPU mesh devices");
    require(side.key_devices[i] == where.cuda_device,
            std::string("sort: the ") + what + "keys shard of " + who + " is on device " +
                std::to_string(side.key_devices[i]) + ", but " + who + " is GPU " + std::to_string(where.cuda_device),
            "pass shard i on the device of mesh device first + i (Context::local_mesh_devices())");
    require(side.sizes[i] == 0 || is_device_pointer(side.keys[i]),
            std::string("sort: the ") + what + "keys shard of " + who + " is a device_span over host memory",
            "pass device memory in device_spans (host memory in std::span)");
  }
  if (a.value_bytes == 0) return;
  require(side.value_sizes[i] == side.sizes[i],
          "sort: " + who + " has " + std::to_string(side.sizes[i]) + " " + what + "keys and " +
              std::to_string(side.value_sizes[i]) + " " + what + "values",
          "pass as many values as keys on every device");
  require(side.sizes[i] == 0 || side.values[i] != nullptr, std::string("sort: the ") + what + "values of " + who + " are null",
          "pass the values' storage");
  if (a.device_resident)
    require(side.value_devices[i] == side.key_devices[i],
            "sort: " + who + " has its " + what + "keys on device " + std::to_string(side.key_devices[i]) +
                " and its values on " + std::to_string(side.value_devices[i]),
            "put a shard's keys and values on the same device");
}

}  // namespace

void check_agreement(std::span<const Agreement> all) {
  for (std::size_t p = 1; p < all.size(); ++p)
    for (int f = 0; f < 6; ++f) {
      const std::uint64_t* mine = &all[p].type;
      const std::uint64_t* first = &all[0].type;
      if (mine[f] == first[f]) continue;
      throw Error(ErrorCode::invalid_argument,
                  "sort: mesh devices disagree on the " + std::string(agreement_fields[f]) + ": mesh device 0 has " +
                      field_value(all[0], f) + ", mesh device " + std::to_string(p) + " has " +
                      field_value(all[p], f) + ". fix: call the sort with the same key type, values, order and bits "
                      "on every rank");
    }
}

void validate_shard(const ShardSortArgs& a, std::size_t i, int participant, const comm::Location& where,
                    int digit_bits) {
  require(digit_bits >= 1 && digit_bits <= 16, "sort: mesh_digit_bits = " + std::to_string(digit_bits),
          "use 1 to 16 bits per partition digit (0: automatic)");
  const std::string who = "mesh device " + std::to_string(participant);
  validate_side(a, a.in, a.into ? "input " : "", i, who, where);
  if (a.into) validate_side(a, a.out, "output ", i, who, where);
}

void validate_spans(const ShardSortArgs& a, const ShardSpans& side, const char* what, int locals) {
  mesh::require_shard_per_device("sort", what, side.keys.size(), locals);
  require(a.value_bytes == 0 || side.values.size() == side.keys.size(),
          "sort: " + std::to_string(side.values.size()) + " value spans for " + std::to_string(side.keys.size()) +
              " shards",
          "pass one value span per shard");
  require(!a.device_resident || (side.key_devices.size() == side.keys.size() &&
                                 (a.value_bytes == 0 || side.value_devices.size() == side.values.size())),
          "sort: device shards without their devices", "build the shards as device_spans");
}

}  // namespace radixmesh::detail
