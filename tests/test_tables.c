/* Material table: the shipped file, its generator and the log-log
 * interpolation (the reader's validation of broken files:
 * test_tables_malformed.c).
 *
 *   test_tables [PATH/TO/make_tables]
 *
 * Run from the repository root (data/ relative). With the generator's path the
 * test also proves that data/pstar_water.h5 is what the CSV regenerates to. */
#include "physics/scattering_power.h"
#include "tables_fixture.h"

/* ---- an independent reading of the CSV (sscanf, not the generator's parser) ---- */

typedef struct csv_ref {
    int n;
    double col[7][MAXN]; /* E, S_el, S_nuc, S_tot, csda, projected, detour */
    char comment[4096];
} csv_ref;

static int read_csv_ref(csv_ref *r)
{
    FILE *f = fopen(CSV_PATH, "r");
    if (!f) {
        fprintf(stderr, "%s: %s\n", CSV_PATH, strerror(errno));
        return -1;
    }
    char line[4096];
    r->n = 0;
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (lineno == 1) {
            const char *s = line;
            while (*s == '#' || *s == ' ')
                s++;
            snprintf(r->comment, sizeof r->comment, "%s", s);
            continue;
        }
        if (lineno == 2)
            continue;
        double *c[7];
        for (int j = 0; j < 7; j++)
            c[j] = &r->col[j][r->n];
        if (r->n >= MAXN || sscanf(line, "%lf,%lf,%lf,%lf,%lf,%lf,%lf", c[0], c[1], c[2], c[3],
                                   c[4], c[5], c[6]) != 7) {
            fprintf(stderr, "%s:%d: unparsable\n", CSV_PATH, lineno);
            fclose(f);
            return -1;
        }
        r->n++;
    }
    fclose(f);
    return 0;
}

/* ---- running the generator ---- */

static void read_text(const char *path, char *buf, size_t cap)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    size_t got = fread(buf, 1, cap - 1, f);
    buf[got] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    fclose(f);
}

static void check_against_csv(const tables *t)
{
    csv_ref *r = malloc(sizeof *r);
    if (!r || read_csv_ref(r) != 0) {
        CHECK_MSG(0, "cannot read %s independently", CSV_PATH);
        free(r);
        return;
    }
    CHECK(t->n == r->n);
    for (int j = 0; j < 7 && t->n == r->n; j++) {
        const double *v = tables_column(t, j);
        for (int i = 0; i < r->n; i++)
            CHECK_MSG(v[i] == r->col[j][i], "dataset '%s'[%d] = %.17g, CSV has %.17g",
                      tables_datasets[j].name, i, v[i], r->col[j][i]);
    }
    CHECK_STREQ(t->source, r->comment);
    free(r);
}

static void check_metadata(const tables *t)
{
    CHECK_STREQ(t->material, "water (liquid)");
    CHECK(t->I_eV == 75.0);
    CHECK_STREQ(t->path, H5_PATH);
    CHECK(strstr(t->scattering_model, "Fermi-Rossi") != NULL);
    CHECK(strstr(t->scattering_model, "36.08") != NULL);
    char hex[65];
    CHECK(sha256_file_hex(H5_PATH, hex) == 0);
    CHECK_STREQ(t->sha256, hex);
    CHECK(strlen(t->sha256) == 64);
}

