#!/usr/bin/env bash
# A stand-in for a libFuzzer target (test/Tools/fuzz-jobs.test): copied as
# TARGET-fuzzer. A replay (no -max_total_time) fails when FAKE_FAIL_REPLAY
# names this target; a fuzzing run records "start TARGET" and "end TARGET"
# in $FAKE_EVENTS, waiting in between (up to 20 s) until FAKE_WAIT_FOR
# starts are recorded, and leaves a crash input when FAKE_CRASH names it.
t=$(basename "$0" -fuzzer)
prefix= fuzzing=0
for a in "$@"; do
  case $a in
    -artifact_prefix=*) prefix=${a#*=} ;;
    -max_total_time=*) fuzzing=1 ;;
  esac
done
if [ $fuzzing = 0 ]; then
  [ "${FAKE_FAIL_REPLAY:-}" != "$t" ]
  exit
fi
echo "start $t" >> "$FAKE_EVENTS"
for _ in $(seq 200); do
  [ "$(grep -c '^start' "$FAKE_EVENTS")" -lt "${FAKE_WAIT_FOR:-1}" ] || break
  sleep 0.1
done
echo "#9: cov: 3 ft: 4 corp: 2/10b exec/s: 0 rss: 30Mb"
[ "${FAKE_CRASH:-}" != "$t" ] || echo x > "${prefix}crash-fake-$$"
echo "end $t" >> "$FAKE_EVENTS"
