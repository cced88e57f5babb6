#!/usr/bin/env bash
# The price-on-plan figures of docs/benchmarks.md: a release `serve --demo`
# on DBURL, then fresh 10,000-member and 100-member requests with 500
# market plans (each with its own company name, so each one prices), and
# repeats of one body (answered from its stored quote).
#
# usage (from the repository root, after `cargo build --release -p server`):
#   docs/bench/price_on_plan.sh sqlite://data/bench/pop.sqlite 18301 sqlite
#   docs/bench/price_on_plan.sh postgres://postgres@127.0.0.1:5432/bench_pop 18302 postgres
set -eu
DB=$1; PORT=$2; LABEL=$3
DIR=data/bench
mkdir -p "$DIR"
python3 docs/bench/price_on_plan_body.py 10000 > "$DIR/body10k.json"
python3 docs/bench/price_on_plan_body.py 100 > "$DIR/body100.json"
export PARTNER_API_RATE_LIMITS__REQUESTS_PER_MINUTE=1000000000 \
       PARTNER_API_RATE_LIMITS__QUOTE_CREATES_PER_HOUR=1000000000 PARTNER_API_LOG=warn
target/release/partner-api serve --demo --listen "127.0.0.1:$PORT" --database-url "$DB" > "$DIR/$LABEL.log" 2>&1 &
PID=$!
trap 'kill $PID' EXIT
for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.2; done
KEY=$(grep -o "psk_test_[0-9a-f]*" "$DIR/$LABEL.log" | head -1)
post() {
    curl -s -o "$DIR/out.json" -w "%{http_code} %{time_total}\n" -H "Authorization: Bearer $KEY" \
        -H "Content-Type: application/json" --data-binary "@$1" "http://127.0.0.1:$PORT/v1/price-on-plan"
}
named() {  # named SIZE N: the body of SIZE with company name N
    python3 -c "import json,sys;b=json.load(open('$DIR/body$1.json'));b['company']['name']='Bench $2';json.dump(b,sys.stdout)" > "$DIR/b$1_$2.json"
    echo "$DIR/b$1_$2.json"
}
for n in 1 2 3; do echo "$LABEL 10k/500 run $n: $(post "$(named 10k "$n")")"; done
echo "$LABEL 10k/500 repeat: $(post "$DIR/b10k_1.json")"
echo "$LABEL 10k/500 repeat: $(post "$DIR/b10k_1.json")"
for n in $(seq 1 10); do echo "$LABEL 100/500 run $n: $(post "$(named 100 "$n")")"; done
