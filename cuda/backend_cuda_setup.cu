// The CUDA backend's setup: the device layout of the grid (rows padded to
// whole lines where the fused kernels run), the arena sized from the plan and
// carved once, the tables uploaded, and the kernel path chosen (fused one-pass,
// fused two-pass, or one kernel per operator) from what the grid allows.
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <vector>

#include "backend_cuda_internal.cuh"
#include "cufft_loader.cuh"

static size_t align_up(size_t n)
{
    return (n + 255) & ~(size_t)255;
}

// Blocks of the grid-stride kernels per SM, counted in tiles of the fused
// kernel (its unsplit blocks hold FUSED_SUB tiles each): one wave of the fused
// kernel for up to 32 directions (two resident blocks of two tiles per SM),
// two waves of its one-block-per-SM form above. More blocks per SM gain a
// dense step little and split a pencil's few tiles over more blocks, whose
// partial sums then cost more than they save; the split scratch grows with
// the blocks.
#define BLOCKS_PER_SM 4
static_assert(BLOCKS_PER_SM % (FUSED_SUB * FUSED_CLUSTER) == 0,
              "the fused kernel's unsplit grid (blocks / FUSED_SUB) is whole clusters");

// Most tiles a step may have for the fused kernel to split their energy range
// across blocks (with more, every block already has a tile); 0 where no fused
// kernel can run (more than 64 directions).
static int split_tiles_for(const grid *g, int blocks)
{
    return g->nth <= 64 ? blocks / 2 : 0;
}

// The device layout of the grid. Rows are padded to row_pitch_for where the
// fused kernels run (pad_rows): their tiles of 32 columns then read and store
// whole lines. The kernels of the other paths sweep psi cell by cell and would
// only sweep the padding too (Nx = 200 padded to 224 is 12 % more cells). The test switch cuda_pad_rows (force) pads every path.
static dev_dims dev_dims_for(const grid *g, bool pad_rows, bool force)
{
    const int64_t px = pad_rows || force ? row_pitch_for(g->nx, force) : g->nx, slice = g->nz * px;
    return dev_dims{
        g->ne, g->nth, g->nz, g->nx, px, slice, g->ne * g->nth * slice, grid_slot_nx(g)
    };
}

// The (source, table) candidates of every medium's targets (energy_media.cuh):
// medium 0's plain gather entries, then each other medium's lists.
static size_t media_candidate_count(const sim_tables *s)
{
    size_t n = 0;
    for (int64_t i = 0; i < s->g->ne; i++)
        n += (size_t)s->el.gather[i].count;
    for (int m = 1; m < s->n_media; m++)
        n += (size_t)sim_dither(s, m)->cand_start[s->g->ne];
    return n;
}

// The bins of the media's range tables (energy_dither_lut.n_steps): the
// run's, where a per-spot state of fewer bins shares them.
static size_t media_steps(const sim_tables *s)
{
    return (size_t)sim_dither(s, 1)->n_steps;
}

// Bytes of device memory the plan needs (the arena) with the layout d, before any allocation.
static size_t arena_bytes_for(const grid *g, const sim_tables *s, const dev_dims &d, int blocks,
                              size_t fft_bytes)
{
    size_t ne = (size_t)g->ne, nth = (size_t)g->nth, nk = s ? (size_t)s->ak.n_kernels : ne;
    size_t nw = s ? (size_t)(s->ak.offset[nk - 1] + 2 * s->ak.half_width[nk - 1] + 1) : ne * 64;
    size_t b = 0;
    const size_t ncomp = g->ncomp > 1 ? (size_t)g->ncomp : 1;
    b += 2 * align_up((size_t)d.cells * ncomp * sizeof(float));
    if (ncomp > 1) // the deposit's moment maps, A_theta's discarded tallies, A_E's slopes
        b += 3 * align_up((size_t)d.nth * d.slice * sizeof(float)) +
             align_up((size_t)(MAX_RUNS + 1) * TF_COUNT * blocks * sizeof(double)) +
             align_up((s ? (size_t)s->n_media : 1) * ne * sizeof(double));
    const size_t planes = g->dose_planes > 1 ? (size_t)g->dose_planes : 1;
    b += align_up((size_t)d.slice * planes * sizeof(double)) +
         align_up((size_t)d.nth * d.slice * sizeof(float));
    if (planes > 1) { // the tallies' coefficients per medium (spectral_tally.cuh)
        const size_t nm = s ? (size_t)s->n_media : 1;
        b += align_up((planes - 1) * nm * ne * sizeof(double)) +
             align_up(ne * (size_t)d.slice * sizeof(double));
    }
    b += 2 * align_up((size_t)d.nth * sizeof(smx_path_axis)) +
         align_up((size_t)d.nth * sizeof(path_fast)) + align_up(PATH_REACH * sizeof(int));
    b += align_up((size_t)(MAX_RUNS + 1) * TF_COUNT * blocks * sizeof(double)) +
         align_up(blocks * sizeof(int));
    b += align_up(RING * sizeof(step_rec_dev)) + align_up(sizeof(run_state_dev)) +
         align_up(sizeof(int));
    b += align_up(nw * sizeof(float)) + 2 * align_up(nk * sizeof(int)) + align_up(ne * sizeof(int));
    b += align_up(ne * sizeof(int4)) + align_up(ne * sizeof(fused_bin)) +
         align_up(nk * sizeof(double));
    b += align_up(2 * ne * sizeof(float4));
    b += align_up(nk * 64 * sizeof(float)) +
         align_up(ne * sizeof(int)); // fused boundary rows (at most)
    b += align_up(nk * nth * sizeof(double)) + align_up(ne * sizeof(double)) * 2 +
         align_up(ne * sizeof(int));
    b += align_up(ne * sizeof(float4)) + align_up(ne * sizeof(int2)) +
         2 * align_up(ne * sizeof(double));
    b += align_up(ne * sizeof(energy_gather_dev));
    if (s && s->n_media > 1) { // per-medium tables (energy_media.cuh) and the medium map
        const size_t nm = (size_t)s->n_media;
        b +=
            align_up((size_t)d.slice) + align_up(nm * ne * sizeof(int)); // medium, kernel_of_energy
        b += 2 * align_up(nm * ne * sizeof(double)) +
             align_up(nm * media_steps(s) * sizeof(double)) +
             align_up((nm * ne + 1) * sizeof(int)) +
             align_up(media_candidate_count(s) * sizeof(media_candidate)) + align_up(nm * ne);
        b += align_up(2 * nm * ne * sizeof(int)) + align_up(2 * nm * ne * sizeof(float4)) +
             3 * align_up(2 * nm * ne * sizeof(double));
        b += align_up(ne * sizeof(int2)); // et_media's target ranges
        b += align_up(nm * sizeof(double)); // densities (mass sharing)
        const int planes_max = g->dose_planes > 1 ? g->dose_planes - 1 : 0;
        const int rec = media_rec_bytes(planes_max, s->ak.max_half_width);
        b += align_up(ne * nm * (size_t)rec); // the one pass's records
    }
    b += 2 * align_up(nth * sizeof(int)) + align_up(4 * nth * sizeof(float)) +
         2 * align_up(nth * sizeof(double));
    b += 2 * align_up(ne * sizeof(box4)) + align_up(sizeof(active_regions));
    b += align_up(SB_KINDS * FUSED_SLOTS * sizeof(box4)) +
         align_up((FUSED_SLOTS + 1) * sizeof(int)); // slot_boxes, slot_pref
    b += align_up(3 * d.nz * group_bins_groups(d.px) * sizeof(int2)); // gbins
    const int st = split_tiles_for(g, blocks); // the fused kernel's energy split
    b += align_up(fused_split_ws_floats(g->nth, g->ne, st) * sizeof(float)) +
         align_up(st * sizeof(int));
    if (s && s->ak.per_source) { // the per-source kernels' gather (angle_gather)
        const size_t nkj = (size_t)s->ak.n_kernels * nth, terms = angle_gather_terms(&s->ak);
        b += align_up((nkj + 1) * sizeof(int)) + align_up(terms * sizeof(int)) +
             align_up(terms * sizeof(float)) + align_up(nkj * sizeof(double));
    }
    b += fft_bytes;
    return b;
}