static void check_interpolation(const tables *t)
{
    const int n = t->n;
    const double *E = t->E_MeV, *R = t->csda_g_cm2;

    /* At table points the lookup must return the stored numbers; 1e-12 only
     * allows for the exp(log(x)) round trip at a segment's far end. */
    for (int i = 0; i < n; i++) {
        CHECK_REL(tables_csda_range(t, E[i]), R[i], 1e-12);
        CHECK_REL(tables_stopping_power(t, E[i]), t->S_total_MeV_cm2_g[i], 1e-12);
        CHECK_REL(tables_scattering_power(t, E[i]), t->T_rad2_cm2_g[i], 1e-12);
        CHECK_REL(tables_projected_range(t, E[i]), t->projected_g_cm2[i], 1e-12);
        CHECK_REL(tables_energy_at_range(t, R[i]), E[i], 1e-12);
    }
    /* Log-log, not lin-lin: at the geometric mean of two energies a power law
     * gives the geometric mean of the two values. */
    for (int i = 0; i + 1 < n; i++) {
        double Em = sqrt(E[i] * E[i + 1]);
        CHECK_REL(tables_csda_range(t, Em), sqrt(R[i] * R[i + 1]), 1e-12);
        CHECK_REL(tables_stopping_power(t, Em),
                  sqrt(t->S_total_MeV_cm2_g[i] * t->S_total_MeV_cm2_g[i + 1]), 1e-12);
    }

    /* Range and its inverse over a dense sweep (many points per segment). The
     * tolerance is rounding only: both sides are the same power law. */
    const int M = 20000;
    double worst = 0.0, prevR = 0.0;
    int monotone = 1;
    for (int m = 0; m <= M; m++) {
        double Ev = E[0] * pow(E[n - 1] / E[0], (double)m / M);
        if (m == M)
            Ev = E[n - 1];
        double Rv = tables_csda_range(t, Ev);
        double back = tables_energy_at_range(t, Rv);
        double rel = fabs(back - Ev) / Ev;
        if (!(rel <= worst))
            worst = rel;
        if (m > 0 && !(Rv > prevR))
            monotone = 0;
        prevR = Rv;
        double Rs = R[0] * pow(R[n - 1] / R[0], (double)m / M);
        if (m == M)
            Rs = R[n - 1];
        CHECK_REL(tables_csda_range(t, tables_energy_at_range(t, Rs)), Rs, 1e-12);
    }
    CHECK_MSG(worst <= 1e-12, "inverse(range(E)) worst relative error %.3g", worst);
    CHECK(monotone);
    printf("inverse(range(E)) == E: worst relative error %.2g over %d energies\n", worst, M + 1);

    /* Outside the table there is no answer, and callers must see that. */
    CHECK(isnan(tables_csda_range(t, E[0] * (1 - 1e-12))));
    CHECK(isnan(tables_csda_range(t, E[n - 1] * (1 + 1e-12))));
    CHECK(isnan(tables_stopping_power(t, 0.0)));
    CHECK(isnan(tables_scattering_power(t, 1e4)));
    CHECK(isnan(tables_projected_range(t, -1.0)));
    CHECK(isnan(tables_csda_range(t, NAN)));
    CHECK(isnan(tables_energy_at_range(t, R[0] * (1 - 1e-12))));
    CHECK(isnan(tables_energy_at_range(t, R[n - 1] * (1 + 1e-12))));
    CHECK(isnan(tables_energy_at_range(t, NAN)));
    CHECK(!isnan(tables_csda_range(t, E[0])) && !isnan(tables_csda_range(t, E[n - 1])));
}

/* A hand-edited stopping power or range column breaks R(E) = R(E0) + int dE/S.
 * The integral is done exactly for the log-log interpolant of S on each
 * segment (S = S_i (E/E_i)^p integrates in closed form). */
static void check_csda_integral(const tables *t)
{
    const double *E = t->E_MeV, *S = t->S_total_MeV_cm2_g, *R = t->csda_g_cm2;
    double acc = R[0], worst = 0.0, worst_E = 0.0;
    for (int i = 0; i + 1 < t->n; i++) {
        double p = log(S[i + 1] / S[i]) / log(E[i + 1] / E[i]);
        double q = 1.0 - p; /* S falls with E above 1 MeV, so q > 1: never 0 */
        acc += E[i] / S[i] * (pow(E[i + 1] / E[i], q) - 1.0) / q;
        if (E[i + 1] > 5.0) {
            double rel = fabs(acc - R[i + 1]) / R[i + 1];
            if (rel > worst) {
                worst = rel;
                worst_E = E[i + 1];
            }
        }
    }
    /* PSTAR's own statement is < 0.03 % with log-log interpolation; 0.5 % leaves
     * room for the integration scheme but not for an edited column. */
    CHECK_MSG(worst <= 0.005, "CSDA column deviates %.3g %% from the integral of 1/S at %g MeV",
              100 * worst, worst_E);
    printf("CSDA range vs integral of dE/S_total above 5 MeV: worst %.4f %% (at %g MeV)\n",
           100 * worst, worst_E);
}

