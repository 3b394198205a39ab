/* Escape channels and the conservation identities (docs/physics.md).
 * Weight:  sum psi_in = sum psi_out + sum_c weight[c]
 * Energy:  sum psi_in E = sum psi_out E + deposited + sum_{c != ENERGY_STOPPED} energy[c]
 * ENERGY_STOPPED's energy is the residual energy of stopped particles; it is
 * deposited locally and therefore already part of `deposited`. NUCLEAR's
 * weight is the primaries removed by non-elastic interactions; its energy is
 * only the share that leaves the problem (neutrons, gammas): the local share is
 * part of `deposited`. MEDIUM_ROUNDING has no weight: in a medium other than
 * the energy grid's reference, psi moves by whole bins while the dose takes
 * the mean energy loss (lut_energy.h, energy_dither_lut); its energy is the
 * difference, of either sign, and sums to within about a bin's energy per
 * particle over a crossing of the medium. */
#ifndef SMX_TALLY_H
#define SMX_TALLY_H

enum tally_channel {
    CH_THETA_BOUNDARY = 0, /* scattered out of an angular window */
    CH_THETA_CUTOFF = 1, /* dropped by thresholds or kernel truncation */
    CH_ENERGY_STOPPED = 2, /* fell below the energy cutoff */
    CH_SPATIAL_LEAK = 3, /* streamed out of the x-z domain */
    CH_NUCLEAR = 4, /* removed by a non-elastic nuclear interaction */
    CH_MEDIUM_ROUNDING = 5, /* energy only: whole-bin moves against the mean loss deposited */
    CH_COUNT = 6
};

extern const char *const tally_channel_names[CH_COUNT];

typedef struct step_tally {
    double weight[CH_COUNT]; /* weight removed from psi this step */
    double energy[CH_COUNT]; /* MeV carried by it (see above for ENERGY_STOPPED) */
    double deposited; /* MeV deposited into dose this step */
} step_tally;

/* One step's balance, all in double. */
typedef struct step_balance {
    double weight_in, weight_out, energy_in, energy_out;
    step_tally t;
    double weight_rel_err, energy_rel_err; /* |residual| / in */
} step_balance;

void tally_clear(step_tally *t);
void tally_add(step_tally *sum, const step_tally *t);
/* A step's imbalance is measured against what went in or came out, but
 * never against less than this fraction of its source's initial weight
 * (energy): a run past the point where an auto run stops (a fixed step count,
 * a spot's run to the last of its weight) carries a vanishing remainder, and
 * the float rounding of the larger values it came from would otherwise count
 * as a violation (the default transport.auto_stop_weight). */
#define SMX_BALANCE_FLOOR 1e-6

/* Fills the relative errors of b from its flows and tallies; w0, e0: the
 * source's initial weight and energy (SMX_BALANCE_FLOOR). */
void tally_close_balance(step_balance *b, double w0, double e0);

#endif
