#pragma once
#include "radixmesh/device/multisplit_digit.hpp"  // moved there in session 6 (public: device/multisplit.cuh calls it)