static void check_scattering_power(const tables *t)
{
    /* p v from relativistic kinematics, written differently from the model's
     * E(E+2m)/(E+m) so that a slip in either shows. */
    const double m = 938.272088, E = 100.0;
    double gamma = 1.0 + E / m;
    double beta2 = 1.0 - 1.0 / (gamma * gamma);
    double pv = m * gamma * beta2;
    double T = (15.0 / pv) * (15.0 / pv) / 36.08;
    CHECK_REL(tables_scattering_power(t, E), T, 1e-12);
    CHECK_REL(scattering_power_fermi_rossi(E, 36.08), T, 1e-12);
    /* An anchor that does not depend on the code at all: p v(100 MeV) from a
     * hand calculation, 190.38 MeV. */
    CHECK_REL(pv, 190.38, 1e-4);
    for (int i = 0; i < t->n; i++)
        CHECK_REL(t->T_rad2_cm2_g[i], scattering_power_fermi_rossi(t->E_MeV[i], 36.08), 1e-15);
}

static void check_regeneration(const char *gen, const tables *shipped)
{
    char fresh[256], again[256], errf[256], msg[2048];
    tmp_path(fresh, sizeof fresh, "fresh.h5");
    tmp_path(again, sizeof again, "again.h5");
    tmp_path(errf, sizeof errf, "gen.err");
    int st = run_program((const char *const[]){ gen, CSV_PATH, fresh, NULL }, errf);
    read_text(errf, msg, sizeof msg);
    CHECK_MSG(st == 0, "%s %s %s exited %d: %s", gen, CSV_PATH, fresh, st, msg);
    if (st != 0)
        return;

    tables t;
    smx_error err = { 0 };
    CHECK_MSG(tables_load(&t, fresh, &err) == 0, "%s", err.msg);
    if (err.code)
        return;
    int same = t.n == shipped->n;
    for (int k = 0; same && k < TABLES_NDATASETS; k++) {
        const double *a = tables_column(shipped, k), *b = tables_column(&t, k);
        for (int i = 0; i < t.n; i++)
            if (memcmp(&a[i], &b[i], sizeof a[i]) != 0) {
                CHECK_MSG(0, "dataset '%s'[%d]: shipped %.17g, regenerated %.17g",
                          tables_datasets[k].name, i, a[i], b[i]);
                same = 0;
                break;
            }
    }
    static const char *const sattrs[] = { "filetype", "format_version",   "material",
                                          "source",   "scattering_model", "generator" };
    for (size_t j = 0; j < sizeof sattrs / sizeof *sattrs; j++) {
        char a[2048], b[2048];
        int ra = attr_string(H5_PATH, "/", sattrs[j], a, sizeof a);
        int rb = attr_string(fresh, "/", sattrs[j], b, sizeof b);
        if (ra || rb || strcmp(a, b) != 0) {
            CHECK_MSG(0, "root attribute '%s': shipped '%s', regenerated '%s'", sattrs[j], a, b);
            same = 0;
        }
    }
    static const char *const dattrs[] = { "density_g_cm3", "mean_excitation_energy_eV" };
    for (size_t j = 0; j < sizeof dattrs / sizeof *dattrs; j++) {
        double a = NAN, b = NAN;
        if (attr_double(H5_PATH, dattrs[j], &a) || attr_double(fresh, dattrs[j], &b) || a != b) {
            CHECK_MSG(0, "root attribute '%s': shipped %.17g, regenerated %.17g", dattrs[j], a, b);
            same = 0;
        }
    }
    for (int k = 0; k < TABLES_NDATASETS; k++) {
        static const char *const names[] = { "units", "description" };
        for (int j = 0; j < 2; j++) {
            char obj[128], a[512], b[512];
            snprintf(obj, sizeof obj, "/%s", tables_datasets[k].name);
            if (attr_string(H5_PATH, obj, names[j], a, sizeof a) ||
                attr_string(fresh, obj, names[j], b, sizeof b) || strcmp(a, b) != 0) {
                CHECK_MSG(0, "dataset '%s' attribute '%s' differs", obj, names[j]);
                same = 0;
            }
        }
    }
    if (!same)
        fprintf(stderr, "%s is out of date with %s: run make tables\n", H5_PATH, CSV_PATH);
    else if (strcmp(t.sha256, shipped->sha256) != 0)
        printf("note: same values, different bytes (another HDF5 version wrote %s)\n", H5_PATH);

    /* The generator is deterministic: a second run gives the same bytes. */
    st = run_program((const char *const[]){ gen, CSV_PATH, again, NULL }, errf);
    CHECK(st == 0);
    char h1[65], h2[65];
    CHECK(sha256_file_hex(fresh, h1) == 0 && sha256_file_hex(again, h2) == 0 &&
          strcmp(h1, h2) == 0);
    tables_free(&t);
    unlink(fresh);
    unlink(again);
    unlink(errf);
}