extern "C" double backend_cuda_device_bytes(const grid *g)
{
    // an H100's 132 SMs, rows padded as the default one-pass path pads them
    return (double)arena_bytes_for(g, NULL, dev_dims_for(g, true, false), 132 * BLOCKS_PER_SM, 0);
}

struct arena_cursor {
    char *base;
    size_t used;
    template <class T>
    T *take(size_t n)
    {
        T *p = (T *)(base + used);
        used += align_up(n * sizeof(T));
        return p;
    }
};

template <class T>
static int upload_array(T *dst, const T *src, size_t n, smx_error *err)
{
    CUDA_CHECK_ERR(err, cudaMemcpy(dst, src, n * sizeof(T), cudaMemcpyHostToDevice));
    return 0;
}

template <class T>
static int upload_zeros(T *dst, size_t n, smx_error *err)
{
    CUDA_CHECK_ERR(err, cudaMemset(dst, 0, n * sizeof(T)));
    return 0;
}

int2 target_range(const sim_tables *s, int ie)
{
    int2 r;
    backend_target_range(s, ie, &r.x, &r.y);
    return r;
}

int cuda_medium_upload(cuda_ctx *c, smx_error *err)
{
    if (!c->medium_dev)
        return 0;
    const size_t n = (size_t)c->d.slice;
    if (!c->medium_host) { // its padding columns stay 0
        CUDA_CHECK_ERR(err, cudaMallocHost(&c->medium_host, n));
        memset(c->medium_host, 0, n);
    } else if (c->ev_medium) { // the last copy has left the buffer
        CUDA_CHECK_ERR(err, cudaEventSynchronize(c->ev_medium));
    }
    backend_medium_rows(c->s, c->d.px, c->medium_host);
    CUDA_CHECK_ERR(
        err, cudaMemcpyAsync(c->medium_dev, c->medium_host, n, cudaMemcpyHostToDevice, c->stream));
    if (c->ev_medium)
        CUDA_CHECK_ERR(err, cudaEventRecord(c->ev_medium, c->stream));
    else // at setup, before the streams: on the default stream, waited for
        CUDA_CHECK_ERR(err, cudaStreamSynchronize(c->stream));
    return 0;
}

// The medium map in the device layout and the per-(medium, table) energy
// tables of energy_media.cuh; medium 0 is the plain table in both slots.
static int upload_media(cuda_ctx *c, arena_cursor &a, const double *E, smx_error *err)
{
    const sim_tables *s = c->s;
    const grid *g = c->g;
    const size_t ne = g->ne, nm = (size_t)s->n_media;
    unsigned char *med = a.take<unsigned char>(c->d.slice);
    double *plow = a.take<double>(nm * ne), *dmean = a.take<double>(nm * ne),
           *steps = a.take<double>(nm * media_steps(s));
    unsigned char *lower = a.take<unsigned char>(nm * ne);
    const size_t ncand = media_candidate_count(s);
    int *cstart = a.take<int>(nm * ne + 1);
    media_candidate *cand = a.take<media_candidate>(ncand);
    int *tg = a.take<int>(2 * nm * ne);
    float4 *cf = a.take<float4>(2 * nm * ne);
    double *dep = a.take<double>(2 * nm * ne), *nw = a.take<double>(2 * nm * ne),
           *nen = a.take<double>(2 * nm * ne);
    int2 *trange = a.take<int2>(ne);
    double *density = a.take<double>(nm);

    const size_t ns = media_steps(s);
    std::vector<double> hp(nm * ne), hd(nm * ne), hs(nm * ns), hdep(2 * nm * ne), hnw(2 * nm * ne),
        hne(2 * nm * ne);
    std::vector<int> hcs(nm * ne + 1, 0);
    std::vector<media_candidate> hc;
    hc.reserve(ncand);
    std::vector<int> htg(2 * nm * ne);
    std::vector<float4> hcf(2 * nm * ne);
    std::vector<int2> htr(ne);
    for (size_t i = 0; i < ne; i++)
        htr[i] = target_range(s, (int)i);
    for (size_t m = 0; m < nm; m++) {
        const energy_lut *mean = sim_energy_lut(s, (int)m);
        for (size_t i = 0; i < ne; i++) {
            const size_t mi = m * ne + i;
            hd[mi] = mean->deposit_MeV[i];
            hp[mi] = m ? sim_dither(s, (int)m)->p_low[i] : 1.0;
            hcs[mi] = (int)hc.size();
            if (m) {
                const energy_dither_lut *dl = sim_dither(s, (int)m);
                for (int k = dl->cand_start[i]; k < dl->cand_start[i + 1]; k++)
                    hc.push_back(media_candidate{ dl->cand[k].src * 2 + dl->cand[k].upper,
                                                  dl->cand[k].coeff });
            } else {
                const energy_gather_entry &ge = s->el.gather[i];
                for (int k = 0; k < ge.count; k++)
                    hc.push_back(media_candidate{ ge.src[k] * 2, ge.coeff[k] });
            }
            for (size_t k = (size_t)hcs[mi]; k < hc.size();
                 k++) // fused.cuh (media): the widest target-source distance
                c->media_reach = std::max(c->media_reach, hc[k].src_table / 2 - (int)i);
            for (int u = 0; u < 2; u++) {
                const energy_lut *l = !m  ? &s->el
                                      : u ? &sim_dither(s, (int)m)->upper
                                          : &sim_dither(s, (int)m)->lower;
                const size_t k = (m * 2 + u) * ne + i;
                htg[k] = l->target[i];
                hcf[k] = float4{ l->coeff[i][0], l->coeff[i][1], l->coeff[i][2], 0.0f };
                hdep[k] = l->deposit_MeV[i];
                hnw[k] = l->nuclear_weight[i];
                hne[k] = l->nuclear_energy[i];
            }
        }
    }
    hcs[nm * ne] = (int)hc.size();
    for (size_t m = 0; m < nm; m++) // medium 0: always table 0 (p_low 1)
        for (size_t i = 0; i < ns; i++)
            hs[m * ns + i] = m ? sim_dither(s, (int)m)->steps[i] : (double)i;
    c->medium_dev = med;
    int rc = cuda_medium_upload(c, err) || upload_array(plow, hp.data(), nm * ne, err) ||
             upload_array(steps, hs.data(), nm * ns, err) ||
             upload_array(dmean, hd.data(), nm * ne, err) ||
             upload_array(cstart, hcs.data(), nm * ne + 1, err) ||
             (ncand && upload_array(cand, hc.data(), ncand, err)) ||
             upload_array(tg, htg.data(), 2 * nm * ne, err) ||
             upload_array(cf, hcf.data(), 2 * nm * ne, err) ||
             upload_array(dep, hdep.data(), 2 * nm * ne, err) ||
             upload_array(nw, hnw.data(), 2 * nm * ne, err) ||
             upload_array(nen, hne.data(), 2 * nm * ne, err) ||
             upload_array(trange, htr.data(), ne, err);
    std::vector<double> hrho(nm);
    for (size_t m = 0; m < nm; m++)
        hrho[m] = s->mm->media[m].density_g_cm3;
    rc = rc || upload_array(density, hrho.data(), nm, err);
    if (rc)
        return err->code;
    if (s->st.scheme != STREAM_BILINEAR && c->set.mass_varies)
        c->mass = mass_share_dev{ med, density };
    c->em = energy_media_dev{ med, plow, steps,  lower, dmean, tg,      cf,      dep,
                              nw,  nen,  cstart, cand,  E,     (int)nm, (int)ns, {} };
    // The one pass's records of each (bin, medium) (media_bin), with the
    // coefficients of the tallies the pass takes: the run's part written
    // here, the step's by energy_media_choose. Zeros first: the pass copies
    // a record's padding whole, and never reads it.
    media_bins_dev &mb = c->em.bins;
    mb.rec_bytes = media_rec_bytes(c->tally.nplanes, c->at.max_half_width);
    mb.w_off = media_rec_weights(c->tally.nplanes);
    mb.out = a.take<unsigned char>(ne * nm * (size_t)mb.rec_bytes);
    CUDA_CHECK_ERR(err, cudaMemset(mb.out, 0, ne * nm * (size_t)mb.rec_bytes));
    CUDA_CHECK_ERR(err, energy_media_records(c->em, (int64_t)ne, c->at, c->tally, 0));
    CUDA_CHECK_ERR(err, cudaStreamSynchronize(0)); // before the steps' streams use them
    c->at.medium = med;
    c->et_media.trange = trange; // the rest of et_media is et (cuda_setup)
    return 0;
}

