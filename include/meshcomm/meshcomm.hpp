#pragma once

// Convenience umbrella: every core public header (not the opt-in MPI and CUDA adapters).

#include "meshcomm/bootstrap.hpp"
#include "meshcomm/buffer.hpp"
#include "meshcomm/communicator.hpp"
#include "meshcomm/config.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/mesh.hpp"
#include "meshcomm/mesh_spec.hpp"
#include "meshcomm/stream.hpp"
#include "meshcomm/types.hpp"
#include "meshcomm/work.hpp"
