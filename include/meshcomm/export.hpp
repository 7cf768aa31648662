#pragma once

/// Marks a declaration as part of meshcomm's exported ABI; everything else is hidden.
#define MESHCOMM_API [[gnu::visibility("default")]]