// The moments scheme's A_E tables (moments_energy_dev): the mean tables'
// slopes per medium, the rest the one-medium tables (et) or the media's (em).
static int upload_moments_energy(cuda_ctx *c, arena_cursor &a, smx_error *err)
{
    const sim_tables *s = c->s;
    const grid *g = c->g;
    const size_t ne = g->ne, nm = c->media ? (size_t)s->n_media : 1;
    // The kernel moves the reference medium's weight by the gather form
    // alone (its thread walks a cell's bins, targets ascending).
    if (!s->el.gather_ok)
        return smx_fail(err, SMX_EXIT_INPUT,
                        "transport.streaming_scheme: moments on the GPU needs the energy table's "
                        "gather form, which this grid does not allow (%s); use grid.energy.kind: "
                        "range, or backend.device: cpu",
                        s->el.gather_reason);
    double *slope = a.take<double>(nm * ne);
    std::vector<double> hs(nm * ne);
    for (size_t m = 0; m < nm; m++) {
        const energy_lut *mean = sim_energy_lut(s, (int)m);
        for (size_t i = 0; i < ne; i++)
            hs[m * ne + i] =
                smx_emom_slope(mean->deposit_MeV, mean->target, g->E.centres, (int)ne, (int)i);
    }
    if (upload_array(slope, hs.data(), nm * ne, err))
        return err->code;
    const energy_tables_dev &et = c->et;
    if (c->media) {
        const energy_media_dev &em = c->em;
        c->mt = moments_energy_dev{ em.medium,  em.deposit_mean, slope,    em.target,
                                    em.deposit, em.nuc_w,        em.nuc_e, et.gather,
                                    em.p_low,   em.cand_start,   em.cand,  et.E };
    } else {
        c->mt = moments_energy_dev{ NULL,     et.deposit, slope, et.target, et.deposit, et.nuc_w,
                                    et.nuc_e, et.gather,  NULL,  NULL,      NULL,       et.E };
    }
    return 0;
}

// The device this process uses (gpu_selected: 0, or an MPI rank's own) and
// the blocks of the grid-stride kernels on it.
static int open_device(cuda_ctx *c, cudaDeviceProp *prop, smx_error *err)
{
    gpu_query(&c->info);
    if (c->info.count == 0)
        return smx_fail(err, SMX_EXIT_RUNTIME, "no usable CUDA device: %s", c->info.why_none);
    const int dev = gpu_selected();
    CUDA_CHECK_ERR(err, cudaSetDevice(dev));
    CUDA_CHECK_ERR(err, cudaGetDeviceProperties(prop, dev));
    c->blocks = prop->multiProcessorCount * BLOCKS_PER_SM;
    c->cluster_launch = prop->clusterLaunch != 0; // sm_90 on (fused.cuh, FUSED_CLUSTER)
    return 0;
}

// The kernel variants of the energy, streaming and angular operators, as the
// plan and the device allow them.
static void choose_variants(cuda_ctx *c, const cudaDeviceProp &prop)
{
    const sim_tables *s = c->s;
    c->energy_gather = s->energy_gather;
    switch (c->set.variant_stream) {
    case VAR_S_ATOMIC:
        c->stream_variant = SV_ATOMIC;
        break;
    case VAR_S_WARP:
        c->stream_variant = prop.major >= 7 ? SV_WARP : SV_FALLBACK;
        break;
    case VAR_S_FALLBACK:
        c->stream_variant = SV_FALLBACK;
        break;
    default:
        c->stream_variant = SV_GATHER;
        break; // deterministic and atomic-free
    }
    // Above 48 KB the direct kernel raises its own dynamic shared-memory limit
    // (angular_direct.cu); the device's opt-in maximum is the bound.
    size_t smem = angular_direct_smem_bytes(c->g->nth, s->ak.max_half_width);
    int smem_ok = smem <= (size_t)prop.sharedMemPerBlockOptin;
    c->angular = smem_ok ? 0 : 1;
    snprintf(c->angular_why, sizeof c->angular_why, "%s",
             smem_ok ? "direct" : "direct-global (shared memory limit)");
    c->media = s->n_media > 1;
}

