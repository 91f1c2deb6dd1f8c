#!/usr/bin/env bash
# sqsemu beside fauxqs on dedicated cores (a lent 16-core device machine): the server pinned to core 1, K load
# drivers (bench/sqsbench.py) pinned to cores 4.., so that no driver shares the server's core. Runs the raw-protocol
# floor (bench/raw_hello.py) and uvicorn's hello (bench/hello_asgi.py), then sqsemu and fauxqs interleaved twice
# (SendMessage, SendMessageBatch, the round trip), Query SendMessage, the long-poll wake and durable mode. Prints a
# line per run: msgs/s summed over the drivers, the server's CPU %, and its CPU per message (us). Figures and raw
# results: $OUT/summary.txt, $OUT/all.jsonl.
#
# Prepare here, in the project's root (the device has Python 3.12 and no package index; nothing of ../shared):
#   printf '/.whl/\n/.devbench/\n' >> .git/info/exclude; mkdir -p .whl .devbench
#   python3.12 -m pip wheel --no-deps -w .whl .            # sqsemu, compiled for cp312
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
#     -d .whl uvicorn==<yours> httptools starlette orjson
#   xz -c "$(command -v node)" > .devbench/node.xz         # a Node.js with no shared libraries beyond libc's
#   tar -C bench/.fauxqs -cJf .devbench/fauxqs.tar.xz node_modules package.json   # npm install --prefix bench/.fauxqs fauxqs
# then run `bash bench/device_compare.sh` there with carry [".whl", ".devbench"] (about 150 s, K=4, D=6 s windows).
#
# It runs from a copy outside the checkout: from the checkout's root, `python3 -m sqsemu` imports the checkout's
# sources (the current folder comes first on sys.path), which are the pure-Python build there (compiled modules are
# not part of the working tree that travels). The first line of figures says which build ran.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
# Run outside the checkout: from its root, `python3 -m sqsemu` would import the checkout's pure sources.
rm -rf /tmp/w && mkdir -p /tmp/w && cp -r .devbench .whl bench /tmp/w/ && cd /tmp/w || exit 1
python3 --version; nproc
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site${EXTRA_PATH:+:$EXTRA_PATH}  # EXTRA_PATH: a dry run elsewhere, with the packages the device has
python3 -c "import uvicorn, httptools, uvloop, starlette, orjson, sqsemu, sqsemu.compiled as c; print('uvicorn', uvicorn.__version__, 'sqsemu', sqsemu.__version__, sqsemu.__file__, c.status())" || exit 1
python3 -c "print(open('/proc/cpuinfo').read().split('model name')[1].split(chr(10))[0])"
taskset -c 1 python3 bench/inproc.py --n 40000 --workloads send,send-batch,roundtrip --through fastlane 2>&1 | sed "s/^/inproc fastlane: /"
python3 -c "import lzma,shutil; shutil.copyfileobj(lzma.open('.devbench/node.xz'), open('/tmp/node','wb'))" && chmod +x /tmp/node
mkdir -p /tmp/fq && tar -C /tmp/fq -xJf .devbench/fauxqs.tar.xz && /tmp/node --version || exit 1
B=bench; K=${K:-4}; D=${D:-6}
if [ "$(nproc)" -ge 8 ]; then pin() { exec taskset -c "$@"; }; else pin() { shift; exec "$@"; }; fi
port=19500
start_server() {  # $1 label, rest: command (port appended as --port N unless FQ)
  local label=$1; shift
  port=$((port+1))
  if [ "$label" = fauxqs ]; then
    FAUXQS_PORT=$port pin 1 /tmp/node --input-type=module -e "import { startFauxqs } from 'file:///tmp/fq/node_modules/fauxqs/dist/app.js'; await startFauxqs({ port: Number(process.env.FAUXQS_PORT), logger: false });" > "$OUT/server-$label.log" 2>&1 &
  elif [ "$label" = floor ]; then pin 1 python3 $B/raw_hello.py $port > /dev/null 2>&1 &
  else pin 1 "$@" --port $port > "$OUT/server-$label.log" 2>&1 &
  fi
  spid=$!
  for _ in $(seq 200); do python3 -c "import socket;socket.create_connection(('127.0.0.1',$port)).close()" 2>/dev/null && break; sleep 0.05; done
  sleep 0.3
}
stop_server() { kill $spid 2>/dev/null; wait $spid 2>/dev/null; }
drive() {  # $1 label $2 k $3 workload $4 protocol, extra args
  local label=$1 k=$2 wl=$3 proto=$4; shift 4
  local pids=()
  rm -f "$OUT"/r-*.json
  for i in $(seq 1 $k); do
    pin $((3+i)) python3 $B/sqsbench.py --endpoint http://127.0.0.1:$port --protocol $proto --workload $wl \
      --server-pid $spid --json-out "$OUT/r-$i.json" --label $label "$@" > /dev/null 2>&1 &
    pids+=($!)
  done
  wait "${pids[@]}"
  python3 - "$OUT" "$label $wl $proto k$k" <<'PY'
import json, glob, sys
rs = [json.load(open(f)) for f in sorted(glob.glob(f"{sys.argv[1]}/r-*.json"))]
res = [r.get("result", r) for r in rs]
def g(r, k):
    v = r.get(k); return v if isinstance(v, (int, float)) else 0
m = sum(g(r, "e2e_msgs_per_s") or g(r, "msgs_per_s") or g(r, "req_per_s") for r in res)
req = sum(g(r, "req_per_s") for r in res)
scpu = max((g(r, "server_cpu_pct") for r in res), default=0)
us = (scpu / 100 * 1e6 / m) if m else 0
usreq = (scpu / 100 * 1e6 / req) if req else 0
extra = "; ".join(str(r.get("summary", ""))[:100] for r in res[:1])
lat = [r.get("latency_ms", {}) for r in res]
print(f"{sys.argv[2]:34s} msgs/s {m:9.0f} req/s {req:9.0f} server_cpu% {scpu:5.0f} us/msg {us:6.1f} us/req {usreq:6.1f} | {extra}", flush=True)
with open(f"{sys.argv[1]}/all.jsonl", "a") as f:
    f.write(json.dumps({"label": sys.argv[2], "msgs": m, "req": req, "cpu": scpu, "us_msg": us, "results": res}) + "\n")
PY
}
{
SQS="python3 -m sqsemu --host 127.0.0.1 --log-level warning"
start_server floor x; drive floor $K hello json --duration $D --concurrency 16; stop_server
start_server hello python3 -m uvicorn --app-dir $B hello_asgi:app --host 127.0.0.1 --loop uvloop --http httptools --log-level warning --no-access-log
drive hello $K hello json --duration $D --concurrency 16; stop_server
start_server sqsemu $SQS; curl -s http://127.0.0.1:$port/health | python3 -c "import json,sys; print('health build:', json.load(sys.stdin).get('build'))"; stop_server
for round in 1 2; do
  for wl in send send-batch roundtrip; do
    start_server sqsemu $SQS; drive sqsemu $K $wl json --duration $D --concurrency 16; stop_server
    start_server fauxqs x; drive fauxqs $K $wl json --duration $D --concurrency 16; stop_server
  done
done
start_server sqsemu $SQS; drive sqsemu $K send query --duration $D --concurrency 16; stop_server
start_server sqsemu $SQS; drive sqsemu 1 longpoll-latency json --duration $D; stop_server
for wl in roundtrip send-batch; do
  rm -rf /tmp/dd; mkdir -p /tmp/dd
  start_server durable $SQS --data-dir /tmp/dd; drive durable $K $wl json --duration $D --concurrency 16; stop_server
done
} 2>&1 | tee "$OUT/summary.txt"
