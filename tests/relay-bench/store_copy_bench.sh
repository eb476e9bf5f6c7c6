#!/usr/bin/env bash
# How long `switchyard store copy` takes to move a ledger onto a Postgres store, against the
# floor measured in the same run: Postgres's own COPY of the same rows (sqlite3 CSV piped into
# psql \copy) into a database with the same schema.
#
#   scripts/with-postgres tests/relay-bench/store_copy_bench.sh [debug|release] [DOUBLINGS]
#
# DOUBLINGS (default 17) doubles one ledger row that many times: 17 → 131,072 rows, about the
# default ledger retention (100,000). Prints rows, seconds for each, rows/s and the ratio.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -n "${SWITCHYARD_TEST_PG:-}" ] || { echo "run under scripts/with-postgres" >&2; exit 2; }
profile="${1:-debug}"
doublings="${2:-17}"
bin="${CARGO_TARGET_DIR:-target}/$profile/switchyard"
[ -x "$bin" ] || { echo "no $bin: cargo build ${profile/debug/} -p switchyard-cli" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The test hook maps data dirs to Postgres when SWITCHYARD_TEST_PG is set: the source here is a
# real SQLite data dir, so the binary runs without it.
sy() { env -u SWITCHYARD_TEST_PG SWITCHYARD_VAULT=sealed SWITCHYARD_MASTER_KEY_FILE="$work/master.key" "$bin" "$@"; }
head -c 32 /dev/urandom > "$work/master.key" && chmod 600 "$work/master.key"
data="$work/desk"
printf 'sk-bench-copy' | sy --data-dir "$data" connection add c --protocol anthropic \
    --base-url http://127.0.0.1:9 --model m1 --secret-stdin > /dev/null
db="$data/switchyard.db"
cid=$(sqlite3 "$db" "SELECT id FROM connections LIMIT 1")
pid=$(sqlite3 "$db" "SELECT id FROM profiles LIMIT 1")
sqlite3 "$db" "INSERT INTO attempts (at_ms, connection_id, turn, attempt, profile_id, reason, status, model, ttfb_ms,
    duration_ms, input_tokens, output_tokens, conversation, tags)
    VALUES (1764770000000, '$cid', 'a:0123456789abcdef0123456789abcdef', 1, '$pid', 'swrr', 200, 'm1', 150, 900,
    1200, 300, 'a:0123456789abcdef0123456789abcdef', '{}')"
cols=$(sqlite3 "$db" "SELECT group_concat(name, ', ') FROM pragma_table_info('attempts') WHERE name <> 'id'")
for _ in $(seq "$doublings"); do sqlite3 "$db" "INSERT INTO attempts ($cols) SELECT $cols FROM attempts"; done
rows=$(sqlite3 "$db" "SELECT count(*) FROM attempts")

base="${SWITCHYARD_TEST_PG%/*}"
for name in sy_bench_copy sy_bench_floor; do
  psql "$SWITCHYARD_TEST_PG" -q -c "DROP DATABASE IF EXISTS $name" -c "CREATE DATABASE $name" 2> /dev/null
done
now() { date +%s.%N; }

t0=$(now)
sy --data-dir "$data" store copy --to "$base/sy_bench_copy" --master-key-file "$work/master.key" > /dev/null 2>&1
t1=$(now)
copied=$(psql "$base/sy_bench_copy" -tAc "SELECT count(*) FROM attempts")
[ "$copied" = "$rows" ] || { echo "store copy wrote $copied of $rows rows" >&2; exit 1; }

# The floor: the same columns of the same rows through COPY, into the same schema.
pg_dump --schema-only "$base/sy_bench_copy" | psql -q "$base/sy_bench_floor" > /dev/null
all=$(sqlite3 "$db" "SELECT group_concat(name, ', ') FROM pragma_table_info('attempts')")
t2=$(now)
sqlite3 -csv "$db" "SELECT $all FROM attempts" | psql -q "$base/sy_bench_floor" -c "\\copy attempts ($all) FROM STDIN WITH (FORMAT csv)"
t3=$(now)
floored=$(psql "$base/sy_bench_floor" -tAc "SELECT count(*) FROM attempts")
[ "$floored" = "$rows" ] || { echo "COPY wrote $floored of $rows rows" >&2; exit 1; }

python3 - "$rows" "$t0" "$t1" "$t2" "$t3" "$profile" <<'PY'
import sys
rows, t0, t1, t2, t3, profile = int(sys.argv[1]), *map(float, sys.argv[2:6]), sys.argv[6]
copy, floor = t1 - t0, t3 - t2
print(f"ledger rows: {rows} ({profile} build)")
print(f"store copy:        {copy:7.2f} s  {rows / copy:9.0f} rows/s")
print(f"COPY (the floor):  {floor:7.2f} s  {rows / floor:9.0f} rows/s")
print(f"store copy / COPY: {copy / floor:.2f}x")
PY