// Whether the FFT may serve A_theta (decided before the arena is sized: it
// needs memory): *want_fft. Fails only where the plan asks for the FFT and
// cuFFT cannot be loaded.
static int choose_fft(cuda_ctx *c, int *want_fft, smx_error *err)
{
    const backend_settings &b = c->set;
    const grid *g = c->g;
    *want_fft = b.variant_angular == VAR_A_FFT ||
                (b.variant_angular == VAR_A_AUTO && g->angle_mode == ANGLE_FULL);
    // A cell's kernel depends on its medium: the FFT convolves a whole bin with one.
    if (*want_fft && c->media) {
        if (b.variant_angular == VAR_A_FFT)
            smx_warn("backend.angular: fft convolves every cell of a bin with one kernel; with "
                     "several media the direct kernel runs\n");
        *want_fft = 0;
    }
    // cuFFT cannot read the device stop flag: after an auto run ends on the
    // device, steps still enqueued would run the FFT. Its output is the scratch
    // buffer only when theta comes first, so that is required for auto runs.
    if (*want_fft && b.steps == 0 && b.operator_order[0] != OP_THETA) {
        if (b.variant_angular == VAR_A_FFT)
            smx_warn("backend.angular: fft with steps: auto needs theta first in "
                     "transport.operator_order; using direct\n");
        *want_fft = 0;
    }
    if (*want_fft && g->angle_mode != ANGLE_FULL) {
        smx_warn("backend.angular: fft needs the full-circle angular grid; using direct\n");
        *want_fft = 0;
    }
    // cuFFT is loaded here, where the FFT may first serve (cufft_loader.cuh).
    const char *no_cufft = nullptr;
    if (*want_fft && !cufft_load(&no_cufft)) {
        if (b.variant_angular == VAR_A_FFT)
            return smx_fail_key(err, SMX_EXIT_INPUT, "backend.angular",
                                "fft needs cuFFT, which cannot be loaded: %s; expected "
                                "libcufft.so.%d where the loader finds it (LD_LIBRARY_PATH, or "
                                "the dist tree's lib/: DIST_BUNDLE_CUDA=1 make dist), or "
                                "backend.angular: auto or direct",
                                no_cufft, CUFFT_VER_MAJOR);
        cufft_warn_unavailable(no_cufft);
        *want_fft = 0;
        snprintf(c->angular_why, sizeof c->angular_why, "%s (cuFFT unavailable)",
                 c->angular == 0 ? "direct" : "direct-global");
    }
    return 0;
}

// The operators in the fused kernels' order: theta, energy, stream.
static bool order_theta_energy_stream(const backend_settings &b)
{
    return b.operator_order[0] == OP_THETA && b.operator_order[1] == OP_ENERGY &&
           b.operator_order[2] == OP_STREAM;
}

// The kernel path (fused one-pass, fused two-pass, media over the active
// region, or one kernel per operator) and the device layout it steps on.
static void choose_path(cuda_ctx *c, int want_fft)
{
    const sim_tables *s = c->s;
    const grid *g = c->g;
    const backend_settings &b = c->set;
    const cuda_test_options *t = &c->opt.cuda;
    const int mhw = s->ak.max_half_width;
    // Fusion keeps the exact operations of the unfused kernels, so it is taken
    // whenever its preconditions hold (not where the plan puts every bin on
    // the FFT: cuda_upload turns fusion off when the FFT serves any bin).
    // Kernels per source bin (grid.angle.spacing: beam) only in the direct
    // kernels: the moments scheme's two passes take them (their A_theta is
    // the direct kernel), the fused shift and bilinear kernels do not, and
    // those schemes then step with one kernel per operator.
    const bool per_source_ok = !s->ak.per_source || s->st.scheme == STREAM_MOMENTS;
    c->fused = per_source_ok && b.fused && !c->media && c->opt.only_op < 0 && c->angular == 0 &&
               c->energy_gather &&
               !(want_fft && b.variant_angular == VAR_A_FFT && t->force_fft_from == 0) &&
               c->stream_variant == SV_GATHER &&
               fused_theta_energy_supported(g->nth, c->d.slice, g->ne, mhw) &&
               order_theta_energy_stream(b);
    // A run with media steps over the active region where the same
    // preconditions hold (the direct kernel, gather everywhere): in the one
    // pass under the shift scheme (media_single_ok), in the moments scheme's
    // two passes under that scheme.
    c->media_regions = per_source_ok && b.fused && c->media && c->opt.only_op < 0 &&
                       c->angular == 0 && c->energy_gather && c->stream_variant == SV_GATHER &&
                       order_theta_energy_stream(b);
    // The moments scheme (moments.cuh) steps in two passes over the active
    // region where these hold (backend.fused: false, the whole-grid kernels).
    c->ncomp = g->ncomp > 1 ? g->ncomp : 1;
    // The single pass: the shift scheme on a grid the one-pass kernel serves
    // (where the spectral tallies go is decided with the boundary rows, in
    // decide_fused_extras).
    const bool shift_fused = c->fused && s->st.scheme == STREAM_SHIFT;
    c->single_pass = shift_fused && fused_step_supported(g->nth, c->d.slice, g->ne, mhw, 0);
    c->fused_tallies = 0;
    c->split_sums = 0;
    // FUSED_SUB tiles per block, or one on grids too large for that many stage rings.
    const fused_sizes z = { g->nth, g->ne, mhw, c->single_pass, t->fused_kp_cap, 0, 0 };
    c->tiles = c->fused ? fused_tiles_per_block(z, t->fused_one_tile) : 0;
    if (!c->fused)
        c->d = dev_dims_for(g, false, t->cuda_pad_rows);
}

void choose_pipeline(cuda_ctx *c)
{
    pipeline_choice &q = c->pipe;
    // (The moments scheme's two passes take media as one medium.)
    q.regions = c->fused || c->media_single || (c->media_regions && c->ncomp > 1);
    q.alternates = c->single_pass || c->media_single;
    if (c->single_pass || c->media_single)
        q.kind = PIPE_FUSED_ONE_PASS;
    else if (q.regions && c->ncomp > 1)
        q.kind = PIPE_MOMENTS_REGIONS;
    else if (c->fused)
        q.kind = PIPE_FUSED_TWO_PASS;
    else
        q.kind = PIPE_PER_OPERATOR;
}

