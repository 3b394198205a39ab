// cuFFT, loaded at run time (dlopen) the first time the CUDA backend's angular
// operator may use it, and never otherwise: the binary does not link libcufft
// (286 MB), so it starts, runs --version and --device cpu, and runs the CUDA
// backend with the direct angular kernel on a machine without it.
//
// The library is libcufft.so.<CUFFT_VER_MAJOR of the headers built against>,
// found the dynamic loader's way: the binary's rpath ($ORIGIN/../lib of a dist
// tree, then the build's CUDA lib64), LD_LIBRARY_PATH, the system's cache.
// SMX2D_CUFFT_LIBRARY names another file or path to load instead, or `none`
// to load none (the CUDA backend then behaves as without cuFFT).
#ifndef SMX_CUFFT_LOADER_CUH
#define SMX_CUFFT_LOADER_CUH

#include <cufft.h>

// The entry points angular_fft.cu and halo_fft.cu call, with cuFFT's own
// signatures.
struct cufft_api {
    decltype(&::cufftCreate) Create;
    decltype(&::cufftDestroy) Destroy;
    decltype(&::cufftSetAutoAllocation) SetAutoAllocation;
    decltype(&::cufftMakePlanMany64) MakePlanMany64;
    decltype(&::cufftSetWorkArea) SetWorkArea;
    decltype(&::cufftSetStream) SetStream;
    decltype(&::cufftExecR2C) ExecR2C;
    decltype(&::cufftExecC2R) ExecC2R;
    decltype(&::cufftExecZ2Z) ExecZ2Z;
    decltype(&::cufftGetVersion) GetVersion;
    int version; // cufftGetVersion() of the loaded library, e.g. 12000
};

// The table, loading the library on the first call (thread-safe; later calls
// return the first outcome). nullptr when cuFFT cannot be used, with the reason
// (the library's name and the loader's or the version check's message) in *why.
const cufft_api *cufft_load(const char **why);

// The name of a cufftResult, for messages.
const char *cufft_result_name(cufftResult r);

// In functions that fill an smx_error (create): records the statement, file,
// line and cufftResult and returns SMX_EXIT_RUNTIME.
#define CUFFT_CHECK_ERR(err, stmt)                                                          \
    do {                                                                                    \
        cufftResult r_ = (stmt);                                                            \
        if (r_ != CUFFT_SUCCESS)                                                            \
            return smx_fail((err), SMX_EXIT_RUNTIME, "%s:%d: %s failed: %s (%d)", __FILE__, \
                            __LINE__, #stmt, cufft_result_name(r_), (int)r_);               \
    } while (0)

// Prints, once per process, that cuFFT is unavailable and the direct kernel
// serves instead (the backend's fallback where the plan leaves the method open).
void cufft_warn_unavailable(const char *why);

#endif
