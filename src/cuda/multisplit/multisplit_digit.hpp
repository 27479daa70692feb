#pragma once
#include "radixmesh/device/multisplit_digit.hpp"  // public: device/multisplit.cuh calls it
