/* The geometry of a plan as a medium map (physics/medium_plan.c): which cell
 * gets which medium from shapes, an HDF5 map and a CT image with its
 * calibration, on a small grid where every cell is checked; densities and
 * their quantisation bound; and the errors, each naming file:line:col (or the
 * map's dataset and cell) and what was expected. */
#include <hdf5.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "input/plan.h"
#include "physics/grid.h"
#include "physics/medium_plan.h"
#include "physics/tables.h"

static char dir[64];
static char water[PATH_MAX];
static char plan_path[PATH_MAX + 32];

static const char *const library[] = {
    "water",         "air",  "lung",         "adipose",   "muscle",   "bone_compact",
    "bone_cortical", "pmma", "polyethylene", "aluminium", "titanium", "graphite"
};

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK_MSG(f != NULL, "cannot create %s", path);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* A scratch folder next to whose plans a materials/ folder holds every library
 * key's table (links to the water table: the tables' contents do not matter
 * to the map). */
static int begin(void)
{
    snprintf(dir, sizeof dir, "/tmp/smx2d-test-geometry-XXXXXX");
    if (!mkdtemp(dir) || !realpath("data/pstar_water.h5", water))
        return 1;
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/materials", dir);
    if (mkdir(path, 0755))
        return 1;
    for (size_t i = 0; i < sizeof library / sizeof library[0]; i++) {
        snprintf(path, sizeof path, "%s/materials/%s.h5", dir, library[i]);
        if (symlink(water, path))
            return 1;
    }
    snprintf(plan_path, sizeof plan_path, "%s/plan.yaml", dir);
    return 0;
}

