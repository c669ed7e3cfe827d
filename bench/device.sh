#!/bin/sh
# device.sh - the benchmarks that need more cores than a 2-core machine
# has, on a lent machine of 16 that starts bare (no MPI, no libyaml) and
# reaches no package registry.  Two steps, both from the source tree:
#
#   sh bench/device.sh pack   here: builds aiarun and the benchmark
#                             programs in build-device/ (without HDF5
#                             and Python, whose libraries that machine
#                             need not have), and puts what the cases
#                             run and the Debian packages they need at
#                             run time in .device/ (about 18 MB)
#   sh bench/device.sh run    there, with .device carried: unpacks the
#                             packages the machine lacks (never over a
#                             file it has), then runs the cases and
#                             leaves their tables (CASE.md), a summary
#                             (device.md) and their output (device.log)
#                             in $OUT
#
# The cases (DEVICE_CASES, in this order by default):
#   shards     bench case shards with 12 workers: S = 1, 2 and 4 make
#              13 to 16 ranks, a core each (issue: shards at 16 ranks)
#   calibrate  bench/calibrate.sh CASES=coordinator: 1 to 8 workers
#              against --simulate with simulate.cores 16, a core a rank
#   overhead   bench case 1, the round against the plain MPI star
#   large      bench case large, 10^5 to 10^7 doubles
# DEVICE_REPS repetitions each (default 3).  Every case runs under a
# limit of its own (DEVICE_LIMIT seconds, default 110: the four fit one
# 10-minute call), so that the tables of the cases that finished come
# back when one overruns.
set -u

: "${DEVICE_DIR:=.device}" "${DEVICE_REPS:=3}" "${DEVICE_LIMIT:=110}"
: "${DEVICE_CASES:=shards calibrate overhead large}"