// The arena: sized from the plan and the layout, within the plan's cap of the
// device's memory, allocated once (or the last state's, kept: arena_keep.cuh).
static int allocate_arena(cuda_ctx *c, const cudaDeviceProp &prop, size_t fft_bytes, smx_error *err)
{
    const backend_settings &b = c->set;
    size_t need = arena_bytes_for(c->g, c->s, c->d, c->blocks, fft_bytes);
    double cap = b.gpu_memory_fraction * (double)prop.totalGlobalMem;
    if (b.gpu_memory_bytes > 0 && b.gpu_memory_bytes < cap)
        cap = b.gpu_memory_bytes;
    if ((double)need > cap) {
        if (err)
            err->no_room = 1;
        return smx_fail_key(err, SMX_EXIT_INPUT, "backend.gpu_memory_fraction",
                            "the grid needs %.3f GB of device memory, the cap is %.3f GB (%s, "
                            "%.3f GB total); expected a smaller grid or a larger cap",
                            need / 1e9, cap / 1e9, prop.name, prop.totalGlobalMem / 1e9);
    }
    // The room for a larger next state (arena_keep.cuh): an eighth more,
    // within the cap.
    const size_t room = (size_t)std::min(cap, (double)need + (double)need / 8);
    arena_block a;
    const cudaError_t e = arena_take(need, room, &a); // clears an allocation error
    if (e != cudaSuccess) {
        if (err && e == cudaErrorMemoryAllocation)
            err->no_room = 1; // a smaller state may follow
        return smx_fail(err, SMX_EXIT_RUNTIME, "cudaMalloc of the %.3f GB arena failed: %s",
                        need / 1e9, cudaGetErrorString(e));
    }
    c->arena = a.p;
    c->arena_have = a.bytes;
    c->arena_bytes = need;
    return 0;
}

// Spots side by side step on each slot's own box (common.cuh, slot_boxes)
// where a one-pass kernel serves the run (one_pass) and the slots are few
// enough; 0 where the union serves.
static int slots_for(const cuda_ctx *c, int one_pass)
{
    const int n = slot_count(c->d);
    return one_pass && !c->opt.cuda.slot_boxes_off && n > 1 && n <= FUSED_SLOTS ? n : 0;
}

// The state's buffers, the dose and its tallies' coefficients, the deposit's
// scratch, the step's partials, records and boxes, carved from the arena.
static int carve_state(cuda_ctx *c, arena_cursor &a, smx_error *err)
{
    const sim_tables *s = c->s;
    const grid *g = c->g;
    const size_t ne = g->ne;
    c->psi_a = a.take<float>(c->d.cells * c->ncomp);
    c->psi_b = a.take<float>(c->d.cells * c->ncomp);
    if (c->ncomp > 1) {
        c->mmaps.mz = a.take<float>(c->d.nth * c->d.slice);
        c->mmaps.mx = a.take<float>(c->d.nth * c->d.slice);
        c->mmaps.qx = a.take<float>(c->d.nth * c->d.slice);
        c->partials_discard = a.take<double>((size_t)(MAX_RUNS + 1) * TF_COUNT * c->blocks);
    }
    c->planes = g->dose_planes > 1 ? g->dose_planes : 1;
    c->dose = a.take<double>(c->d.slice * c->planes);
    if (c->planes - 1 > SPECTRAL_PLANES_MAX || !s->tally_ready ||
        s->tally.n_planes != c->planes - 1)
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "internal: %d spectral tally planes (built: %d), the CUDA backend keeps "
                        "at most %d",
                        c->planes - 1, s->tally.n_planes, SPECTRAL_PLANES_MAX);
    if (c->planes > 1) { // the tallies' coefficients, as cpu_spectral_tallies reads them
        const spectral_tallies *st = &s->tally;
        const size_t n = (size_t)st->n_planes * st->n_media * ne;
        double *coef = a.take<double>(n);
        c->tally_wsum = a.take<double>(ne * (size_t)c->d.slice);
        if (upload_array(coef, st->coef, n, err))
            return SMX_EXIT_RUNTIME;
        c->tally = spectral_tables_dev{ coef, st->n_planes, st->n_media, {} };
        for (int q = 0; q < st->n_planes; q++)
            c->tally.bins[q] = int2{ st->first[q], st->last[q] };
    }
    c->dmap = a.take<float>(c->d.nth * c->d.slice);
    c->paths.pz = a.take<smx_path_axis>(c->d.nth);
    c->paths.px = a.take<smx_path_axis>(c->d.nth);
    c->paths.pf = a.take<path_fast>(c->d.nth);
    c->paths.reach = a.take<int>(PATH_REACH);
    c->partials = a.take<double>((size_t)(MAX_RUNS + 1) * TF_COUNT * c->blocks);
    c->slots = 1;
    c->front_part = a.take<int>(c->blocks);
    c->ring = a.take<step_rec_dev>(RING);
    c->state = a.take<run_state_dev>(1);
    c->stop = a.take<int>(1);
    c->box_a = a.take<box4>(ne);
    c->box_next = a.take<box4>(ne);
    c->reg = a.take<active_regions>(1);
    c->slot_boxes = a.take<box4>(SB_KINDS * FUSED_SLOTS);
    c->slot_pref = a.take<int>(FUSED_SLOTS + 1);
    c->gbins.ncg = (int)group_bins_groups(c->d.px);
    c->gbins.r = a.take<int2>(3 * c->d.nz * c->gbins.ncg);
    c->nslots = slots_for(c, c->single_pass);
    // The host reads the whole record ring at every collect, records not yet
    // written included (it uses only the written ones): zeroed, so that no
    // uninitialised device memory is ever copied (compute-sanitizer initcheck).
    CUDA_CHECK_ERR(err, cudaMemset(c->ring, 0, RING * sizeof(step_rec_dev)));
    // The one-pass step writes the partials of every field it tallies and
    // clears none (a launch saved per step); the medium-rounding fields, which
    // only the media kernels tally, are then summed from these zeros
    // (compute-sanitizer's initcheck found them read uninitialized; a state
    // allocated where an earlier one lay could have summed its leftovers).
    CUDA_CHECK_ERR(err, cudaMemset(c->partials, 0,
                                   (size_t)(MAX_RUNS + 1) * TF_COUNT * c->blocks * sizeof(double)));
    if (const int st = split_tiles_for(g, c->blocks)) {
        c->split = fused_split_dev{ a.take<float>(fused_split_ws_floats(g->nth, g->ne, st)),
                                    a.take<int>(st), c->opt.cuda.fused_split_off ? 0 : st };
        CUDA_CHECK_ERR(err, cudaMemset(c->split.count, 0, st * sizeof(int)));
    }
    return 0;
}

