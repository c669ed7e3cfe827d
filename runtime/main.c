/* main.c - the aiarun command line. */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/host.h"
#include "conf/job.h"
#include "conf/job_keys.h"
#include "session/loader.h"
#include "mpi/run.h"
#include "sim/sim.h"
#include "core/util.h"

#define MAX_OVERRIDES 256
/* Bounds of -n and --simulate N. */
#define MAX_WORKERS 1000000
#define MAX_SIMULATE 10000000
/* Seconds --list-plugins and --check give a plugin's loading: dlopen
 * runs its constructors, which may never return. */
#define LOAD_SECONDS 10
static void usage(FILE *out)
{
    fprintf(out,
            "Usage: mpirun -np N aiarun [OPTIONS] JOB.yaml\n"
            "       aiarun --check [-n WORKERS] [OPTIONS] JOB.yaml\n"
            "       aiarun --list-plugins [JOB.yaml]\n"
            "       aiarun --simulate N [OPTIONS] JOB.yaml\n"
            "\n"
            "Run an asynchronous iterative algorithm described by a YAML "
            "job file:\n"
            "rank 0 coordinates, the other ranks are workers.\n"
            "\n"
            "Options:\n"
            "  -o, --set KEY=VALUE  override a job-file value, e.g. -o "
            "algorithm.step=0.05\n"
            "      --check          validate the job file and its plugins, "
            "then exit\n"
            "      --resume         continue the job from its "
            "output.checkpoint\n"
            "      --simulate N     run the job with N simulated workers in "
            "one process, in\n"
            "                       virtual time (no mpirun; see the "
            "simulate section)\n"
            "  -n, --workers N      with --check: the pool size, to check "
            "the wait condition\n"
            "      --list-plugins   list the plugins found, with their "
            "parameters\n"
            "      --job-reference[=FORMAT]\n"
            "                       print the job file's keys: markdown "
            "(the default) or\n"
            "                       man (the tables of aiarun(5))\n"
            "  -q, --quiet          only errors on stderr, only the summary "
            "line on stdout\n"
            "      --progress MODE  progress of runs over a second on "
            "stderr: auto, lines,\n"
            "                       tty (one line rewritten in place) or "
            "off; under mpirun\n"
            "                       stderr is a pipe, so auto means lines\n"
            "  -v, --verbose        more detail on stderr (repeatable)\n"
            "  -V, --version        print the version\n"
            "  -h, --help           print this help\n"
            "\n"
            "Plugins are searched in AIARUN_PLUGIN_PATH, the job file's "
            "folder and\n%s.\n"
            "Exit status: 0 done, 1 failed while running, 2 bad job, "
            "plugin or usage,\n"
            "3 done with the outputs complete but a worker left behind, "
            "4 done but the\nfinal evaluation missed rows (see "
            "aiarun(1)).\n",
            loader_plugindir());
}

static int check(const char *path, const char *const *overrides,
                 int nworkers)
{
    struct aia_error err;
    size_t len;
    char *text = util_read_file(path, 16u << 20, &len, &err);
    struct job *job = text ? job_load(path, text, len, overrides, &err)
                           : NULL;
    free(text);
    if (!job || job_check_outputs(job, &err) < 0 ||
        run_check(job, nworkers, &err) < 0) {
        host_error("%s", err.text);
        job_free(job);
        return RUN_BAD_JOB;
    }
    printf("%s: ok (algorithm %s, problem %s, wait %s%s)\n", path,
           job->algorithm.spec, job->problem.spec, job->wait.spec,
           nworkers > 0 ? "" : "; the wait condition is checked at run time "
                               "or with -n");
    job_free(job);
    return RUN_OK;
}

/* Standard output flushed and closed, a failure reported (as gnulib's
 * close_stdout): `aiarun --simulate 4 job.yaml >/dev/full` lost its
 * report and summary and exited 0 with nothing said.  Returns rc, or
 * RUN_FAILED when the write failed and rc said nothing worse. */
static int close_stdout(int rc)
{
    int failed = ferror(stdout);
    errno = 0;
    if (fflush(stdout) != 0)
        failed = 1;
    int e = errno;
    /* a closed stdout (>&-) with nothing written to it is no failure */
    if (fclose(stdout) != 0 && (failed || errno != EBADF)) {
        if (!failed)
            e = errno;
        failed = 1;
    }
    if (!failed)
        return rc;
    if (e)
        host_error("standard output: write failed: %s", strerror(e));
    else /* a flush before this one failed, its errno gone */
        host_error("standard output: write failed: what aiarun printed "
                   "there is incomplete");
    return rc == RUN_OK ? RUN_FAILED : rc;
}

static int aiarun(int argc, char **argv);

