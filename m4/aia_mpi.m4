# aia_mpi.m4 - the MPI aiarun is built against, and the launcher its tests
# use.  Two MPIs often sit side by side (Debian: Open MPI under the plain
# names, MPICH as mpicc.mpich and mpirun.mpich): a binary compiled by one
# MPI's wrapper but linked to the other's library, or started by the
# other's launcher, runs every rank alone.  So one MPI is chosen, in this
# order, and the compiler, the library and the launcher must all be it:
#   --with-mpi=openmpi|mpich|PATH (PATH: a compiler wrapper or a prefix
#   holding bin/mpicc), else CC when it is an MPI compiler wrapper
#   (CC=mpicc.mpich), else pkg-config's ompi-c then mpich, else the
#   wrapper mpicc.

# AIA_MPI_KIND(VAR): which MPI's mpi.h $CC $CPPFLAGS $CFLAGS compile
# against: openmpi, mpich (MPICH and its derivatives, Intel MPI and
# MVAPICH, one ABI), other, or none (no mpi.h).
AC_DEFUN([AIA_MPI_KIND], [
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>
#ifndef OPEN_MPI
#error not Open MPI
#endif]], [])], [$1=openmpi],
        [AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>
#if !defined MPICH_VERSION && !defined MPICH
#error not MPICH
#endif]], [])], [$1=mpich],
            [AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]], [])],
                [$1=other], [$1=none])])])
])

# AIA_MPI_WRAPPER_FLAGS(WRAPPER): MPI_CFLAGS and MPI_LIBS as the compiler
# wrapper prints them: Open MPI's --showme, MPICH's and Intel MPI's
# -compile_info and -link_info.
AC_DEFUN([AIA_MPI_WRAPPER_FLAGS], [
    AC_MSG_CHECKING([MPI's flags from $1])
    AS_IF([$1 --showme:compile >/dev/null 2>&1],
        [MPI_CFLAGS=`$1 --showme:compile`
         MPI_LIBS=`$1 --showme:link`
         AC_MSG_RESULT([--showme])],
        [$1 -compile_info >/dev/null 2>&1],
        [MPI_CFLAGS=`$1 -compile_info | cut -d' ' -f2- | sed 's/ -c / /'`
         MPI_LIBS=`$1 -link_info | cut -d' ' -f2-`
         AC_MSG_RESULT([-compile_info])],
        [MPI_CFLAGS=
         MPI_LIBS=
         AC_MSG_RESULT([none: trying $CC as it is])])
])

# AIA_MPI_LAUNCHER_KIND(VAR, LAUNCHER): openmpi, mpich or unknown, from
# what the launcher's --version prints.
AC_DEFUN([AIA_MPI_LAUNCHER_KIND], [
    case `$2 --version 2>&1 </dev/null` in
    *"Open MPI"* | *OpenRTE* | *PRRTE*) $1=openmpi ;;
    *HYDRA* | *MPICH* | *"Intel(R) MPI"*) $1=mpich ;;
    *) $1=unknown ;;
    esac
])

