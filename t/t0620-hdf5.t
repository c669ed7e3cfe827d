#!/bin/sh
# HDF5 end to end under mpirun: etc/data/lr.csv's rows written as an HDF5
# file (t/csv2h5) give the CSV job's run: every rank holds the same rows
# (the checksums -v logs), uneven block parts and cyclic ones, read by
# each worker from its own hyperslabs or scattered by rank 0, the targets
# a 1-D dataset or the last column; and gd ends at the CSV's loss.
. "$top_srcdir/t/lib.sh"
[ "${AIA_HAVE_HDF5:-}" = yes ] ||
    skip_all "aiarun was built without libhdf5 (install libhdf5-dev)"
scratch
cd "$trash" || exit 99
"$top_builddir/t/csv2h5" "$top_srcdir/etc/data/lr.csv" lr.h5
is "$?" 0 "csv2h5 writes lr.csv's rows as lr.h5"

# parse_run : the last run's summary loss in $loss, each rank's rows and
# checksum in $held ("rank count checksum" lines, sorted)
parse_run() {
    loss=$(tail -1 out.txt | tr ' ' '\n' | sed -n 's/^loss=//p')
    held=$(sed -n 's/^aiarun\[\([0-9]*\)\]: holds \([0-9]*\) of .*(checksum \([0-9a-f]*\))$/\1 \2 \3/p' err.txt | sort)
}

# job DATA PARTITION: a gd job on lrmse over 4 workers, 2:1:1:1 shares
job() {
    cat >job.yaml <<YAML
algorithm: {plugin: gd, step: 0.5}
problem: {plugin: lrmse, partition: $2, weights: [2, 1, 1, 1], data: $1}
stop: {iterations: 200}
YAML
}

for part in block cyclic; do
    job "{path: $top_srcdir/etc/data/lr.csv}" $part
    run 5 -v job.yaml; parse_run
    csv_loss=$loss csv_held=$held
    [ "$(printf '%s\n' "$csv_held" | grep -c '^[1-4] ')" = 4 ]
    ok $? "$part: the CSV job logs the 4 workers' rows"
    for data in "read, targets y:{path: lr.h5, targets: y}" \
        "scatter, targets y:{path: lr.h5, targets: y, delivery: scatter}" \
        "read, target column:{path: lr.h5, dataset: xy}"; do
        name=${data%%:*}
        job "${data#*:}" $part
        run 5 -v job.yaml; parse_run
        is "$rc" 0 "$part, $name: the HDF5 job exits 0"
        same "$held" "$csv_held" "$part, $name: every rank holds the CSV's rows"
        same "$loss" "$csv_loss" "$part, $name: gd ends at the CSV's loss ($csv_loss)"
    done
done

# a dataset that is not there is refused naming the file
job "{path: lr.h5, dataset: nope}" block
run 5 -v job.yaml; parse_run
[ "$rc" != 0 ]
ok $? "a missing dataset is refused"
grep -q "lr.h5: no dataset 'nope'" err.txt
ok $? "naming the file and the dataset"
done_testing
