#!/usr/bin/env bash
# valgrind_cli.sh: the command line under valgrind (memcheck) on every
# shipped example and on unreadable input.  Any leak or invalid access
# fails.  Run from a build folder by scripts/test.sh (not by make check:
# the sanitizer build covers the unit tests).
set -u
tool=src/onnx-alias-check
vg="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
: > "$tmp/empty.onnx"
head -c 4096 /dev/urandom > "$tmp/random.onnx"
bad=0
# A decoder-shaped graph (bench/gen_decoder) takes the decoder's sharing
# of equal strings, attributes and dimensions, which the small examples
# barely reach.
extra=
if [ -x bench/gen_decoder ] && bench/gen_decoder 8 "$tmp/decoder.onnx" > /dev/null 2>&1; then
  extra="$tmp/decoder.onnx"
fi
for m in examples/*.onnx "$tmp/empty.onnx" "$tmp/random.onnx" $extra; do
  $vg $tool check --format=json "$m" > /dev/null 2>&1
  rc=$?
  if [ $rc -eq 99 ] || [ $rc -gt 2 ]; then echo "valgrind: $m (exit $rc)"; bad=1; fi
done
for m in examples/toy_decoder.onnx examples/paged_cache.onnx examples/tensor_scatter.onnx; do
  [ -f "$m" ] || continue
  $vg $tool run --steps 3 --format=json "$m" > /dev/null 2>&1
  rc=$?
  if [ $rc -eq 99 ] || [ $rc -gt 2 ]; then echo "valgrind: run $m (exit $rc)"; bad=1; fi
done
# Contract 8: the generation loop with a stock model fed back (the Concat
# twin), and a step the capacity pre-check refuses, with a --dump of what
# the last step left.
if [ -f examples/toy_decoder_concat.onnx ]; then
  $vg $tool run --steps 4 --tokens 3,7 --format=json examples/toy_decoder_concat.onnx > /dev/null 2>&1
  rc=$?
  if [ $rc -ne 0 ]; then echo "valgrind: run toy_decoder_concat (exit $rc)"; bad=1; fi
  $vg $tool run --steps 17 --dump "$tmp/over" --format=json examples/toy_decoder.onnx > /dev/null 2>&1
  rc=$?
  if [ $rc -ne 1 ]; then echo "valgrind: run toy_decoder past its capacity (exit $rc)"; bad=1; fi
fi
# The interpreter at every depth (If branches, Loop bodies, local
# functions) and the bindings: the examples' dims as the quickstart binds
# them, so each run executes its steps.
dense="--dim batch=1 --dim heads=2 --dim max_length=16 --dim head_size=8 --dim new_length=1"
for m in dense_cache chained_updates if_branches loop_cache function_cache; do
  [ -f "examples/$m.onnx" ] || continue
  # shellcheck disable=SC2086
  $vg $tool run --steps 4 --format=json $dense "examples/$m.onnx" > /dev/null 2>&1
  rc=$?
  if [ $rc -ne 0 ]; then echo "valgrind: run $m (exit $rc)"; bad=1; fi
  # Two sessions on two threads: one runs, one reports binding-busy (1).
  # shellcheck disable=SC2086
  $vg $tool run --steps 2 --sessions 2 --format=json $dense "examples/$m.onnx" > /dev/null 2>&1
  rc=$?
  if [ $rc -ne 1 ]; then echo "valgrind: run --sessions 2 $m (exit $rc)"; bad=1; fi
done
# The command line's own work (issue 13): a folder walked, models from a
# pipe (a whole one and a cut one), help, a misspelt command, a run that
# lacks its --dim (one message naming them all).
for args in "check examples" "help run" "chekc examples/dense_cache.onnx" \
            "run examples/dense_cache.onnx"; do
  # shellcheck disable=SC2086
  $vg $tool $args > /dev/null 2>&1
  rc=$?
  if [ $rc -eq 99 ] || [ $rc -gt 2 ]; then echo "valgrind: $args (exit $rc)"; bad=1; fi
done
for cut in 0 100; do
  head -c "$(( $(wc -c < examples/toy_decoder.onnx) - cut ))" examples/toy_decoder.onnx |
    $vg $tool check --format=json - > /dev/null 2>&1
  rc=$?
  if [ $rc -eq 99 ] || [ $rc -gt 2 ]; then echo "valgrind: check - (cut $cut, exit $rc)"; bad=1; fi
done
# The reproducers of issue 12 (tests/hostile_models, built by make
# check): check and run each, with a --dump, and FIFOs as a model and an
# --input.  Runs hold at most 256 MiB (--max-memory): the models that ask
# for gigabytes (huge_input, plan_128g) are refused before allocating.
hostile=0
if [ -x tests/hostile_models ] && mkdir "$tmp/h" && tests/hostile_models "$tmp/h" > /dev/null 2>&1; then
  mkfifo "$tmp/fifo"
  for m in "$tmp"/h/*.onnx; do
    hostile=$((hostile + 1))
    for cmd in "check" "run --max-memory 256M --dump $tmp/d"; do
      # shellcheck disable=SC2086
      timeout 60 $vg $tool $cmd --format=json "$m" > /dev/null 2>&1
      rc=$?
      if [ $rc -eq 99 ] || [ $rc -gt 2 ]; then echo "valgrind: $cmd $m (exit $rc)"; bad=1; fi
    done
  done
  for args in "check $tmp/fifo" "run --input x=$tmp/fifo $tmp/h/raw_near.onnx" \
              "run --input x=$tmp/h/x4_short.pb $tmp/h/raw_near.onnx"; do
    # shellcheck disable=SC2086
    timeout 60 $vg $tool $args > /dev/null 2>&1
    rc=$?
    if [ $rc -eq 99 ] || [ $rc -gt 2 ]; then echo "valgrind: $args (exit $rc)"; bad=1; fi
  done
fi
# annotate on its look-alikes (tests/annotate_models, when built by make
# check): pairs annotated, refused, a config, a bad config.
if [ -x tests/annotate_models ] && mkdir "$tmp/a" && tests/annotate_models "$tmp/a"; then
  printf '{"model": ' > "$tmp/a/bad.json"
  for args in "gqa.onnx" "mixed.onnx" "delta.onnx" "--partial mixed.onnx" \
              "--config $tmp/a/bad.json scatter.onnx"; do
    set -- $args
    eval "m=\${$#}"
    $vg $tool annotate --format=json -o "$tmp/a/out.onnx" "${@:1:$#-1}" "$tmp/a/$m" \
      > /dev/null 2>&1
    rc=$?
    if [ $rc -eq 99 ] || [ $rc -gt 2 ]; then echo "valgrind: annotate $args (exit $rc)"; bad=1; fi
    rm -f "$tmp/a/out.onnx"
  done
fi
[ $bad -eq 0 ] && echo "valgrind: clean on $(ls examples/*.onnx | wc -l) examples${extra:+, a generated decoder}, $hostile hostile models and bad input"
exit $bad