int main(int argc, char **argv)
{
    return close_stdout(aiarun(argc, argv));
}

static int aiarun(int argc, char **argv)
{
    enum { OPT_CHECK = 256, OPT_LIST, OPT_REFERENCE, OPT_PROGRESS,
           OPT_RESUME, OPT_SIMULATE };
    static const struct option longopts[] = {
        {"set", required_argument, NULL, 'o'},
        {"check", no_argument, NULL, OPT_CHECK},
        {"workers", required_argument, NULL, 'n'},
        {"list-plugins", no_argument, NULL, OPT_LIST},
        {"job-reference", optional_argument, NULL, OPT_REFERENCE},
        {"progress", required_argument, NULL, OPT_PROGRESS},
        {"resume", no_argument, NULL, OPT_RESUME},
        {"simulate", required_argument, NULL, OPT_SIMULATE},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"version", no_argument, NULL, 'V'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *overrides[MAX_OVERRIDES + 1] = {NULL};
    int noverrides = 0, mode = 0, nworkers = 0, resume = 0, simulate = 0;
    int verbosity = AIA_LOG_WARN;
    const char *reference = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "o:n:qvVh", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            if (noverrides == MAX_OVERRIDES) {
                host_error("too many -o overrides");
                return RUN_BAD_JOB;
            }
            overrides[noverrides++] = optarg;
            break;
        case 'n': {
            int64_t v;
            if (!util_parse_int(optarg, &v) || v < 1 || v > MAX_WORKERS) {
                host_error("-n %s: expected a number of workers from 1 to %d",
                           optarg, MAX_WORKERS);
                return RUN_BAD_JOB;
            }
            nworkers = (int)v;
            break;
        }
        case 'q':
            verbosity = AIA_LOG_ERROR;
            break;
        case OPT_RESUME:
            resume = 1;
            break;
        case OPT_SIMULATE: {
            int64_t v;
            if (!util_parse_int(optarg, &v) || v < 1 || v > MAX_SIMULATE) {
                host_error("--simulate %s: expected a number of workers "
                           "from 1 to %d",
                           optarg, MAX_SIMULATE);
                return RUN_BAD_JOB;
            }
            simulate = (int)v;
            break;
        }
        case OPT_PROGRESS: {
            static const char *const modes[] = {"auto", "lines", "tty",
                                                "off"};
            int m = 0;
            while (m < 4 && strcmp(optarg, modes[m]) != 0)
                m++;
            if (m == 4) {
                host_error("--progress %s: expected auto, lines, tty or off",
                           optarg);
                return RUN_BAD_JOB;
            }
            host_set_progress(m);
            break;
        }
        case 'v':
            verbosity++;
            break;
        case 'V':
            printf("aiarun %s (plugin ABI %d)\n", PACKAGE_VERSION,
                   AIA_ABI_VERSION);
            return RUN_OK;
        case 'h':
            usage(stdout);
            return RUN_OK;
        case OPT_CHECK:
        case OPT_LIST:
        case OPT_REFERENCE:
            mode = c;
            reference = optarg;
            break;
        default: /* getopt has named the option */
            fprintf(stderr, "Try 'aiarun --help' for the options.\n");
            return RUN_BAD_JOB;
        }
    }
    host_setup(-1, verbosity);
    const char *path = optind < argc ? argv[optind] : NULL;
    if (optind + 1 < argc) {
        host_error("one job file at a time (got '%s' after '%s')",
                   argv[optind + 1], path);
        return RUN_BAD_JOB;
    }
    if (mode == OPT_REFERENCE) {
        if (reference && strcmp(reference, "man") == 0) {
            job_reference_man(stdout);
        } else if (reference && strcmp(reference, "markdown") != 0) {
            host_error("--job-reference: unknown format '%s' (markdown or "
                       "man)",
                       reference);
            return RUN_BAD_JOB;
        } else {
            job_reference(stdout);
        }
        return RUN_OK;
    }
    if (mode == OPT_LIST || mode == OPT_CHECK)
        loader_bound_loading(LOAD_SECONDS, RUN_BAD_JOB);
    if (mode == OPT_LIST) {
        char *dir = path ? util_dirname(path) : NULL;
        int n = loader_list(stdout, dir);
        free(dir);
        if (n == 0)
            host_error("no plugins found");
        return n > 0 ? RUN_OK : RUN_BAD_JOB;
    }
    if (!path) {
        usage(stderr);
        return RUN_BAD_JOB;
    }
    if (mode == OPT_CHECK)
        return check(path, overrides, nworkers);
    if (simulate)
        return sim_main(path, overrides, simulate, resume);

    struct run_opts opts = {path, overrides, verbosity, resume};
    return run_main(&argc, &argv, &opts);
}