static void end(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

/* A plan of nz x nx cells of dz x dx mm with `geometry` (YAML lines under
 * geometry:, already indented) written to plan_path. */
static void write_plan(int nz, int nx, double dz, double dx, const char *geometry)
{
    char text[8192];
    snprintf(text, sizeof text,
             "grid:\n"
             "  space: {nx: %d, nz: %d, dx_mm: %g, dz_mm: %g}\n"
             "material: {name: water, table_file: '%s'}\n"
             "beam: {energy_MeV: 50}\n"
             "transport: {step_mm: %g}\n"
             "output: {file: out.h5}\n"
             "%s%s",
             nx, nz, dx, dz, water, dz < dx ? dz : dx, geometry[0] ? "geometry:\n" : "", geometry);
    write_text(plan_path, text);
}

/* Loads the plan, its table and grid, and builds the map; returns the code. */
static int build(medium_map *m, smx_error *err)
{
    plan p;
    tables t = { 0 };
    grid g = { 0 };
    memset(err, 0, sizeof *err);
    memset(m, 0, sizeof *m);
    int rc = plan_load(&p, plan_path, NULL, 0, err);
    if (!rc)
        rc = tables_load(&t, p.table_path, err);
    if (!rc)
        rc = grid_build(&g, &p, &t, err);
    if (!rc)
        rc = medium_map_build(m, &p, &g, err);
    if (rc)
        plan_word_error(&p, err); /* the key an error is at, with its line */
    grid_free(&g);
    tables_free(&t);
    plan_free(&p);
    return rc;
}

static void expect_error(const char *want)
{
    medium_map m;
    smx_error err;
    int rc = build(&m, &err);
    CHECK_MSG(rc == SMX_EXIT_INPUT, "rc %d, expected %d (%s)", rc, SMX_EXIT_INPUT, err.msg);
    CHECK_MSG(strstr(err.msg, want) != NULL, "\n  got:      %s\n  expected: ...%s...", err.msg,
              want);
    CHECK(m.materials == NULL && m.cell == NULL); /* nothing left allocated */
    medium_map_free(&m);
}

/* The map's cells as rows of medium digits, z = 0 first. */
static void expect_cells(const medium_map *m, const char *const *rows)
{
    for (int z = 0; z < m->nz; z++) {
        char got[256];
        for (int x = 0; x < m->nx; x++)
            got[x] = (char)('0' + medium_of(m, z, x));
        got[m->nx] = '\0';
        CHECK_MSG(!strcmp(got, rows[z]), "row z %d: got %s, expected %s", z, got, rows[z]);
    }
}

static const char *name_of(const medium_map *m, int medium)
{
    return m->materials[m->media[medium].material].name;
}

/* ---- shapes ---- */

static void test_uniform(void)
{
    write_plan(4, 3, 1, 1, "");
    medium_map m;
    smx_error err;
    CHECK(build(&m, &err) == 0);
    CHECK(m.n_media == 1 && m.n_materials == 1 && m.cell == NULL && medium_map_uniform_p(&m));
    CHECK_STREQ(m.rule, "uniform");
    CHECK_STREQ(m.materials[0].name, "water");
    CHECK(m.media[0].density_g_cm3 == 1.0);
    medium_map_free(&m);
}

static void test_shapes_cells(void)
{
    /* 10 x 8 cells of 1 mm: centres z = 0.5 .. 9.5, x = -3.5 .. 3.5. */
    write_plan(
        10, 8, 1, 1,
        "  shapes:\n"
        "    - {material: bone_compact, z_mm: [2, 4]}\n" /* rows 2, 3 */
        "    - {material: lung, z_mm: [5, 8], x_mm: [-2, 1], density_g_cm3: 0.26}\n" /* x centres -1.5..0.5 */
        "    - {material: water, z_mm: [6, 7], x_mm: [0, 4]}\n" /* the background again */
        "    - {material: titanium, z_mm: [8.5, 9.5], x_mm: [-4, -3]}\n"); /* centre 9.5 not < 9.5 */
    medium_map m;
    smx_error err;
    CHECK_MSG(build(&m, &err) == 0, "%s", err.msg);
    static const char *const rows[] = {
        "00000000", "00000000", "11111111", "11111111", "00000000",
        "00222000", "00220000", "00222000", "30000000", "00000000",
    };
    expect_cells(&m, rows);
    CHECK(m.n_media == 4 && m.n_materials == 4);
    CHECK_STREQ(name_of(&m, 1), "bone_compact");
    CHECK(m.media[1].density_g_cm3 == 1.85); /* the nominal density: NIST's compact bone (ICRU) */
    CHECK_STREQ(name_of(&m, 2), "lung");
    CHECK(m.media[2].density_g_cm3 == 0.26);
    CHECK_STREQ(name_of(&m, 3), "titanium");
    CHECK(m.media[3].density_g_cm3 == 4.54);
    /* A shape naming the plan's material is the background material at the plan's density. */
    CHECK(m.media[0].material == 0 && m.media[0].density_g_cm3 == 1.0);
    char bone[PATH_MAX + 64];
    snprintf(bone, sizeof bone, "%s/materials/bone_compact.h5", dir);
    CHECK_STREQ(m.materials[1].table_path, bone);
    CHECK_MSG(strstr(m.rule, "4 shapes on top") != NULL, "%s", m.rule);
    medium_map_free(&m);
}

static void test_shape_errors(void)
{
    /* The shapes' geometry is checked by the plan reader, with the same cell rule. */
    write_plan(10, 8, 1, 1, "  shapes:\n    - {material: bone_compact, z_mm: [2, 11]}\n");
    expect_error(
        "plan.yaml:9:38: geometry.shapes[0].z_mm: [2, 11] mm reaches outside the domain, z = 0 to 10 mm; "
        "expected a range inside it");
    write_plan(10, 8, 1, 1,
               "  shapes:\n    - {material: bone_compact, z_mm: [2, 4], x_mm: [-5, 0]}\n");
    expect_error(
        "plan.yaml:9:52: geometry.shapes[0].x_mm: [-5, 0] mm reaches outside the domain, x = -4 to 4 mm");
    write_plan(10, 8, 1, 1, "  shapes:\n    - {material: lung, z_mm: [4, 2]}\n");
    expect_error(
        "plan.yaml:9:30: geometry.shapes[0].z_mm: [4, 2] is inverted; expected a range [from, to] in mm "
        "with from < to");
    write_plan(10, 8, 1, 1, "  shapes:\n    - {material: lung, z_mm: [3, 3]}\n");
    expect_error("plan.yaml:9:30: geometry.shapes[0].z_mm: [3, 3] is empty");
    write_plan(10, 8, 1, 1, "  shapes:\n    - {material: lung, z_mm: [3.6, 4.4]}\n");
    expect_error("plan.yaml:9:30: geometry.shapes[0].z_mm: [3.6, 4.4] mm holds no cell centre");
    write_plan(10, 8, 1, 1, "  shapes:\n    - {material: lung, z_mm: [3, 4], density_g_cm3: 30}\n");
    expect_error(
        "plan.yaml:9:53: geometry.shapes[0].density_g_cm3: 30 is too large; expected a number in (0, 25] "
        "g/cm^3");
    write_plan(10, 8, 1, 1, "  shapes:\n    - {material: lung, z_mm: [3, 4], densty_g_cm3: 0.3}\n");
    expect_error(
        "plan.yaml:9:38: geometry.shapes[0]: unknown key 'densty_g_cm3'; did you mean 'density_g_cm3'?");
    write_plan(10, 8, 1, 1, "  shapes:\n    - {material: lung}\n");
    expect_error("plan.yaml:9:7: geometry.shapes[0]: missing key 'z_mm'");
    write_plan(10, 8, 1, 1, "  shapes:\n    - lung\n");
    expect_error(
        "plan.yaml:9:7: geometry.shapes[0]: got a scalar 'lung'; expected a mapping with keys material, "
        "z_mm, x_mm, density_g_cm3");
    write_plan(10, 8, 1, 1, "  shapes: {material: lung}\n");
    expect_error("plan.yaml:8:11: geometry.shapes: got a mapping; expected a list of shapes");
    /* The material is checked against the library, with a suggestion. */
    write_plan(10, 8, 1, 1,
               "  shapes:\n    - {material: lung, z_mm: [1, 2]}\n    - {material: bone_compcat, "
               "z_mm: [2, 4]}\n");
    expect_error(
        "plan.yaml:10:18: geometry.shapes[1].material: unknown material 'bone_compcat'; did you mean "
        "'bone_compact'?");
    write_plan(10, 8, 1, 1, "  shapes:\n    - {material: unobtainium, z_mm: [2, 4]}\n");
    expect_error(
        "plan.yaml:9:18: geometry.shapes[0].material: unknown material 'unobtainium'; expected a library "
        "material (water, air, lung,");
    /* A shape every cell of which a later one takes says nothing. */
    write_plan(10, 8, 1, 1,
               "  shapes:\n    - {material: lung, z_mm: [2, 3], x_mm: [0, 2]}\n"
               "    - {material: bone_compact, z_mm: [1, 4]}\n");
    expect_error(
        "plan.yaml:9:7: geometry.shapes[0]: every cell of this shape is taken by later shapes");
}

static void test_shapes_set_and_round_trip(void)
{
    write_plan(10, 8, 1, 1, "");
    plan p;
    smx_error err = { 0 };
    const char *sets[] = {
        "geometry.shapes=[{material: lung, z_mm: [1, 2.5], x_mm: [-1, 1], density_g_cm3: 0.3}, "
        "{material: pmma, z_mm: [5, 6]}]"
    };
    CHECK_MSG(plan_load(&p, plan_path, sets, 1, &err) == 0, "%s", err.msg);
    CHECK(p.n_shapes == 2 && p.shapes[0].has_x && !p.shapes[1].has_x &&
          p.shapes[0].density_g_cm3 == 0.3);
    CHECK(p.shapes[0].z_mm[1] == 2.5 && p.shapes[1].density_g_cm3 == 0.0);
    char *text = plan_resolved_text(&p);
    CHECK(text &&
          strstr(text,
                 "geometry.shapes: [{material: lung, z_mm: [1, 2.5], x_mm: [-1, 1], density_g_cm3: "
                 "0.3}, {material: pmma, z_mm: [5, 6]}]  # --set\n"));
    plan_free(&p);
    /* The resolved plan loads back to the same shapes. */
    char resolved[PATH_MAX + 64];
    snprintf(resolved, sizeof resolved, "%s/resolved.yaml", dir);
    write_text(resolved, text ? text : "");
    free(text);
    plan q;
    memset(&err, 0, sizeof err);
    CHECK_MSG(plan_load(&q, resolved, NULL, 0, &err) == 0, "%s", err.msg);
    CHECK(q.n_shapes == 2 && !strcmp(q.shapes[1].material, "pmma") && q.shapes[0].x_mm[0] == -1.0);
    plan_free(&q);
    /* An error in a --set shape names the --set. */
    const char *bad[] = { "geometry.shapes=[{material: lung, z_mm: [1, 20]}]" };
    memset(&err, 0, sizeof err);
    CHECK(plan_load(&p, plan_path, bad, 1, &err) == SMX_EXIT_INPUT);
    CHECK_MSG(strstr(err.msg,
                     "--set geometry.shapes: geometry.shapes[0].z_mm: [1, 20] mm reaches outside"),
              "%s", err.msg);
}

/* ---- HDF5 inputs ---- */

/* A map file: names, index [nz][nx], density (NULL: none), cell size, and
 * x0 (NAN: left out). */
static void write_map(const char *path, int nz, int nx, const char *const *names, int n_names,
                      const int *index, const float *density, double dz, double dx, double x0)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[2] = { (hsize_t)nz, (hsize_t)nx }, nn = (hsize_t)n_names;
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t d =
        H5Dcreate2(f, "material_index", H5T_STD_U8LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, index) >= 0);
    H5Dclose(d);
    if (density) {
        d = H5Dcreate2(f, "density_g_cm3", H5T_IEEE_F32LE, sp, H5P_DEFAULT, H5P_DEFAULT,
                       H5P_DEFAULT);
        CHECK(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, density) >= 0);
        H5Dclose(d);
    }
    H5Sclose(sp);
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, H5T_VARIABLE);
    sp = H5Screate_simple(1, &nn, NULL);
    d = H5Dcreate2(f, "materials", st, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(H5Dwrite(d, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, names) >= 0);
    H5Dclose(d);
    H5Sclose(sp);
    H5Tclose(st);
    sp = H5Screate(H5S_SCALAR);
    const char *an[] = { "dz_mm", "dx_mm", "x0_mm" };
    double av[] = { dz, dx, x0 };
    for (int i = 0; i < 3; i++) {
        if (isnan(av[i]))
            continue;
        hid_t a = H5Acreate2(f, an[i], H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
        CHECK(H5Awrite(a, H5T_NATIVE_DOUBLE, &av[i]) >= 0);
        H5Aclose(a);
    }
    H5Sclose(sp);
    H5Fclose(f);
}

static void test_map_file(void)
{
    /* A 3 x 2 map of 2 mm cells, centred: x edges -2, 0, 2; z edges 0, 2, 4, 6.
     * The plan's 6 x 4 cells of 1 mm each take the map cell holding its centre. */
    char map[PATH_MAX + 64];
    snprintf(map, sizeof map, "%s/map.h5", dir);
    const char *names[] = { "water", "lung", "bone_cortical" };
    const int index[] = { 0, 1, 2, 2, 1, 0 };
    const float density[] = { 1.0f, 0.3f, 1.92f, 1.92f, 0.3f, 1.0f };
    write_map(map, 3, 2, names, 3, index, density, 2.0, 2.0, NAN);
    write_plan(
        6, 4, 1, 1,
        "  map_file: map.h5\n  shapes:\n    - {material: air, z_mm: [5, 6], x_mm: [1, 2]}\n");
    medium_map m;
    smx_error err;
    CHECK_MSG(build(&m, &err) == 0, "%s", err.msg);
    static const char *const rows[] = { "0011", "0011", "2222", "2222", "1100", "1103" };
    expect_cells(&m, rows);
    CHECK(m.n_media == 4);
    CHECK_STREQ(name_of(&m, 1), "lung");
    CHECK(m.media[1].density_g_cm3 ==
          (double)0.3f); /* the map's float32, kept exactly: few media */
    CHECK_STREQ(name_of(&m, 2), "bone_cortical");
    CHECK_STREQ(name_of(&m, 3), "air");
    CHECK(m.density_step == 0.0);
    CHECK_MSG(strstr(m.rule, "resampled: each cell takes the map cell holding its centre"), "%s",
              m.rule);
    medium_map_free(&m);

    /* Without densities: each material's nominal density. */
    write_map(map, 3, 2, names, 3, index, NULL, 2.0, 2.0, NAN);
    write_plan(6, 4, 1, 1, "  map_file: map.h5\n");
    CHECK_MSG(build(&m, &err) == 0, "%s", err.msg);
    CHECK(m.n_media == 3 && m.media[1].density_g_cm3 == 1.05 && m.media[2].density_g_cm3 == 1.85);
    medium_map_free(&m);

    /* Errors: the map's file and the dataset, cell or attribute at fault. */
    const int bad_index[] = { 0, 1, 2, 3, 1, 0 };
    write_map(map, 3, 2, names, 3, bad_index, density, 2.0, 2.0, NAN);
    expect_error(
        "map.h5: /material_index at (z 1, x 1) is 3; expected an index into /materials, 0 to 2");
    write_map(map, 3, 2, names, 3, index, density, 2.0, NAN, NAN);
    expect_error("map.h5: attribute 'dx_mm' of / is missing");
    write_map(map, 3, 2, names, 3, index, density, 2.0, 2.0,
              -1.0); /* x from -1 to 3: misses x = -1.5 */
    expect_error("map.h5 (geometry.map_file): the image covers z 0 to 6 mm, x -1 to 3 mm");
    const char *typo[] = { "water", "lugn", "bone_cortical" };
    write_map(map, 3, 2, typo, 3, index, density, 2.0, 2.0, NAN);
    expect_error("map.h5: /materials[1]: unknown material 'lugn'; did you mean 'lung'?");
    const float bad_density[] = { 1.0f, 0.3f, 1.92f, -1.0f, 0.3f, 1.0f };
    write_map(map, 3, 2, names, 3, index, bad_density, 2.0, 2.0, NAN);
    expect_error("map.h5: /density_g_cm3 at (z 1, x 1) is -1; expected a density in (0, 25] g/cm3");
    /* A map and a CT both set every cell. */
    write_plan(6, 4, 1, 1, "  map_file: map.h5\n  ct: {file: map.h5, calibration: map.h5}\n");
    expect_error(
        "plan.yaml:9:14: geometry.ct.file: a CT image and geometry.map_file (given at 8:13) both give "
        "every cell its material");
    /* Not HDF5, and a damaged HDF5 file: errors naming the file, never a crash. */
    write_text(map, "not an HDF5 file\n");
    write_plan(6, 4, 1, 1, "  map_file: map.h5\n");
    expect_error("map.h5: not an HDF5 file (or unreadable)");
    expect_error(
        "plan.yaml:8:13: geometry.map_file: "); /* the key that names the file, as for the table */
    write_map(map, 3, 2, names, 3, index, density, 2.0, 2.0, NAN);
    FILE *f = fopen(map, "r+b");
    CHECK(f != NULL);
    if (f) {
        /* Zero the second half: the superblock survives, the objects do not. */
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        fseek(f, size / 2, SEEK_SET);
        for (long i = size / 2; i < size; i++)
            fputc(0, f);
        fclose(f);
    }
    medium_map mm;
    CHECK(build(&mm, &err) == SMX_EXIT_INPUT);
    CHECK_MSG(strstr(err.msg, "map.h5: ") != NULL, "%s", err.msg);
    medium_map_free(&mm);
}

/* ---- CT ---- */

static void write_ct(const char *path, int nz, int nx, const double *hu, double d)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[2] = { (hsize_t)nz, (hsize_t)nx };
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t ds = H5Dcreate2(f, "hu", H5T_IEEE_F32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, hu) >= 0);
    H5Dclose(ds);
    H5Sclose(sp);
    sp = H5Screate(H5S_SCALAR);
    const char *an[] = { "dz_mm", "dx_mm" };
    for (int i = 0; i < 2; i++) {
        hid_t a = H5Acreate2(f, an[i], H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
        CHECK(H5Awrite(a, H5T_NATIVE_DOUBLE, &d) >= 0);
        H5Aclose(a);
    }
    H5Sclose(sp);
    H5Fclose(f);
}

