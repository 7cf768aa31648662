#pragma once

// Convenience umbrella: every core public header (not the opt-in MPI and CUDA adapters).

#include "meshcomm/bootstrap.hpp"
#include "meshcomm/buffer.hpp"
#include "meshcomm/caller_bootstrap.hpp"
#include "meshcomm/collective_options.hpp"
#include "meshcomm/communicator.hpp"
#include "meshcomm/config.hpp"
#include "meshcomm/env_bootstrap.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/halo.hpp"
#include "meshcomm/head_transpose.hpp"
#include "meshcomm/mesh.hpp"
#include "meshcomm/mesh_spec.hpp"
#include "meshcomm/placement.hpp"
#include "meshcomm/pmix_bootstrap.hpp"
#include "meshcomm/ring_pipeline.hpp"
#include "meshcomm/shared_buffer.hpp"
#include "meshcomm/stream.hpp"
#include "meshcomm/topology.hpp"
#include "meshcomm/types.hpp"
#include "meshcomm/work.hpp"