// The device arrays of the one-medium tables (angular kernels, energy LUT,
// fused bins, streaming), in their order in the arena.
struct table_arrays {
    float *w;
    int *off, *hw, *koe;
    int4 *bk;
    fused_bin *fb;
    float4 *edge;
    float *bfw;
    int *bfrow;
    double *wsum, *bfrac, *E, *dep;
    int *tg;
    float4 *coef;
    int2 *trange;
    double *nucw, *nuce;
    energy_gather_dev *gat;
    int *ox, *oz;
    float *sw;
    double *sx, *sz;
    int *gat_off, *gat_src; // per-source kernels only (else NULL)
    float *gat_w;
    double *gat_cut;
};

static table_arrays take_tables(const cuda_ctx *c, arena_cursor &a)
{
    const sim_tables *s = c->s;
    const size_t ne = c->g->ne, nth = c->g->nth, nk = s->ak.n_kernels, nm = (size_t)s->n_media;
    const size_t nw = s->ak.offset[nk - 1] + 2 * s->ak.half_width[nk - 1] + 1;
    table_arrays t;
    t.w = a.take<float>(nw);
    t.off = a.take<int>(nk), t.hw = a.take<int>(nk), t.koe = a.take<int>(nm * ne);
    t.bk = a.take<int4>(ne);
    t.fb = a.take<fused_bin>(ne);
    t.edge = a.take<float4>(2 * ne);
    t.bfw = a.take<float>(nk * 64);
    t.bfrow = a.take<int>(ne);
    t.wsum = a.take<double>(nk), t.bfrac = a.take<double>(nk * nth);
    t.E = a.take<double>(ne), t.dep = a.take<double>(ne);
    t.tg = a.take<int>(ne);
    t.coef = a.take<float4>(ne);
    t.trange = a.take<int2>(ne);
    t.nucw = a.take<double>(ne), t.nuce = a.take<double>(ne);
    t.gat = a.take<energy_gather_dev>(ne);
    t.ox = a.take<int>(nth), t.oz = a.take<int>(nth);
    t.sw = a.take<float>(4 * nth);
    t.sx = a.take<double>(nth), t.sz = a.take<double>(nth);
    t.gat_off = t.gat_src = nullptr;
    t.gat_w = nullptr;
    t.gat_cut = nullptr;
    if (s->ak.per_source) {
        const size_t nkj = nk * nth, terms = angle_gather_terms(&s->ak);
        t.gat_off = a.take<int>(nkj + 1), t.gat_src = a.take<int>(terms);
        t.gat_w = a.take<float>(terms);
        t.gat_cut = a.take<double>(nkj);
    }
    return t;
}

// Kernels per source bin (grid.angle.spacing: beam) as the direct kernels'
// gather (physics/lut_angle.h), into the arrays take_tables carved.
static int upload_gather(const sim_tables *s, const table_arrays &t, smx_error *err)
{
    if (!s->ak.per_source)
        return 0;
    angle_gather ag;
    if (int rc = angle_gather_build(&s->ak, &ag, err))
        return rc;
    const size_t nkj = (size_t)s->ak.n_kernels * s->ak.n_theta;
    int rc = upload_array(t.gat_off, ag.off, nkj + 1, err) ||
             upload_array(t.gat_src, ag.src, (size_t)ag.n_terms, err) ||
             upload_array(t.gat_w, ag.w, (size_t)ag.n_terms, err) ||
             upload_array(t.gat_cut, ag.cut, nkj, err);
    angle_gather_free(&ag);
    return rc ? err->code : 0;
}

// The energy LUT's per-bin rows in the device's form: gather entries,
// coefficients, target ranges.
static void energy_rows_host(const sim_tables *s, std::vector<energy_gather_dev> &hg,
                             std::vector<float4> &hcoef, std::vector<int2> &htr)
{
    static_assert(ENERGY_SOURCES == ENERGY_TARGETS, "the gather entries' layout");
    const size_t ne = s->g->ne;
    for (size_t i = 0; i < ne; i++) {
        const energy_gather_entry &ge = s->el.gather[i];
        energy_gather_dev e{};
        for (int k = 0; k < ENERGY_SOURCES; k++)
            e.src[k] = ge.src[k], e.coeff[k] = ge.coeff[k];
        e.count = ge.count;
        hg[i] = e;
        const float *cf = s->el.coeff[i];
        hcoef[i] = float4{ cf[0], cf[1], cf[2], 0.0f };
        int lo, hi;
        backend_target_range0(s, (int)i, &lo, &hi);
        htr[i] = int2{ lo, hi };
    }
}

// The fused kernels' per-bin records: kernel and target, the bin's
// constants, the window's edge fractions.
static void fused_bins_host(const sim_tables *s, std::vector<int4> &hbk,
                            std::vector<fused_bin> &hfb, std::vector<float4> &hedge)
{
    const grid *g = s->g;
    const size_t ne = g->ne, nth = g->nth;
    for (size_t i = 0; i < ne; i++) {
        const int k = s->ak.kernel_of_energy[i];
        hbk[i] = int4{ k, s->ak.half_width[k], s->ak.offset[k], s->el.target[i] };
    }
    for (size_t i = 0; i < ne; i++) {
        const int k = s->ak.kernel_of_energy[i];
        const float *cf = s->el.coeff[i];
        hfb[i] = fused_bin{ g->E.centres[i],
                            s->el.deposit_MeV[i],
                            (float)(1.0 - s->ak.weight_sum[k]),
                            (float)g->E.centres[i],
                            { cf[0], cf[1], cf[2] },
                            (float)s->el.nuclear_weight[i],
                            (float)s->el.nuclear_energy[i],
                            0.0f };
    }
    static_assert(FUSED_EDGE == 4, "one float4 per window edge");
    if (g->angle_mode == ANGLE_WINDOW && nth >= 2 * FUSED_EDGE)
        for (size_t i = 0; i < ne; i++) {
            const double *bf = s->boundary_frac + (size_t)s->ak.kernel_of_energy[i] * nth;
            const double *hi = bf + nth - FUSED_EDGE;
            hedge[2 * i] = float4{ (float)bf[0], (float)bf[1], (float)bf[2], (float)bf[3] };
            hedge[2 * i + 1] = float4{ (float)hi[0], (float)hi[1], (float)hi[2], (float)hi[3] };
        }
}

// The kernels edge_loss does not serve, as float rows of the fused kernel's
// direction count, for its shared memory (fused_tables_dev): hbfw the rows,
// hrow each bin's row (-1: none). Returns the rows' count.
static int boundary_rows_host(const cuda_ctx *c, std::vector<float> &hbfw, std::vector<int> &hrow)
{
    const sim_tables *s = c->s;
    const size_t ne = c->g->ne, nth = c->g->nth, nk = s->ak.n_kernels;
    const int row_floats = fused_boundary_row_floats((int64_t)nth);
    std::vector<int> row_of_kernel(nk, -1);
    if (c->fused && c->g->angle_mode == ANGLE_WINDOW && !c->opt.cuda.fused_boundary_global)
        for (size_t i = 0; i < ne; i++) {
            const int k = s->ak.kernel_of_energy[i];
            if (s->ak.half_width[k] <= FUSED_EDGE && nth >= 2 * FUSED_EDGE)
                continue; // edge_loss
            if (row_of_kernel[k] < 0) {
                row_of_kernel[k] = (int)(hbfw.size() / row_floats);
                hbfw.resize(hbfw.size() + row_floats, 0.0f);
                for (size_t j = 0; j < nth; j++)
                    hbfw[row_of_kernel[k] * row_floats + j] =
                        (float)s->boundary_frac[(size_t)k * nth + j];
            }
            hrow[i] = row_of_kernel[k];
        }
    return (int)(hbfw.size() / row_floats);
}