say() { printf 'device: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

[ -f bench/device.sh ] || die "run me from the source tree's top folder"

# The Debian packages of what the programs load at run time, found by
# ldd and dpkg -S on this machine, and those Open MPI loads by name
# (its launcher, its components and PMIx's); the C library and the
# compiler's run-time libraries are the machine's own.
PACKAGES="openmpi-bin openmpi-common libopenmpi3 libpmix2 libhwloc15
libevent-core-2.1-7 libevent-pthreads-2.1-7 libfabric1 libibverbs1
ibverbs-providers librdmacm1 libnl-3-200 libnl-route-3-200 libnuma1
libpsm2-2 libucx0 libmunge2 libudev1 libuuid1
libatomic1 libyaml-0-2 libzstd1 zlib1g libopenblas0-pthread libgfortran5
libquadmath0 liblapacke libtmglib3"
# Open MPI's packages go together: where the machine has an Open MPI of
# its own (library and launcher), it is used whole rather than mixed with
# these.
MPI_PACKAGES="openmpi-bin openmpi-common libopenmpi3 libpmix2"
PROGRAMS="star coordcost allreduce allreduce_gd gradbw answer mlpflops"
# What the lent machine is taken to have: the C library and the
# compiler's run-time libraries.
OWN_PACKAGES="libc6 libgcc-s1 libstdc++6"
# Left out: what only Open MPI's components for network hardware load
# (PSM for True Scale adapters, through libfabric too); without it those
# components fail to load, silenced below, and the shared-memory and TCP
# transports serve.
LEFT_OUT="libpsm-infinipath1"

# check_packages: every library that the packed programs and Open MPI's
# components load (by ldd, on this machine) comes from PACKAGES,
# OWN_PACKAGES or LEFT_OUT; dies naming the library and its package
# otherwise, so that the list kept above cannot fall behind the build.
check_packages() {
    libs=$( (
        for f in "$DEVICE_DIR/build/aiarun" "$DEVICE_DIR"/build/bench/* \
            "$DEVICE_DIR"/build/*/.libs/*.so \
            $(dpkg -L $MPI_PACKAGES 2>/dev/null | grep '\.so$'); do
            [ -f "$f" ] && ldd "$f" 2>/dev/null
        done
    ) | awk '$2 == "=>" { print ($3 == "not" ? "missing:" $1 : $3) }' | sort -u)
    bad=
    known=" $(echo $PACKAGES $OWN_PACKAGES $LEFT_OUT) "
    for lib in $libs; do
        case $lib in
        missing:*)
            bad="$bad ${lib#missing:} (not found)"
            continue
            ;;
        esac
        # dpkg knows a library by the path its package installed, which
        # on a merged /usr may be the /usr/lib or the /lib spelling
        real=$(readlink -f "$lib")
        pkg=
        for q in "$lib" "$real" "/usr$lib" "/usr$real" "${real#/usr}"; do
            pkg=$(dpkg -S "$q" 2>/dev/null | sed -n '1s/[:,].*//p')
            [ -n "$pkg" ] && break
        done
        case $known in
        *" $pkg "*) ;;
        *) bad="$bad $lib (${pkg:-no package})" ;;
        esac
    done
    [ -z "$bad" ] || die "libraries outside PACKAGES:$bad"
}

pack() {
    b="build-device"
    if [ ! -f "$b/Makefile" ]; then
        [ -x configure ] || ./autogen.sh || die "autogen.sh failed"
        mkdir -p "$b" && (cd "$b" && ../configure --without-hdf5 --without-python) ||
            die "configure failed in $b"
    fi
    jobs=$(nproc 2>/dev/null || echo 2)
    targets="bench/noop.la bench/nullprob.la"
    for p in $PROGRAMS; do targets="$targets bench/$p"; done
    # all first: the benchmark programs share its objects, and one make
    # asked for both at once could build an object twice side by side
    (cd "$b" && make -j"$jobs" all && make -j"$jobs" $targets) >&2 ||
        die "the build in $b failed"
    rm -rf "$DEVICE_DIR"
    mkdir -p "$DEVICE_DIR/debs" "$DEVICE_DIR/build/bench/.libs" \
        "$DEVICE_DIR/build/plugins/.libs" "$DEVICE_DIR/build/problems/.libs" || exit 1
    cp "$b/aiarun" "$DEVICE_DIR/build/" || exit 1
    git describe --always --dirty >"$DEVICE_DIR/commit" 2>/dev/null
    for p in $PROGRAMS; do cp "$b/bench/$p" "$DEVICE_DIR/build/bench/" || exit 1; done
    for d in plugins problems bench; do
        cp "$b/$d"/.libs/*.so "$DEVICE_DIR/build/$d/.libs/" || exit 1
    done
    check_packages
    # apt-get download runs as _apt where it can: a folder it may write
    chmod 777 "$DEVICE_DIR/debs"
    (cd "$DEVICE_DIR/debs" && apt-get download $PACKAGES) >&2 ||
        die "apt-get download failed (apt-get update first?)"
    grep -qx '/\.device/' .git/info/exclude 2>/dev/null ||
        grep -qx '/\.device/' .gitignore ||
        say "note: git does not ignore $DEVICE_DIR: the run would carry it twice"
    say "packed: $(du -sh "$DEVICE_DIR" | cut -f 1) in $DEVICE_DIR"
    say "there: sh bench/device.sh run   (carry: $DEVICE_DIR)"
}

# installed PACKAGE : whether the machine has the package (dpkg's view),
# under its name or its 64-bit-time name (Ubuntu's libevent-...t64).
installed() {
    command -v dpkg-query >/dev/null 2>&1 || return 1
    for _p in "$1" "${1}t64"; do
        dpkg-query -W -f='${Status}' "$_p" 2>/dev/null | grep -q 'ok installed' &&
            return 0
    done
    return 1
}

# own_ompi : whether the machine has an Open MPI 4 of its own, library and
# launcher (by its files, whatever installed them).
own_ompi() {
    ldconfig -p 2>/dev/null | grep -q 'libmpi\.so\.40 ' &&
        { command -v orterun || command -v mpirun.openmpi; } >/dev/null 2>&1
}

# extract DEB FOLDER : a package's files, by dpkg-deb or, without it, ar.
extract() {
    if command -v dpkg-deb >/dev/null 2>&1; then
        dpkg-deb -x "$1" "$2"
    else
        (t=$(mktemp -d) && cd "$t" && ar x "$1" && tar -xf data.tar.* -C "$2" &&
            rm -rf "$t")
    fi
}

unpack() {
    stage=$(mktemp -d) || exit 1
    skip_mpi='' got=''
    own_ompi && skip_mpi=yes
    for deb in "$kit"/debs/*.deb; do
        pkg=${deb##*/}
        pkg=${pkg%%_*}
        installed "$pkg" && continue
        case " $MPI_PACKAGES " in
        *" $pkg "*) [ -n "$skip_mpi" ] && continue ;;
        esac
        extract "$deb" "$stage" || die "cannot unpack $deb"
        got=yes
    done
    # a merged /usr (/lib a link to usr/lib) takes /lib's files in /usr/lib
    for d in lib lib64 bin sbin; do
        if [ -L "/$d" ] && [ -d "$stage/$d" ]; then
            mkdir -p "$stage/usr/$d" && cp -a "$stage/$d/." "$stage/usr/$d/" &&
                rm -rf "${stage:?}/$d"
        fi
    done
    # only files the machine lacks: one it has stays the machine's, and so
    # do the mode and times of every folder it has (/ included)
    if [ -n "$got" ]; then
        (cd "$stage" && tar -cf - .) | tar -C / -xf - --skip-old-files ||
            die "cannot copy the packages' files into /"
    fi
    rm -rf "$stage"
    ldconfig 2>/dev/null
    # the BLAS that Debian's alternatives would name
    LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export LD_LIBRARY_PATH
}

