#!/usr/bin/env bash
# The webhook figures of docs/benchmarks.md: a release `serve --demo` with
# insecure endpoints allowed and a local receiver (Python's threading HTTP
# server answering 204), then
#   1. 200 `POST /webhook/test` one at a time (the first attempt is made
#      before the answer);
#   2. the dispatcher's throughput: the server is stopped, N pending
#      deliveries are written straight into the outbox (copies of the last
#      ping), the server is started again, and the time from its first
#      health answer until the receiver has all N is measured.
#
# usage (from the repository root, after `cargo build --release -p server`):
#   docs/bench/webhooks.sh data/bench/wh.sqlite 18311 500
#   docs/bench/webhooks.sh postgres://postgres@127.0.0.1:5432/bench_wh 18312 500
set -eu
DB=$1; PORT=$2; N=$3
DIR=data/bench
mkdir -p "$DIR"
case "$DB" in postgres://*) URL=$DB; LABEL=postgres ;; *) URL="sqlite://$DB"; LABEL=sqlite ;; esac
RECV_PORT=$((PORT + 1000))
cat > "$DIR/receiver.py" <<'PY'
import http.server, sys, threading
count = 0
lock = threading.Lock()
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        global count
        self.rfile.read(int(self.headers.get('content-length', 0)))
        with lock:
            count += 1
            open(sys.argv[2], 'w').write(str(count))
        self.send_response(204); self.end_headers()
    def log_message(self, *a): pass
class S(http.server.ThreadingHTTPServer):
    request_queue_size = 256   # the default backlog (5) drops concurrent connects
S(('127.0.0.1', int(sys.argv[1])), H).serve_forever()
PY
echo 0 > "$DIR/received"
python3 "$DIR/receiver.py" "$RECV_PORT" "$DIR/received" &
RECV=$!
export PARTNER_API_RATE_LIMITS__REQUESTS_PER_MINUTE=1000000000 PARTNER_API_LOG=warn \
       PARTNER_API_WEBHOOKS__ALLOW_INSECURE_ENDPOINTS=true
serve() {
    target/release/partner-api serve --demo --listen "127.0.0.1:$PORT" --database-url "$URL" >> "$DIR/$LABEL-wh.log" 2>&1 &
    PID=$!
    until curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz"; do sleep 0.02; done
}
: > "$DIR/$LABEL-wh.log"
serve
trap 'kill $PID $RECV' EXIT
KEY=$(grep -o "psk_test_[0-9a-f]*" "$DIR/$LABEL-wh.log" | head -1)
api() { curl -s -H "Authorization: Bearer $KEY" -H "Content-Type: application/json" "$@"; }
api -o /dev/null -X PUT -d "{\"url\":\"http://127.0.0.1:$RECV_PORT/hook\"}" "http://127.0.0.1:$PORT/v1/webhook"
for _ in $(seq 1 200); do
    api -o /dev/null -w "%{time_total}\n" -X POST "http://127.0.0.1:$PORT/v1/webhook/test"
done | sort -n | awk '{a[NR]=$1} END {printf "'"$LABEL"' POST /webhook/test: p50 %.1f ms, p99 %.1f ms\n", a[int(NR*0.5)]*1000, a[int(NR*0.99)]*1000}'

kill $PID; wait $PID 2>/dev/null || true
copies() {  # copies ID_EXPRESSION: the SQL that writes the N copies
    echo "INSERT INTO events (id, partner_id, mode, event_type, data, created_at, state, attempts, next_attempt_at_ms)
          SELECT $1, partner_id, mode, event_type, data, created_at, 'pending', 0, 0
          FROM (SELECT * FROM events ORDER BY created_at DESC LIMIT 1) last,
               (WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < $N) SELECT n FROM s) ns;"
}
case "$LABEL" in
    postgres) psql -q "$URL" -c "$(copies "'evt_' || lpad(n::text, 12, '0')")" ;;
    *) sqlite3 "$DB" "$(copies "'evt_' || substr('000000000000' || n, -12, 12)")" ;;
esac
echo 0 > "$DIR/received"
start=$(date +%s.%N)
serve
received() { local c; c=$(cat "$DIR/received" 2>/dev/null); echo "${c:-0}"; }
while [ "$(received)" -lt "$N" ]; do sleep 0.01; done
end=$(date +%s.%N)
echo "$LABEL dispatcher: $N deliveries in $(echo "$end - $start" | bc) s (from the restart)"
