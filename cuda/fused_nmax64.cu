// The fused step kernel's instances for up to 64 directions a column
// (fused.cuh).
#include "fused_layout.cuh"

#define FUSED_INSTANCE_NMAX 64
#define FUSED_INSTANCE_NAME(x) x##64
#include "fused_instance.cuh"
