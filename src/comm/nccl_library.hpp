// NCCL, loaded at run time with dlopen, so that radixmesh has no link dependency on it (the
// library is about 200 MB; GPU machines carry it with the CUDA toolkit or PyTorch's wheels). The
// declarations come from the toolkit's nccl.h. Search order: $RXM_NCCL_LIBRARY, then
// libnccl.so.2 on the loader's path.
#pragma once
#include <nccl.h>

#include <string>

namespace radixmesh::comm {

struct NcclLibrary {
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRank) comm_init_rank = nullptr;
  decltype(&ncclCommInitAll) comm_init_all = nullptr;
  decltype(&ncclCommDestroy) comm_destroy = nullptr;
  decltype(&ncclCommAbort) comm_abort = nullptr;
  decltype(&ncclCommGetAsyncError) comm_get_async_error = nullptr;
  decltype(&ncclGetErrorString) get_error_string = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclSend) send = nullptr;
  decltype(&ncclRecv) recv = nullptr;
};

// The loaded library; throws rxm::Error(unsupported) naming what was tried and the fix when NCCL
// cannot be loaded.
const NcclLibrary& nccl();

// Throws rxm::Error(device) for a failed NCCL call, naming it and NCCL's message.
void check_nccl(ncclResult_t result, const char* call);

}  // namespace radixmesh::comm