# AIA_MPI: sets MPI_CFLAGS, MPI_LIBS and MPIRUN, defines AIA_MPI_NAME.
AC_DEFUN([AIA_MPI], [
AC_ARG_WITH([mpi],
    [AS_HELP_STRING([--with-mpi=openmpi|mpich|PATH],
        [the MPI to build against: Open MPI, MPICH, or the one whose
         compiler wrapper or installation prefix PATH is (default: CC's
         when CC is an MPI compiler wrapper, else pkg-config's, Open MPI
         first)])],
    [], [with_mpi=check])
AC_ARG_VAR([MPICC], [the MPI compiler wrapper asked for MPI's flags])
AC_ARG_VAR([MPIRUN], [the MPI launcher the tests use (default: the chosen
    MPI's own: mpirun.mpich for Debian's MPICH)])
# A bare name given as MPICC= or MPIRUN= is looked up on PATH here:
# AC_PATH_PROG keeps only an absolute one and would search for its
# default instead.
for aia_v in MPICC MPIRUN; do
    eval aia_p=\$$aia_v
    case $aia_p in
    '' | /*) ;;
    */*) eval $aia_v=\`pwd\`/\$aia_p ;;
    *) aia_q=`command -v "$aia_p"` ||
           AC_MSG_ERROR([$aia_v=$aia_p: no such program on PATH])
       eval $aia_v=\$aia_q ;;
    esac
done

aia_mpi_want=     # the MPI asked for: openmpi, mpich, or any
aia_mpi_wrapper=  # the compiler wrapper whose MPI it is, if one
aia_mpi_from=     # where MPI's flags came from, for the summary
case $with_mpi in
check | yes) aia_mpi_wrapper=$MPICC ;;
no) AC_MSG_ERROR([aiarun needs MPI: --without-mpi cannot build it]) ;;
openmpi | ompi | open-mpi) aia_mpi_want=openmpi ;;
mpich) aia_mpi_want=mpich ;;
*)
    if test -d "$with_mpi"; then
        for aia_p in "$with_mpi/bin/mpicc" "$with_mpi/bin/mpiicc" ''; do
            test -z "$aia_p" || test -x "$aia_p" && break
        done
        test -n "$aia_p" ||
            AC_MSG_ERROR([--with-mpi=$with_mpi: no bin/mpicc in that folder])
        aia_mpi_wrapper=$aia_p
    elif aia_p=`command -v "$with_mpi"` && test -x "$aia_p"; then
        aia_mpi_wrapper=$aia_p
    else
        AC_MSG_ERROR([--with-mpi=$with_mpi: expected openmpi, mpich, an MPI compiler wrapper or an MPI installation's folder])
    fi ;;
esac

# What CC builds for by itself: an MPI compiler wrapper finds mpi.h
# without flags, a plain compiler does not.
AC_MSG_CHECKING([whether $CC is an MPI compiler wrapper])
AIA_MPI_KIND([aia_mpi_cc])
AS_CASE([$aia_mpi_cc], [none], [AC_MSG_RESULT([no])],
    [AC_MSG_RESULT([yes, of $aia_mpi_cc])])

aia_mpi_lib=other # the MPI that the flags found belong to
aia_mpi_preset=${MPI_CFLAGS+set}${MPI_LIBS+set}
AS_IF([test -n "$aia_mpi_wrapper"], [
    AIA_MPI_WRAPPER_FLAGS([$aia_mpi_wrapper])
    aia_mpi_from=$aia_mpi_wrapper
    aia_save_CC=$CC
    CC=$aia_mpi_wrapper
    AIA_MPI_KIND([aia_mpi_lib])
    CC=$aia_save_CC
], [test "x$aia_mpi_want" = x && test "x$aia_mpi_cc" != xnone], [
    # CC=mpicc.mpich: the wrapper brings its own flags, and pkg-config's
    # module (Open MPI's, first) would mix two MPIs in one binary.
    MPI_CFLAGS=${MPI_CFLAGS-}
    MPI_LIBS=${MPI_LIBS-}
    aia_mpi_from="CC=$CC"
    aia_mpi_lib=$aia_mpi_cc
], [
    aia_mpi_pc=
    AS_IF([test "x$aia_mpi_want" != xmpich],
        [PKG_CHECK_MODULES([MPI], [ompi-c], [aia_mpi_pc=ompi-c], [:])])
    AS_IF([test -z "$aia_mpi_pc" && test "x$aia_mpi_want" != xopenmpi],
        [PKG_CHECK_MODULES([MPI], [mpich], [aia_mpi_pc=mpich], [:])])
    AS_CASE([$aia_mpi_pc:$aia_mpi_preset],
        [ompi-c:], [aia_mpi_lib=openmpi],
        [mpich:], [aia_mpi_lib=mpich])
    AS_IF([test -n "$aia_mpi_pc"],
        [aia_mpi_from="pkg-config $aia_mpi_pc"],
        [AS_CASE([$aia_mpi_want],
            [openmpi], [aia_mpi_names="mpicc.openmpi mpicc"],
            [mpich], [aia_mpi_names="mpicc.mpich mpicc mpiicc"],
            [aia_mpi_names="mpicc mpiicc"])
         AC_PATH_PROGS([MPICC], [$aia_mpi_names], [])
         AS_IF([test -n "$MPICC"],
            [AIA_MPI_WRAPPER_FLAGS([$MPICC])
             aia_mpi_wrapper=$MPICC
             aia_mpi_from=$MPICC
             aia_save_CC=$CC
             CC=$MPICC
             AIA_MPI_KIND([aia_mpi_lib])
             CC=$aia_save_CC],
            [aia_mpi_from="CC=$CC as it is"])])
])

aia_save_CFLAGS=$CFLAGS
aia_save_LIBS=$LIBS
CFLAGS="$CFLAGS $MPI_CFLAGS"
LIBS="$MPI_LIBS $LIBS"
AC_MSG_CHECKING([which MPI $CC builds against])
AIA_MPI_KIND([aia_mpi_kind])
AC_MSG_RESULT([$aia_mpi_kind])

# The compiler, the library and what was asked for must be one MPI: said
# before the link test, which two MPIs' flags can fail too.
AS_IF([test "x$aia_mpi_kind" != xnone], [
for aia_p in "$aia_mpi_cc:CC=$CC is a compiler wrapper of" \
    "$aia_mpi_lib:the MPI flags found ($aia_mpi_from) are for" \
    "$aia_mpi_want:--with-mpi asks for"; do
    aia_k=${aia_p%%:*}
    aia_m=${aia_p#*:}
    case $aia_k in
    '' | none | other) ;;
    "$aia_mpi_kind") ;;
    *) AC_MSG_ERROR([two MPIs: $aia_m $aia_k, but mpi.h is $aia_mpi_kind's (flags from $aia_mpi_from): such a binary runs every rank alone. Name one MPI: --with-mpi=openmpi, --with-mpi=mpich or --with-mpi=PATH, or CC=its compiler wrapper alone]) ;;
    esac
done])

AC_MSG_CHECKING([whether $CC builds an MPI program])
AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]],
                                [[return MPI_Init(0, 0);]])],
    [aia_mpi_ok=yes], [aia_mpi_ok=no])
AC_MSG_RESULT([$aia_mpi_ok])
AS_IF([test "x$aia_mpi_ok" = xno],
    [AC_MSG_ERROR([MPI not found: install Open MPI (libopenmpi-dev) or MPICH (libmpich-dev), or give --with-mpi=PATH, CC=mpicc, or MPI_CFLAGS and MPI_LIBS])])
CFLAGS=$aia_save_CFLAGS
LIBS=$aia_save_LIBS
AC_SUBST([MPI_CFLAGS])
AC_SUBST([MPI_LIBS])

# The launcher: the one named, else the chosen MPI's own, found beside its
# compiler wrapper first (mpicc.mpich -> mpirun.mpich).
AS_CASE([$aia_mpi_kind],
    [mpich], [aia_mpi_names="mpirun.mpich mpiexec.mpich mpiexec.hydra mpiexec mpirun"],
    [openmpi], [aia_mpi_names="mpirun.openmpi mpirun mpiexec"],
    [aia_mpi_names="mpirun mpiexec"])
aia_mpi_path=$PATH
aia_p=$aia_mpi_wrapper
test -n "$aia_p" || test "x$aia_mpi_cc" = xnone ||
    aia_p=`command -v "${CC%% *}"`
AS_IF([test -n "$aia_p"], [
    aia_mpi_path=`dirname "$aia_p"`$PATH_SEPARATOR$PATH
    aia_q=`basename "$aia_p"`
    AS_CASE([$aia_q], [mpi*cc.*], [aia_q=.${aia_q#*.}
        aia_mpi_names="mpirun$aia_q mpiexec$aia_q $aia_mpi_names"])
])
AC_PATH_PROGS([MPIRUN], [$aia_mpi_names], [mpirun], [$aia_mpi_path])
AIA_MPI_LAUNCHER_KIND([aia_mpi_run], [$MPIRUN])
AS_CASE([$aia_mpi_run:$aia_mpi_kind],
    [unknown:* | *:other | openmpi:openmpi | mpich:mpich], [],
    [AC_MSG_WARN([MPIRUN=$MPIRUN is $aia_mpi_run's launcher, but aiarun is built for $aia_mpi_kind: under it every rank runs alone; give MPIRUN=$aia_mpi_kind's mpirun])])
AS_CASE([$aia_mpi_kind], [openmpi], [aia_mpi_name="Open MPI"],
    [mpich], [aia_mpi_name=MPICH], [aia_mpi_name="an MPI"])
AC_DEFINE_UNQUOTED([AIA_MPI_NAME], ["$aia_mpi_name"],
    [the MPI aiarun is built for, named in its messages])
AC_MSG_NOTICE([MPI: $aia_mpi_name (flags from $aia_mpi_from), launcher $MPIRUN])
])
