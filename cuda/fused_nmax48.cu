// The fused step kernel's instances for up to 48 directions a column
// (fused.cuh).
#include "fused_layout.cuh"

#define FUSED_INSTANCE_NMAX 48
#define FUSED_INSTANCE_NAME(x) x##48
#include "fused_instance.cuh"
