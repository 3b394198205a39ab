// The fused step kernel's instances for up to 16 directions a column
// (fused.cuh).
#include "fused_layout.cuh"

#define FUSED_INSTANCE_NMAX 16
#define FUSED_INSTANCE_NAME(x) x##16
#include "fused_instance.cuh"