// What the fused blocks keep beside their stage rings, decided here and
// nowhere else (c->fused_tallies, and the boundary rows returned):
// - the boundary fractions of kernels wider than FUSED_EDGE (n_wide rows)
//   serve every bin of every step: they stay in shared memory where they fit
//   beside the rings without costing a resident block, else the kernel reads
//   them from global memory (0 rows);
// - the single pass takes the spectral tallies (one medium, at least one
//   plane) where their sums, beside those rows, cost the step neither tiles
//   per block nor resident blocks: the pass is memory bound, and fewer
//   blocks in flight cost more than the tallies' own kernels. Where both do
//   not fit, the rows win;
// - where the pass takes them, its split instance also writes its steps'
//   direction sums (c->split_sums) up to 32 directions, if that costs it no
//   resident block.
// The step reads fused_takes_tallies (c->fused_tallies > 0) to know whether
// the pass takes a step's tallies.
static int decide_fused_extras(cuda_ctx *c, int n_wide)
{
    const grid *g = c->g;
    const cuda_test_options &t = c->opt.cuda;
    const int mhw = c->s->ak.max_half_width;
    const int spec = c->planes > 1 && c->tally.n_media == 1 ? c->planes - 1 : 0;
    fused_sizes z = { g->nth, g->ne, mhw, c->single_pass, t.fused_kp_cap, 0, 0 };
    const int rows = n_wide > 0 && fused_boundary_rows_fit(z, c->tiles, n_wide) ? n_wide : 0;
    z.spec_planes = spec;
    const bool tallies = c->single_pass && spec > 0 &&
                         fused_step_supported(g->nth, c->d.slice, g->ne, mhw, spec) &&
                         fused_tiles_per_block(z, t.fused_one_tile) == c->tiles &&
                         fused_boundary_rows_fit(z, c->tiles, rows);
    c->fused_tallies = tallies ? spec : 0;
    // The split instance's direction sums (its steps' planes then need one
    // kernel after the pass, not two before it), where its chunk sums cost
    // it no resident block; not with slots (split_sums).
    z.split_sums = 1;
    c->split_sums = tallies && c->nslots <= 1 && g->nth <= FUSED_SPLIT_SUMS_MAX_NTH &&
                    fused_boundary_rows_fit(z, c->tiles, rows);
    return rows;
}

// The one-medium tables to the device (c->at, c->ft, c->et, c->stt), then
// the media's (upload_media) where the cells hold several.
static int upload_tables(cuda_ctx *c, arena_cursor &a, size_t fft_bytes, smx_error *err)
{
    const sim_tables *s = c->s;
    const grid *g = c->g;
    const size_t ne = g->ne, nth = g->nth, nk = s->ak.n_kernels, nm = (size_t)s->n_media;
    const size_t nw = s->ak.offset[nk - 1] + 2 * s->ak.half_width[nk - 1] + 1;
    const int mhw = s->ak.max_half_width;
    const table_arrays t = take_tables(c, a);
    if (fft_bytes)
        c->fft_mem = a.take<char>(fft_bytes);
    std::vector<energy_gather_dev> hg(ne);
    std::vector<float4> hcoef(ne);
    std::vector<int2> htr(ne);
    energy_rows_host(s, hg, hcoef, htr);
    std::vector<int4> hbk(ne);
    std::vector<fused_bin> hfb(ne);
    std::vector<float4> hedge(2 * ne, float4{ 0.0f, 0.0f, 0.0f, 0.0f });
    fused_bins_host(s, hbk, hfb, hedge);
    std::vector<int> hrow(ne, -1);
    std::vector<float> hbfw;
    int n_wide = boundary_rows_host(c, hbfw, hrow);
    n_wide = decide_fused_extras(c, n_wide);
    c->ft = fused_tables_dev{ t.bk, t.fb, t.edge, t.bfw, t.bfrow, n_wide };
    // Kernels per source bin have no per-bin weights: their gather serves.
    int rc =
        (s->ak.weights ? upload_array(t.w, s->ak.weights, nw, err) : upload_zeros(t.w, nw, err)) ||
        upload_gather(s, t, err) || upload_array(t.off, s->ak.offset, nk, err) ||
        upload_array(t.bk, hbk.data(), ne, err) || upload_array(t.fb, hfb.data(), ne, err) ||
        upload_array(t.edge, hedge.data(), 2 * ne, err) ||
        (n_wide > 0 && (upload_array(t.bfw, hbfw.data(), hbfw.size(), err) ||
                        upload_array(t.bfrow, hrow.data(), ne, err))) ||
        upload_array(t.hw, s->ak.half_width, nk, err) ||
        upload_array(t.koe, s->ak.kernel_of_energy, nm * ne, err) ||
        upload_array(t.wsum, s->ak.weight_sum, nk, err) ||
        upload_array(t.bfrac, s->boundary_frac, nk * nth, err) ||
        upload_array(t.E, g->E.centres, ne, err) ||
        upload_array(t.dep, s->el.deposit_MeV, ne, err) ||
        upload_array(t.tg, (const int *)s->el.target, ne, err) ||
        upload_array(t.coef, hcoef.data(), ne, err) ||
        upload_array(t.trange, htr.data(), ne, err) ||
        upload_array(t.nucw, s->el.nuclear_weight, ne, err) ||
        upload_array(t.nuce, s->el.nuclear_energy, ne, err) ||
        upload_array(t.gat, hg.data(), ne, err) ||
        upload_array(t.ox, (const int *)s->st.ox, nth, err) ||
        upload_array(t.oz, (const int *)s->st.oz, nth, err) ||
        upload_array(t.sw, s->st.w, 4 * nth, err) || upload_array(t.sx, s->st.sx, nth, err) ||
        upload_array(t.sz, s->st.sz, nth, err);
    if (rc)
        return err->code;
    c->at = angular_tables_dev{ t.w,       t.off,       t.hw,    t.koe,
                                NULL,      (int64_t)ne, t.wsum,  t.bfrac,
                                t.E,       (int)nk,     mhw,     g->angle_mode == ANGLE_FULL,
                                t.gat_off, t.gat_src,   t.gat_w, t.gat_cut };
    if (c->media && (rc = upload_media(c, a, t.E, err)))
        return rc;
    c->et = energy_tables_dev{ t.tg, t.coef, t.trange, t.dep, t.nucw, t.nuce, t.gat, t.E };
    if (c->media) {
        const int2 *mtr = c->et_media.trange;
        c->et_media = c->et;
        c->et_media.trange = mtr;
    }
    c->stt = stream_tables_dev{ t.ox, t.oz, t.sw, t.sx, t.sz, t.E, s->st.scheme };
    return 0;
}

