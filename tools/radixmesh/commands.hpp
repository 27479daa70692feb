// The registry of `radixmesh` commands. A new command is one cmd_<name>.cpp defining its
// registrar, one declaration here, and one line in main.cpp's `registrars`.
#pragma once
#include <vector>

#include "cli_common.hpp"

namespace radixmesh::cli {

std::vector<Command> register_sort(CLI::App& root, const Invocation& invocation);      // cmd_sort.cpp
std::vector<Command> register_generate(CLI::App& root, const Invocation& invocation);  // cmd_generate.cpp
std::vector<Command> register_info(CLI::App& root, const Invocation& invocation);      // cmd_info.cpp
std::vector<Command> register_bench(CLI::App& root, const Invocation& invocation);     // cmd_bench.cpp
std::vector<Command> register_multisplit(CLI::App& root, const Invocation& invocation);  // cmd_multisplit.cpp
std::vector<Command> register_topk(CLI::App& root, const Invocation& invocation);  // cmd_topk.cpp
std::vector<Command> register_shuffle(CLI::App& root, const Invocation& invocation);  // cmd_shuffle.cpp

}  // namespace radixmesh::cli