/* The generator refuses a malformed CSV with file:line and column, and leaves
 * neither an output nor a temporary file behind. */
static void check_generator_rejects(const char *gen)
{
    static const struct {
        const char *body, *expect;
    } cases[] = {
        { "# src\nkinetic_energy_MeV,electronic_stopping_MeV_cm2_per_g,"
          "nuclear_stopping_MeV_cm2_per_g,total_stopping_MeV_cm2_per_g,csda_range_g_per_cm2,"
          "projected_range_g_per_cm2,detour_factor\n"
          "1.0,260,0.2,260,0.0025,0.0024,0.99\n"
          "2.0,158,0.1,158,0.0075,0.0075,0.99\n"
          "1.5,195,0.15,195,0.0047,0.0046,0.99\n",
          "%s:5: column 'kinetic_energy_MeV': 1.5 does not exceed the previous row's 2 "
          "(energies must be strictly ascending)" },
        { "# src\nkinetic_energy_MeV,electronic_stopping_MeV_cm2_per_g,"
          "nuclear_stopping_MeV_cm2_per_g,total_stopping_MeV_cm2_per_g,csda_range_g_per_cm2,"
          "projected_range_g_per_cm2,detour_factor\n"
          "1.0,260,0.2,260,0.0025,0.0024,0.99\n"
          "2.0,158,0.1,15x8,0.0075,0.0075,0.99\n",
          "%s:4: column 'total_stopping_MeV_cm2_per_g': '15x8' is not a number" },
        { "# src\nkinetic_energy_MeV,electronic_stopping_MeV_cm2_per_g,"
          "nuclear_stopping_MeV_cm2_per_g,total_stopping_MeV_cm2_per_g,csda_range_g_per_cm2,"
          "projected_range_g_per_cm2,detour_factor\n"
          "1.0,260,0.2,260,0.0025,0.0024,0.99\n"
          "2.0,158,0,158,0.0075,0.0075,0.99\n",
          "%s:4: column 'nuclear_stopping_MeV_cm2_per_g': 0 is not positive" },
        { "# src\nkinetic_energy_MeV,electronic,nuclear,total,csda,projected,detour\n"
          "1.0,260,0.2,260,0.0025,0.0024,0.99\n",
          "%s:2: header column 2 is 'electronic'; expected "
          "'electronic_stopping_MeV_cm2_per_g' (and 7 columns in all)" },
    };
    char csv[256], out[256], errf[256], got[2048], want[2048];
    tmp_path(csv, sizeof csv, "bad.csv");
    tmp_path(out, sizeof out, "bad.h5");
    tmp_path(errf, sizeof errf, "bad.err");
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        FILE *f = fopen(csv, "w");
        CHECK(f != NULL);
        if (!f)
            return;
        fputs(cases[c].body, f);
        fclose(f);
        int st = run_program((const char *const[]){ gen, csv, out, NULL }, errf);
        CHECK_MSG(st == SMX_EXIT_INPUT, "case %zu: exit %d", c, st);
        read_text(errf, got, sizeof got);
        char body[1800];
        snprintf(body, sizeof body, cases[c].expect, csv);
        snprintf(want, sizeof want, "make_tables: %s", body);
        CHECK_STREQ(got, want);
        CHECK(access(out, F_OK) != 0);
    }
    unlink(csv);
    unlink(errf);
}

int main(int argc, char **argv)
{
    if (tables_fixture_begin())
        return 1;
    tables t;
    smx_error err = { 0 };
    int rc = tables_load(&t, H5_PATH, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc == 0) {
        check_against_csv(&t);
        check_metadata(&t);
        check_interpolation(&t);
        check_csda_integral(&t);
        check_scattering_power(&t);
        if (argc > 1) {
            check_regeneration(argv[1], &t);
            check_generator_rejects(argv[1]);
        } else {
            printf("no generator path given: skipping the regeneration checks\n");
        }
    }
    tables_free(&t);
    tables_free(&t);
    tables_fixture_end();
    return check_report(argv[0]);
}
