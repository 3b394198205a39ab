#include "transport/spectral_maps.h"

#include <stdlib.h>

#include "physics/spectral_tally.h"

int spectral_maps_init(spectral_maps *sm, const grid *g, const medium_map *mm,
                       const tables *const *mt, const tables *water, smx_error *err)
{
    *sm = (spectral_maps){ .g = g, .mm = mm };
    if (!g->plane_water)
        return 0;
    const int nm = mm ? mm->n_media : 1;
    if (!(sm->ratio_no_primary = malloc((size_t)nm * sizeof *sm->ratio_no_primary)))
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory (the dose to water's factors)");
    for (int m = 0; m < nm; m++)
        sm->ratio_no_primary[m] = spectral_water_ratio(water, mt[mm ? mm->media[m].material : 0],
                                                       SPECTRAL_HALO_RATIO_MEV);
    return 0;
}

void spectral_maps_free(spectral_maps *sm)
{
    free(sm->ratio_no_primary);
    sm->ratio_no_primary = NULL;
}

void spectral_let(const spectral_maps *sm, const double *planes, double *let_d, double *let_t)
{
    const grid *g = sm->g;
    const double *edep = planes + g->plane_edep * g->slice,
                 *let_edep = planes + g->plane_let_edep * g->slice,
                 *track = planes + g->plane_track * g->slice;
    for (int64_t c = 0; c < g->slice; c++) {
        const int hit = edep[c] > 0.0 && track[c] > 0.0;
        let_d[c] = hit ? let_edep[c] / edep[c] : 0.0;
        if (let_t)
            let_t[c] = hit ? edep[c] / track[c] : 0.0;
    }
}

void spectral_dose_to_water(const spectral_maps *sm, const double *planes, double *dose_w)
{
    const grid *g = sm->g;
    const double *edep = planes + g->plane_edep * g->slice,
                 *w_edep = planes + g->plane_water * g->slice;
    for (int64_t c = 0; c < g->slice; c++) {
        const int m = sm->mm && sm->mm->cell ? sm->mm->cell[c] : 0;
        const double f = edep[c] > 0.0 ? w_edep[c] / edep[c] : sm->ratio_no_primary[m];
        dose_w[c] = planes[c] * f;
    }
}
