#include "radixmesh/communicator.hpp"

#include <algorithm>
#include <cstdlib>

#include "radixmesh/error.hpp"

namespace radixmesh::comm {

const char* name_of(Transport t) {
  switch (t) {
    case Transport::automatic: return "auto";
    case Transport::peer: return "peer";
    case Transport::nccl: return "nccl";
    case Transport::mpi: return "mpi";
    case Transport::threads: return "threads";
    case Transport::peer_sm: return "peer-sm";
  }
  return "?";
}

Transport transport_from_name(const std::string& name) {
  for (Transport t : {Transport::automatic, Transport::peer, Transport::peer_sm, Transport::nccl, Transport::mpi,
                      Transport::threads})
    if (name == name_of(t)) return t;
  throw_error(ErrorCode::invalid_argument, "unknown transport '" + name + "'",
              "use one of auto, peer, peer-sm, nccl, mpi, threads");
}

void Communicator::all_to_all_placed(std::span<const AllToAllPlaced>, std::size_t) {
  throw_error(ErrorCode::unsupported,
              std::string("all_to_all_placed: the ") + name_of(transport()) + " transport does not place pieces",
              "check places_pieces() and use all_to_all_v there");
}

std::chrono::milliseconds Communicator::default_timeout() {
  const char* text = std::getenv("RXM_COMM_TIMEOUT_S");
  if (text == nullptr || *text == '\0') return std::chrono::minutes(5);
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  require(end != text && *end == '\0' && seconds > 0 && seconds < 1e9,
          std::string("RXM_COMM_TIMEOUT_S='") + text + "' is not a positive number of seconds",
          "set RXM_COMM_TIMEOUT_S to seconds, e.g. 30 or 0.5, or unset it for the default 300");
  return std::chrono::milliseconds(std::max<long long>(1, static_cast<long long>(seconds * 1000)));
}

}  // namespace radixmesh::comm