// How far one step can move weight, over all directions (bounds the active region).
static int4 step_reach(const sim_tables *s)
{
    int zl = 1 << 30, zh = -(1 << 30), xl = 1 << 30, xh = -(1 << 30);
    for (size_t j = 0; j < (size_t)s->g->nth; j++) {
        int z0, z1, x0, x1;
        if (s->st.scheme == STREAM_MOMENTS) { // moments.h: rows k0 .. k1, a strip's columns
            smx_mom_rows(s->st.sz[j], &z0, &z1);
            x0 = (int)floor(s->st.sx[j]) - 1, x1 = (int)floor(s->st.sx[j]) + 2;
        } else if (s->st.scheme == STREAM_SHIFT) {
            z0 = (int)floor(s->st.sz[j]), z1 = (int)ceil(s->st.sz[j]);
            x0 = (int)floor(s->st.sx[j]), x1 = (int)ceil(s->st.sx[j]);
        } else {
            z0 = s->st.oz[j], z1 = s->st.oz[j] + 1, x0 = s->st.ox[j], x1 = s->st.ox[j] + 1;
        }
        zl = std::min(zl, z0), zh = std::max(zh, z1), xl = std::min(xl, x0), xh = std::max(xh, x1);
    }
    return make_int4(zl, zh, xl, xh);
}

// The streams and events the steps and copies run on, the FFT's plans, the
// snapshots' pinned buffer, the early exit's threshold and the graph switch.
static int open_streams(cuda_ctx *c, size_t fft_bytes, smx_error *err)
{
    const sim_tables *s = c->s;
    const backend_settings &b = c->set;
    CUDA_CHECK_ERR(err, cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    CUDA_CHECK_ERR(err, cudaStreamCreateWithFlags(&c->copy, cudaStreamNonBlocking));
    CUDA_CHECK_ERR(err, cudaEventCreateWithFlags(&c->ev_step, cudaEventDisableTiming));
    CUDA_CHECK_ERR(err, cudaEventCreateWithFlags(&c->ev_copy, cudaEventDisableTiming));
    CUDA_CHECK_ERR(err, cudaEventCreateWithFlags(&c->ev_medium, cudaEventDisableTiming));
    if (fft_bytes) {
        const angular_fft_setup u = {
            c->d, c->at, s->ak.weights, s->ak.offset, s->ak.half_width, c->fft_mem
        };
        int rc = angular_fft_create(&c->fft, u, c->stream, err);
        if (rc)
            return rc;
    }
    if (b.snapshots)
        CUDA_CHECK_ERR(err, cudaMallocHost(&c->pinned, (size_t)c->g->cells * sizeof(float)));
    c->threshold = backend_early_exit_threshold(&b, 1.0); // adaptive: scaled at upload
    c->use_graph = b.cuda_graph;
    return 0;
}

// The context for the tables s with the switches o (NULL: a run's): the
// device, the kernel path and its layout, the arena, the tables on the device.
static int cuda_setup_with(void **out, const sim_tables *s, const backend_test_options *o,
                           smx_error *err)
{
    const grid *g = s->g;
    *out = NULL;
    cuda_ctx *c = (cuda_ctx *)calloc(1, sizeof *c);
    if (!c)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory");
    c->s = s;
    c->g = g;
    c->opt = o ? *o : backend_test_options_default();
    c->set = backend_settings_of(s);
    // the fused kernels' layout, for their preconditions
    c->d = dev_dims_for(g, true, c->opt.cuda.cuda_pad_rows);
    cudaDeviceProp prop;
    int want_fft = 0, rc = open_device(c, &prop, err);
    if (!rc) {
        choose_variants(c, prop);
        rc = choose_fft(c, &want_fft, err);
    }
    size_t fft_bytes = 0;
    if (!rc) {
        choose_path(c, want_fft);
        fft_bytes = want_fft ? angular_fft_bytes(c->d, s->ak.n_kernels) : 0;
        rc = allocate_arena(c, prop, fft_bytes, err);
    }
    if (rc) {
        free(c);
        return rc;
    }
    *out = c; // from here on cuda_release cleans up
    arena_cursor a{ c->arena, 0 };
    if ((rc = carve_state(c, a, err)) || (rc = upload_tables(c, a, fft_bytes, err)))
        return rc;
    if (c->ncomp > 1 && (rc = upload_moments_energy(c, a, err)))
        return rc;
    // The one-pass media step where the shift scheme moves whole cells and its
    // ring and stage fit in shared memory, unless a test asks for the
    // whole-grid kernels; elsewhere one kernel per operator.
    c->media_single_ok = c->media_regions && s->st.scheme == STREAM_SHIFT &&
                         fused_media_step_supported(g->nth, c->d.slice, g->ne, c->media_reach,
                                                    c->planes - 1, media_stage_bytes(c->em));
    if (c->media_single_ok) { // one tile a block; it visits each slot's box too
        c->tiles = 1;
        c->nslots = slots_for(c, 1);
    }
    // Decided here, not at the first upload: a window asks cuda_can_shift
    // before it, and the one pass's regions can move it. Its split steps'
    // direction sums as one medium's (decide_fused_extras); the first
    // upload's angular choice may still turn both off.
    c->media_single = c->media_single_ok && !c->opt.cuda.media_whole_grid;
    if (c->media_single)
        c->split_sums =
            c->nslots <= 1 && fused_media_split_sums_fit(g->nth, g->ne, c->media_reach,
                                                         c->planes - 1, media_stage_bytes(c->em));
    c->reach = step_reach(s);
    choose_pipeline(c);
    if (s->ak.per_source && s->st.scheme != STREAM_MOMENTS)
        smx_warn("grid.angle.spacing: beam under a streaming scheme other than moments steps "
                 "with one kernel per operator on the GPU (the fused kernels take one angular "
                 "kernel per energy bin): about 140 times the step time of uniform bins "
                 "(150 MeV pencil); the spacing is meant for transport.streaming_scheme: "
                 "moments (docs/model.md)\n");
    return open_streams(c, fft_bytes, err);
}

int cuda_setup(void **out, const sim_tables *s, smx_error *err)
{
    return cuda_setup_with(out, s, nullptr, err);
}

extern "C" int backend_cuda_setup_test(void **out, const sim_tables *s,
                                       const backend_test_options *o, smx_error *err)
{
    return cuda_setup_with(out, s, o, err);
}
