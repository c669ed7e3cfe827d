#!/bin/sh
# Codecs end to end: gd on lrmse with every worker each round (so the run
# is deterministic) reaches exactly the plain run's loss with zstd, within
# rounding with float32 and float16, and converges with top-k; the
# report's byte counts follow from the message counts; bad codec keys
# and combinations end the job with one message naming the place.
. "$top_srcdir/t/lib.sh"
scratch
cd "$trash" || exit 99

cat >job.yaml <<'YAML'
seed: 42
algorithm:
  plugin: gd
  step: 0.5
problem:
  plugin: lrmse
  rows: 4000
  cols: 20
pool:
  codec:
    query: none
    answer: none
stop:
  iterations: 100
YAML

# bytes of n doubles encoded by a codec, and of a message of them
hdr=64
n=20

run 5 -q job.yaml
is "$rc" 0 "no codec: exits 0"
base=$(field loss "$out")
answers=$(field answers "$out")
is "$answers" 400 "no codec: 4 answers a round"
is "$(field recv_payload "$out")" $((answers * n * 8)) \
    "no codec: received payload is 8 bytes a value"
is "$(field recv_bytes "$out")" $((answers * (hdr + n * 8))) \
    "no codec: received bytes on the wire add the headers"
is "$(field sent_bytes "$out")" $((answers * (hdr + n * 8))) \
    "no codec: as many queries as answers, sent whole"
is "$(field ratio "$out")" 1.0000 "no codec: ratio 1"

if [ "${AIA_HAVE_ZSTD:-yes}" = yes ]; then
    run 5 -q -o pool.codec.query=zstd -o pool.codec.answer=zstd job.yaml
    is "$rc" 0 "zstd: exits 0"
    is "$(field loss "$out")" "$base" "zstd: exactly the loss of no codec"
    sent=$(field sent_bytes "$out")
    test_expect "zstd: sent bytes within the bound ($sent)" \
        '[ "$sent" -gt $((answers * hdr)) ] &&
         [ "$sent" -le $((answers * (hdr + n * 8 + 64))) ]'
else
    ok 0 "# SKIP zstd: this aiarun was built without libzstd"
    out=$("$AIARUN" --check -n 4 -o pool.codec.answer=zstd job.yaml 2>&1)
    like "$out" "job.yaml:12:13: pool.codec.answer: zstd: this aiarun was built without libzstd" \
        "zstd: refused in a build without it, naming the place"
fi

run 5 -q -o pool.codec.query=float32 -o pool.codec.answer=float32 job.yaml
is "$rc" 0 "float32: exits 0"
gap=$(field gap "$out")
expect_ok "float32: gap $gap within 1e-9" float_le "$gap" 1e-9
is "$(field recv_bytes "$out")" $((answers * (hdr + n * 4))) \
    "float32: 4 bytes a value received"
is "$(field recv_payload "$out")" $((answers * n * 8)) \
    "float32: the payload as doubles is counted as before"
is "$(field sent_bytes "$out")" $((answers * (hdr + n * 4))) \
    "float32: 4 bytes a value sent"
is "$(field ratio "$out")" 2.0000 "float32: halves the payloads"

run 5 -q -o pool.codec.query=float16 -o pool.codec.answer=bfloat16 job.yaml
is "$rc" 0 "float16 queries, bfloat16 answers: exits 0"
gap=$(field gap "$out")
expect_ok "float16 queries, bfloat16 answers: gap $gap within 1e-2" \
    float_le "$gap" 1e-2
is "$(field ratio "$out")" 4.0000 "16-bit values: a quarter of the payloads"

run 5 -q -o pool.codec.answer=topk -o pool.codec.topk=5 -o stop.iterations=300 job.yaml
is "$rc" 0 "topk: exits 0"
gap=$(field gap "$out")
expect_ok "topk 5 of 20 with error feedback: gap $gap within 1e-2" \
    float_le "$gap" 1e-2
answers=$(field answers "$out")
is "$(field recv_bytes "$out")" $((answers * (hdr + 5 * 12))) \
    "topk: 12 bytes an entry sent"

run 5 -q -o pool.codec.answer=topk -o pool.codec.topk=0.1 -o stop.iterations=300 \
    -o algorithm.plugin=sgd -o algorithm.step=0.1 job.yaml
is "$rc" 0 "topk with sgd: exits 0"
gap=$(field gap "$out")
expect_ok "topk 2 of 20 with sgd: gap $gap within 2e-2" float_le "$gap" 2e-2

# refusals: exit 2 from every rank, one message naming the line and key
sed 's/answer: none/answer: gzip/' job.yaml >bad.yaml
run 5 bad.yaml
is "$rc" 2 "an unknown codec: exit 2"
like "$err" "bad.yaml:12:13: pool.codec.answer: 'gzip' is not one of" \
    "an unknown codec: named with its line and key"
is "$(grep -c 'pool.codec' err.txt)" 1 "an unknown codec: one message"

sed 's/answer: none/answr: none/' job.yaml >bad.yaml
out=$("$AIARUN" --check -n 4 bad.yaml 2>&1)
is "$?" 2 "an unknown key in pool.codec: exit 2"
like "$out" "bad.yaml:12:5: pool.codec.answr: unknown key" \
    "an unknown key in pool.codec: named with its line"

run 5 -q -o pool.codec.answer=topk -o algorithm.plugin=average job.yaml
is "$rc" 2 "topk for average's models: exit 2"
like "$err" "job.yaml:10:3: pool.codec.answer: topk: algorithm 'average' does not declare its answers additive" \
    "topk for average's models: refused with the reason"

out=$("$AIARUN" --check -n 4 -o pool.codec.topk=2.5 job.yaml 2>&1)
is "$?" 2 "topk 2.5: exit 2"
like "$out" "pool.codec.topk: 2.5: give a fraction below 1 or a whole count" \
    "topk 2.5: refused"

out=$("$AIARUN" --check -n 4 -o pool.codec.query=float32 \
    -o pool.topology=tree job.yaml 2>&1)
is "$?" 2 "a codec in a tree: exit 2"
like "$out" "job.yaml:10:3: pool.codec: a tree's nodes combine answers as doubles: codecs are for the star topology only" \
    "a codec in a tree: refused with the reason"

# the emulated link: each answer waits for its bytes to cross it
run 5 -q -o stragglers.link_mbps=1 -o stop.iterations=20 job.yaml
is "$rc" 0 "an emulated 1 Mbit/s link: exits 0"
t=$(field time "$out")
want=$(awk -v b=$(( (hdr + n * 8) * 2 )) 'BEGIN { print 20 * b * 8 / 1e6 }')
expect_ok "an emulated 1 Mbit/s link: 20 rounds take at least ${want} s ($t s)" \
    float_le "$want" "$t"

done_testing
