// The fused step kernel's instances for up to 32 directions a column
// (fused.cuh).
#include "fused_layout.cuh"

#define FUSED_INSTANCE_NMAX 32
#define FUSED_INSTANCE_NAME(x) x##32
#include "fused_instance.cuh"
