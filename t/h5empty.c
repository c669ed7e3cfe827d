/* h5empty.c - an HDF5 file holding a float64 dataset "x" of ROWS x COLS
 * that is never written: chunked, so the file takes a few KB however
 * large the dataset says it is (t0109: the memory estimate reads its
 * shape, not its size on disk).
 *
 *     h5empty OUT.h5 ROWS COLS
 *
 * Exits 77 when built without libhdf5, 1 on an error.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>

#ifdef HAVE_HDF5
#include <hdf5.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: h5empty OUT.h5 ROWS COLS\n");
        return 1;
    }
    hsize_t dims[2] = {strtoull(argv[2], NULL, 10),
                       strtoull(argv[3], NULL, 10)};
    hsize_t chunk[2] = {1, dims[1] < 1024 ? dims[1] : 1024};
    hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t space = H5Screate_simple(2, dims, NULL);
    hid_t plist = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(plist, 2, chunk);
    hid_t set = file < 0 || space < 0 || plist < 0
                    ? -1
                    : H5Dcreate2(file, "x", H5T_IEEE_F64LE, space, H5P_DEFAULT,
                                 plist, H5P_DEFAULT);
    int rc = set < 0;
    if (set >= 0)
        H5Dclose(set);
    if (plist >= 0)
        H5Pclose(plist);
    if (space >= 0)
        H5Sclose(space);
    if (file >= 0 && H5Fclose(file) < 0)
        rc = 1;
    if (rc)
        fprintf(stderr, "h5empty: cannot write %s\n", argv[1]);
    return rc;
}

#else

int main(void)
{
    fprintf(stderr, "h5empty: built without libhdf5\n");
    return 77;
}

#endif