static const char calibration[] = "# test calibration\n"
                                  "hu, density_g_cm3, material\n"
                                  "-1000, 0.001, air\n"
                                  "-500, , lung\n"
                                  "0, 1.0, muscle\n"
                                  "1000, 2.0, bone_compact\n";

static void test_ct(void)
{
    char ct[PATH_MAX + 64], cal[PATH_MAX + 64];
    snprintf(ct, sizeof ct, "%s/ct.h5", dir);
    snprintf(cal, sizeof cal, "%s/cal.csv", dir);
    write_text(cal, calibration);
    const double hu[] = { -1000, -600, -500, -250, 0, 500, 999, 1000 };
    write_ct(ct, 2, 4, hu, 1.0);
    write_plan(2, 4, 1, 1, "  ct: {file: ct.h5, calibration: cal.csv}\n");
    medium_map m;
    smx_error err;
    CHECK_MSG(build(&m, &err) == 0, "%s", err.msg);
    /* Piecewise linear between the points; the material of the last row at or below. */
    const char *want_name[] = { "air",    "air",    "lung",   "lung",
                                "muscle", "muscle", "muscle", "bone_compact" };
    const double want_rho[] = {
        0.001, 0.001 + 0.4 * 0.999, 0.001 + 0.5 * 0.999, 0.001 + 0.75 * 0.999, 1.0, 1.5, 1.999, 2.0
    };
    for (int c = 0; c < 8; c++) {
        int med = medium_of(&m, c / 4, c % 4);
        CHECK_STREQ(name_of(&m, med), want_name[c]);
        /* Eight distinct values fit: kept to the last bit of the interpolation. */
        CHECK_REL(m.media[med].density_g_cm3, want_rho[c], 1e-15);
    }
    CHECK(m.density_step == 0.0);
    medium_map_free(&m);

    /* Outside the calibration: an error at the cell, never a clamp. */
    const double low[] = { -1000, -600, -500, -250, 0, 500, 999, 1001 };
    write_ct(ct, 2, 4, low, 1.0);
    expect_error("ct.h5 (geometry.ct.file): /hu at (z 1, x 3) is 1001 HU, above the calibration");
    /* A CT file that is not HDF5: the error names the key that names it. */
    write_text(ct, "not an HDF5 file\n");
    expect_error("plan.yaml:8:14: geometry.ct.file: ");
    expect_error("ct.h5: not an HDF5 file (or unreadable)");

    /* The calibration's errors name its line and column. */
    write_ct(ct, 2, 4, hu, 1.0);
    write_text(cal, "hu,density_g_cm3,material\n-1000,0.001,air\n0,1,muscel\n1000,2,\n");
    expect_error("cal.csv:3:5: material: unknown material 'muscel'; did you mean 'muscle'?");
    write_text(cal, "hu,density_g_cm3,material\n-1000,0.001,air\n0,1,muscle\n-5,2,\n");
    expect_error(
        "cal.csv:4:1: hu: -5 does not follow the previous density point's 0; expected density points in "
        "strictly ascending HU (geometry.ct.calibration)");
    write_text(cal, "hu,density_g_cm3,material\n-1000,0.001,air\n0,x1,muscle\n");
    expect_error("cal.csv:3:3: density_g_cm3: 'x1' is not a density");
    write_text(cal, "hu,density,material\n");
    expect_error(
        "cal.csv:1:4: column 'density' is unknown; expected the header hu, density_g_cm3, material");
    write_plan(2, 4, 1, 1, "  ct: {file: ct.h5}\n");
    expect_error("plan.yaml:8:14: geometry.ct.file: a CT image needs geometry.ct.calibration");
}

