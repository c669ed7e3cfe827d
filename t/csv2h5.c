/* csv2h5.c - write the rows of a numeric CSV file (one header line, the
 * target in the last column) as an HDF5 file, for the tests that read the
 * same rows both ways.
 *
 *     csv2h5 IN.csv OUT.h5
 *
 * OUT.h5 holds three float64 datasets: "x" (rows x features), "y" (the
 * targets, 1-D) and "xy" (rows x (features + 1), the target last, as in
 * the CSV).  Exits 77 when built without libhdf5, 1 on a bad input.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_HDF5
#include <hdf5.h>

/* Every number of the file after its header, row-major; *rows and *width
 * set.  NULL after printing why. */
static double *read_csv(const char *path, size_t *rows, size_t *width)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return NULL;
    }
    char line[65536];
    size_t cap = 1024, n = 0, r = 0, w = 0;
    double *v = malloc(cap * sizeof *v);
    int header = 1;
    while (v && fgets(line, sizeof line, f)) {
        if (header || line[0] == '\n') {
            header = 0;
            continue;
        }
        size_t k = 0;
        for (char *s = line, *end;; s = end + 1) {
            double d = strtod(s, &end);
            if (end == s) {
                fprintf(stderr, "%s: row %zu: not a number\n", path, r + 1);
                free(v);
                fclose(f);
                return NULL;
            }
            if (n == cap) {
                double *nv = realloc(v, 2 * cap * sizeof *v);
                if (!nv)
                    break;
                v = nv;
                cap *= 2;
            }
            v[n++] = d;
            k++;
            if (*end != ',')
                break;
        }
        if (r > 0 && k != w) {
            fprintf(stderr, "%s: row %zu: %zu values, not %zu\n", path, r + 1,
                    k, w);
            free(v);
            fclose(f);
            return NULL;
        }
        w = k;
        r++;
    }
    fclose(f);
    if (!v || r == 0 || w < 2) {
        fprintf(stderr, "%s: no rows of a feature and a target\n", path);
        free(v);
        return NULL;
    }
    *rows = r;
    *width = w;
    return v;
}

/* Write vals as the float64 dataset name of nd dimensions dims.  0 or -1. */
static int put(hid_t file, const char *name, int nd, const hsize_t *dims,
               const double *vals)
{
    hid_t s = H5Screate_simple(nd, dims, NULL);
    hid_t d = H5Dcreate2(file, name, H5T_IEEE_F64LE, s, H5P_DEFAULT,
                         H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = d < 0 ? -1
                      : H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL,
                                 H5P_DEFAULT, vals);
    if (d >= 0)
        H5Dclose(d);
    H5Sclose(s);
    return rc < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: csv2h5 IN.csv OUT.h5\n");
        return 2;
    }
    size_t m, w;
    double *v = read_csv(argv[1], &m, &w);
    if (!v)
        return 1;
    double *x = malloc(m * (w - 1) * sizeof *x), *y = malloc(m * sizeof *y);
    if (!x || !y)
        return 1;
    for (size_t i = 0; i < m; i++) {
        memcpy(x + i * (w - 1), v + i * w, (w - 1) * sizeof *x);
        y[i] = v[i * w + w - 1];
    }
    hid_t f = H5Fcreate(argv[2], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dx[2] = {m, w - 1}, dy[1] = {m}, dxy[2] = {m, w};
    int rc = f < 0 || put(f, "x", 2, dx, x) < 0 || put(f, "y", 1, dy, y) < 0 ||
             put(f, "xy", 2, dxy, v) < 0;
    if (f >= 0 && H5Fclose(f) < 0)
        rc = 1;
    if (rc)
        fprintf(stderr, "csv2h5: %s: cannot write\n", argv[2]);
    free(v);
    free(x);
    free(y);
    return rc;
}

#else

int main(void)
{
    fprintf(stderr, "csv2h5: built without libhdf5\n");
    return 77;
}

#endif