# limited NAME OUTPUT COMMAND... : a case under the time limit, its
# standard output to OUTPUT and its errors added to device.log (the
# machine returns 8 files at most); its status is said, not fatal.
limited() {
    _n=$1 _o=$2
    shift 2
    say "case $_n (at most ${DEVICE_LIMIT} s)"
    _t0=$(date +%s)
    printf '\n==== %s\n' "$_n" >>"$OUT/device.log"
    timeout -k 10 "$DEVICE_LIMIT" "$@" >"$_o" 2>>"$OUT/device.log"
    _rc=$?
    printf '%s: exit %s after %s s\n' "$_n" "$_rc" $(($(date +%s) - _t0)) >>"$OUT/device.md"
}

run() {
    : "${OUT:?set OUT to the folder for the results}"
    [ -x "$DEVICE_DIR/build/aiarun" ] || die "no $DEVICE_DIR/build/aiarun: run 'pack' first, and carry $DEVICE_DIR"
    kit=$(cd "$DEVICE_DIR" && pwd) || exit 1
    unpack
    # Open MPI's launcher by its own name first: a plain mpirun may be
    # another MPI's, whose ranks would not speak to an Open MPI build
    MPIRUN=$(command -v mpirun.openmpi || command -v orterun || command -v mpirun) ||
        die "no mpirun after unpacking"
    # Open MPI's components for network hardware the machine has not
    # (PSM, OFI) would say at every start that a library is missing
    OMPI_MCA_mca_base_component_show_load_errors=0
    export MPIRUN OMPI_MCA_mca_base_component_show_load_errors
    # every rank is on this machine: Open MPI's launcher wants an ssh
    # that it never uses, which a bare machine may not have
    command -v ssh >/dev/null 2>&1 || command -v rsh >/dev/null 2>&1 || {
        OMPI_MCA_plm_rsh_agent=false
        export OMPI_MCA_plm_rsh_agent
    }
    if [ "$(id -u)" = 0 ]; then
        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
        export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
    fi
    top=$PWD
    build=$kit/build
    {
        printf '# bench/device.sh on %s\n\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
        printf -- '- cores: %s usable of %s online; %s\n' "$(nproc)" \
            "$(getconf _NPROCESSORS_ONLN)" \
            "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
        printf -- '- load average at the start: %s\n' "$(cut -d ' ' -f 1-3 /proc/loadavg)"
        printf -- '- %s (%s)\n' "$("$MPIRUN" --version 2>&1 | head -n 1)" "$MPIRUN"
        printf -- '- built from %s\n\n' "$(cat "$kit/commit" 2>/dev/null || echo '?')"
    } >"$OUT/device.md"
    # what the programs will load, for a failure to explain itself
    {
        printf '==== environment\nMPIRUN=%s\nLD_LIBRARY_PATH=%s\n' "$MPIRUN" \
            "${LD_LIBRARY_PATH:-}"
        ldd "$build/aiarun" 2>&1
    } >>"$OUT/device.log"
    # a smoke run first: what fails here fails every case
    if ! timeout 60 "$MPIRUN" -np 2 --oversubscribe "$build/bench/star" 10 100 \
        >>"$OUT/device.md" 2>&1; then
        die "the plain star did not run: $(tail -n 5 "$OUT/device.md")"
    fi
    for c in $DEVICE_CASES; do
        case $c in
        shards | overhead | large)
            # run.sh prints its tables and writes them to BENCH_RESULTS
            limited "$c" /dev/null env top_srcdir="$top" top_builddir="$build" \
                AWK=awk CC=cc BENCH_CASES="$c" BENCH_REPS="$DEVICE_REPS" \
                BENCH_RESULTS="$OUT/$c.md" SHARDS_WORKERS=12 \
                sh "$top/bench/run.sh"
            ;;
        calibrate)
            limited calibrate "$OUT/calibrate.md" sh -c "cd '$build' && CASES=coordinator \
                REPS='$DEVICE_REPS' sh '$top/bench/calibrate.sh'"
            ;;
        *) die "unknown case '$c'" ;;
        esac
    done
    cat "$OUT/device.md" >&2
}

case ${1:-} in
pack) pack ;;
run) run ;;
*)
    echo "usage: sh bench/device.sh pack | run" >&2
    exit 2
    ;;
esac
