/* kernels.cu compiled by the host compiler, for the CPU launcher (cuda-host.h,
 * cpu-launch.cc): the same kernels' arithmetic, run on the CPU in the test suite. */
#include "cuda-host.h"

#include "kernels.cu"