static void test_quantisation(void)
{
    /* 60 x 50 cells, 3000 distinct CT numbers from -1000 to 1999: far more
     * densities than media, so they are quantised, each within its bound. */
    char ct[PATH_MAX + 64], cal[PATH_MAX + 64];
    snprintf(ct, sizeof ct, "%s/ct.h5", dir);
    snprintf(cal, sizeof cal, "%s/cal.csv", dir);
    write_text(cal, "hu,density_g_cm3,material\n-1000,0.001,lung\n0,1,muscle\n2000,2.5,\n");
    enum { NZ = 60, NX = 50 };
    static double hu[NZ * NX];
    for (int c = 0; c < NZ * NX; c++)
        hu[c] = -1000 + c;
    write_ct(ct, NZ, NX, hu, 1.0);
    write_plan(NZ, NX, 1, 1,
               "  ct: {file: ct.h5, calibration: cal.csv}\n  shapes:\n    - {material: titanium, "
               "z_mm: [0, 1], x_mm: [0, 1]}\n");
    medium_map m;
    smx_error err;
    CHECK_MSG(build(&m, &err) == 0, "%s", err.msg);
    CHECK(m.n_media <= MEDIUM_MAX);
    CHECK_MSG(m.density_step > 0.0, "step %g", m.density_step);
    /* The bound of the rule: a factor (1 + step)^(1/2); 1e-12 is rounding of exp/log. */
    double worst = 0.0, bound = 0.5 * log1p(m.density_step) + 1e-12;
    for (int c = 0; c < NZ * NX; c++) {
        int z = c / NX, x = c % NX;
        if (z == 0 && x == NX / 2)
            continue; /* the titanium shape's cell */
        double rho = hu[c] < 0 ? 0.001 + (hu[c] + 1000) / 1000 * 0.999 : 1.0 + hu[c] / 2000 * 1.5;
        double q = m.media[medium_of(&m, z, x)].density_g_cm3;
        worst = fmax(worst, fabs(log(q / rho)));
    }
    CHECK_MSG(worst <= bound, "worst %g > bound %g", worst, bound);
    /* The smallest step that fits: half of it would not (more media than room). */
    double half = m.density_step / 2;
    int levels = 0;
    double last = -1;
    for (int c = 0; c < NZ * NX; c++) {
        double rho = hu[c] < 0 ? 0.001 + (hu[c] + 1000) / 1000 * 0.999 : 1.0 + hu[c] / 2000 * 1.5;
        double q = medium_quantise_density(rho, half);
        levels += q != last; /* rho ascends with c, and the material changes once, at 0 HU */
        last = q;
    }
    CHECK_MSG(levels + 2 > MEDIUM_MAX - 1, "%d levels at half the step would have fitted", levels);
    CHECK(strcmp(name_of(&m, medium_of(&m, 0, NX / 2)), "titanium") == 0);
    CHECK_MSG(strstr(m.rule, "densities quantised to (1 + "), "%s", m.rule);
    medium_map_free(&m);
    CHECK(medium_quantise_density(1.0, 0.005) == 1.0);
    CHECK(medium_quantise_density(0.26, 0.0) == 0.26);
}

int main(int argc, char **argv)
{
    (void)argc;
    if (begin()) {
        perror("test setup");
        return 1;
    }
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    test_uniform();
    test_shapes_cells();
    test_shape_errors();
    test_shapes_set_and_round_trip();
    test_map_file();
    test_ct();
    test_quantisation();
    end();
    return check_report(argv[0]);
}
