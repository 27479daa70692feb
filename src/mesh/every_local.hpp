// Running one step on every local mesh device: at once from host threads where the backend
// allows it, else one after another; a failure is recorded against its mesh device.
#pragma once
#include <functional>

#include "mesh/device_backend.hpp"
#include "mesh/local_errors.hpp"

namespace radixmesh::mesh {

// Runs step(i) for every local device i, recording a failure against its mesh device: at once
// from host threads where the backend allows it (GPU devices, each waiting on its own stream),
// else one after another.
void on_every_local(DeviceBackend& backend, LocalErrors& errors, int first, int locals,
                    const std::function<void(int)>& step);

}  // namespace radixmesh::mesh
