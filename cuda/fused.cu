// The fused step's dispatch (fused.cuh says what it computes): the launch by
// the direction count's instance group (cuda/fused_nmax*.cu, the kernel body
// in fused_kernel.cuh) and the checks the backend asks before it chooses
// the path.
#include "fused_layout.cuh"

namespace {

template <bool STREAM, bool SLOTS>
cudaError_t launch_by_nmax(const fused_args &A, cudaStream_t s)
{
    switch (fused_nmax(A.d.nth)) {
    case 16:
        return fused_launch_nmax16(A, STREAM, SLOTS, s);
    case 32:
        return fused_launch_nmax32(A, STREAM, SLOTS, s);
    case 48:
        return fused_launch_nmax48(A, STREAM, SLOTS, s);
    default:
        return fused_launch_nmax64(A, STREAM, SLOTS, s);
    }
}

template <bool STREAM>
cudaError_t launch(const fused_args &A, cudaStream_t s)
{
    if (A.d.nth > 64)
        return cudaErrorInvalidValue;
    if constexpr (STREAM)
        if (A.nslots > 1)
            return launch_by_nmax<true, true>(A, s);
    return launch_by_nmax<STREAM, false>(A, s);
}

} // namespace

int fused_boundary_row_floats(int64_t nth)
{
    return fused_nmax(nth);
}

int fused_boundary_rows_fit(const fused_sizes &z, int tiles, int n_wide)
{
    const int64_t nth = z.nth, ne = z.ne;
    const int stream = z.stream;
    if (nth > 64 || (tiles != 1 && tiles != FUSED_SUB))
        return 0;
    const int kp = padded_kp(z.max_half_width, z.kp_cap), spec = z.spec_planes;
    switch (fused_nmax(nth)) {
    case 16:
        return fused_rows_fit_nmax16(kp, ne, tiles, n_wide, stream, spec, z.split_sums != 0);
    case 32:
        return fused_rows_fit_nmax32(kp, ne, tiles, n_wide, stream, spec, z.split_sums != 0);
    case 48:
        return fused_rows_fit_nmax48(kp, ne, tiles, n_wide, stream, spec, z.split_sums != 0);
    default:
        return fused_rows_fit_nmax64(kp, ne, tiles, n_wide, stream, spec, z.split_sums != 0);
    }
}

int fused_media_split_sums_fit(int64_t nth, int64_t ne, int reach_bins, int spec_planes,
                               int bin_bytes)
{
    if (nth > FUSED_SPLIT_SUMS_MAX_NTH || spec_planes < 1)
        return 0;
    switch (fused_nmax(nth)) {
    case 16:
        return fused_media_sums_fit_nmax16(ne, reach_bins, spec_planes, bin_bytes);
    default:
        return fused_media_sums_fit_nmax32(ne, reach_bins, spec_planes, bin_bytes);
    }
}

cudaError_t fused_theta_energy(const fused_args &A, cudaStream_t s)
{
    if (!fused_theta_energy_supported(A.d.nth, A.d.slice, A.d.ne, A.at.max_half_width))
        return cudaErrorInvalidValue;
    fused_args B = A; // what the two-pass instance does not use, as it was never set
    B.step = nullptr;
    B.st = stream_tables_dev{};
    B.box_next = nullptr;
    B.slot_boxes = nullptr;
    B.slot_pref = nullptr;
    B.nslots = 0;
    B.gbins = group_bins_dev{};
    B.spec = spectral_tables_dev{}; // the tallies run apart (spectral_launch)
    B.em = energy_media_dev{}; // one medium
    B.reach = 0;
    return launch<false>(B, s);
}

cudaError_t fused_step(const fused_args &A, cudaStream_t s)
{
    const bool media = A.em.medium != nullptr;
    const bool fits = media ? fused_media_step_supported(A.d.nth, A.d.slice, A.d.ne, A.reach,
                                                         A.spec.nplanes, media_stage_bytes(A.em)) &&
                                  A.em.bins.out && A.tiles == 1
                            : fused_step_supported(A.d.nth, A.d.slice, A.d.ne, A.at.max_half_width,
                                                   A.spec.nplanes);
    if (A.st.scheme != 1 || !fits ||
        (A.spec.nplanes > 0 && (!A.spec_dose || (!media && A.spec.n_media != 1))) ||
        (A.nslots > 1 &&
         (!A.slot_boxes || !A.slot_pref || !A.gbins.r || A.gbins.ncg != group_bins_groups(A.d.px) ||
          A.nslots > FUSED_SLOTS || A.nslots != slot_count(A.d))))
        return cudaErrorInvalidValue;
    return launch<true>(A, s);
}
