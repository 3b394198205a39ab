// cuFFT loaded with dlopen on first use (interface: cufft_loader.cuh). The
// library is never unloaded: plans made from it may live until the process
// ends.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <dlfcn.h>

#include "cufft_loader.cuh"
extern "C" {
#include "base/error.h"
}
#include "transport/device_query.h"

#define SMX_STR2(x) #x
#define SMX_STR(x) SMX_STR2(x)

namespace {

// The soname of the cuFFT whose headers this file was compiled with: another
// major version has another ABI.
constexpr const char *kDefaultLibrary = "libcufft.so." SMX_STR(CUFFT_VER_MAJOR);

struct loader_state {
    cufft_api api;
    bool ok;
    char why[512];
};

std::once_flag once;
std::atomic<bool> tried{ false }; // set, after st is final, by the one load
std::atomic<bool> warned{ false };
loader_state st;

template <class F>
bool take(void *lib, const char *lib_name, const char *symbol, F *slot)
{
    dlerror();
    void *p = dlsym(lib, symbol);
    if (!p) {
        const char *e = dlerror();
        snprintf(st.why, sizeof st.why, "%s: %s missing (%s)", lib_name, symbol,
                 e ? e : "no such symbol");
        return false;
    }
    *slot = reinterpret_cast<F>(p);
    return true;
}

void load_now()
{
    const char *env = getenv("SMX2D_CUFFT_LIBRARY");
    const char *name = env && env[0] ? env : kDefaultLibrary;
    if (strcmp(name, "none") == 0) {
        snprintf(st.why, sizeof st.why, "SMX2D_CUFFT_LIBRARY=none");
        tried.store(true);
        return;
    }
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(st.why, sizeof st.why, "%s", e ? e : name);
        tried.store(true);
        return;
    }
    cufft_api a{};
    bool ok = take(lib, name, "cufftCreate", &a.Create) &&
              take(lib, name, "cufftDestroy", &a.Destroy) &&
              take(lib, name, "cufftSetAutoAllocation", &a.SetAutoAllocation) &&
              take(lib, name, "cufftMakePlanMany64", &a.MakePlanMany64) &&
              take(lib, name, "cufftSetWorkArea", &a.SetWorkArea) &&
              take(lib, name, "cufftSetStream", &a.SetStream) &&
              take(lib, name, "cufftExecR2C", &a.ExecR2C) &&
              take(lib, name, "cufftExecC2R", &a.ExecC2R) &&
              take(lib, name, "cufftExecZ2Z", &a.ExecZ2Z) &&
              take(lib, name, "cufftGetVersion", &a.GetVersion);
    if (ok) {
        // cuFFT numbers its versions major * 1000 + minor * 100 + patch.
        int v = 0;
        cufftResult r = a.GetVersion(&v);
        if (r != CUFFT_SUCCESS || v / 1000 != CUFFT_VER_MAJOR) {
            snprintf(st.why, sizeof st.why,
                     "%s reports version %d (cufftGetVersion returned %d); this build needs "
                     "cuFFT %d.x (%s)",
                     name, v, (int)r, CUFFT_VER_MAJOR, kDefaultLibrary);
            ok = false;
        }
        a.version = v;
    }
    if (ok) {
        st.api = a;
        st.ok = true;
    } else {
        dlclose(lib);
    }
    tried.store(true);
}

} // namespace

const cufft_api *cufft_load(const char **why)
{
    std::call_once(once, load_now);
    if (st.ok)
        return &st.api;
    if (why)
        *why = st.why;
    return nullptr;
}

const char *cufft_result_name(cufftResult r)
{
    switch (r) {
    case CUFFT_SUCCESS:
        return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN:
        return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED:
        return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE:
        return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE:
        return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR:
        return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED:
        return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED:
        return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE:
        return "CUFFT_INVALID_SIZE";
    case CUFFT_UNALIGNED_DATA:
        return "CUFFT_UNALIGNED_DATA";
    case CUFFT_INVALID_DEVICE:
        return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE:
        return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED:
        return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED:
        return "CUFFT_NOT_SUPPORTED";
    default:
        return "unknown cufftResult";
    }
}

void cufft_warn_unavailable(const char *why)
{
    if (!warned.exchange(true))
        smx_warn("cuFFT is unavailable (%s): the angular operator uses the direct kernel\n", why);
}

extern "C" int cufft_query(int load, char *why, size_t cap)
{
    if (load)
        std::call_once(once, load_now);
    if (!tried.load()) {
        snprintf(why, cap, "not loaded");
        return 0;
    }
    if (st.ok) {
        snprintf(why, cap, "%s", "");
        return st.api.version;
    }
    snprintf(why, cap, "%s", st.why);
    return 0;
}
