// Measurements of a machine kept between runs: files in one cache folder, each named by a hash of
// its key (the GPUs' UUIDs and the driver), so a change of GPUs or driver measures again. The link
// rates (machine_links.cpp) and the transport choice (comm/transport_choice.cpp) live there.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace radixmesh::detail {

// $RXM_LINKS_CACHE, else $XDG_CACHE_HOME/radixmesh, else ~/.cache/radixmesh.
std::filesystem::path machine_cache_dir();
// "driver <version> <uuid> <uuid> ...": what a cached measurement belongs to.
std::string machine_cache_key(const std::vector<int>& gpus, const std::string& driver);
// <dir>/<kind>-<hash of key>.txt
std::filesystem::path machine_cache_file(const std::string& key, const char* kind);

}  // namespace radixmesh::detail
