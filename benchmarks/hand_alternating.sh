#!/usr/bin/env bash
# A hand-made check of encbench's steady write cells, outside encbench: two MariaDB servers
# (plain, and TDE with file_key_management) kept running, long sysbench runs alternating
# between them in ABBA order with no flush between runs, the way a DBA would compare them by
# hand.  Nothing of encbench runs here; its result is read beside the encbench write cell
# of the same shape (docs/findings.md).
#
#   benchmarks/hand_alternating.sh [THREADS] [RUN_S] [BLOCKS] [WORKLOAD]
#
# Defaults: 16 threads, 40 s runs, 4 blocks (8 pairs), oltp_write_only; 8 × 100,000 rows in
# a 46 MB buffer pool (a quarter of the data: io-bound), binary log on in both, AES_CTR.
# Prints each run's TPS and the paired cost with a Student-t 95% interval over the blocks.
# Both servers are stopped (by pid) and their directory removed on exit, Ctrl-C included.
set -euo pipefail

THREADS=${1:-16}
RUN_S=${2:-40}
BLOCKS=${3:-4}
WORKLOAD=${4:-oltp_write_only}
WARM_S=60
WORK=$(mktemp -d /tmp/hand-alternating.XXXXXX)
chmod 700 "$WORK"
PIDS=()

cleanup() {
    local status=$?
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${PIDS[@]}"; do
        while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
    done
    if ((status == 0)); then
        rm -rf "$WORK"
    else  # the servers' logs and the runs so far, to see what went wrong (the key file too)
        echo "stopped (exit $status): servers stopped, their logs and runs.tsv kept in $WORK" >&2
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The key file: two keys of 256 bits, private to this run.
(umask 077 && printf '1;%s\n2;%s\n' "$(openssl rand -hex 32)" "$(openssl rand -hex 32)" \
    >"$WORK/keys.txt")

start() {  # start NAME PORT [encrypted]
    local name=$1 port=$2 dir="$WORK/$1"
    mkdir -p "$dir/data" "$dir/tmp"
    {
        echo "[mariadbd]"
        echo "datadir=$dir/data"
        echo "tmpdir=$dir/tmp"
        echo "socket=$dir/sock"
        echo "pid-file=$dir/pid"
        echo "log-error=$dir/error.log"
        echo "port=$port"
        echo "bind-address=127.0.0.1"
        echo "skip-name-resolve=ON"
        if ((EUID == 0)); then echo "user=root"; fi  # mariadbd refuses root without it
        echo "innodb_buffer_pool_size=46M"
        echo "innodb_flush_method=O_DIRECT"
        echo "innodb_buffer_pool_dump_at_shutdown=OFF"
        echo "innodb_buffer_pool_load_at_startup=OFF"
        echo "performance_schema=OFF"
        echo "max_connections=600"
        echo "log_bin=binlog"
        echo "server_id=1"
        echo "binlog_format=ROW"
        if [[ ${3:-} == encrypted ]]; then
            echo "plugin_load_add=file_key_management"
            echo "file_key_management_filename=$WORK/keys.txt"
            echo "file_key_management_encryption_algorithm=AES_CTR"
            echo "innodb_encrypt_tables=ON"
            echo "innodb_encryption_threads=2"
        fi
    } >"$dir/my.cnf"
    mariadb-install-db --defaults-file="$dir/my.cnf" --auth-root-authentication-method=normal \
        >"$dir/install.log" 2>&1
    mariadbd --defaults-file="$dir/my.cnf" >>"$dir/error.log" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 1 100); do
        mariadb --socket="$dir/sock" -uroot -e "SELECT 1" >/dev/null 2>&1 && break
        sleep 0.2
    done
    mariadb --socket="$dir/sock" -uroot -e "CREATE DATABASE sbtest"
}

bench() {  # bench NAME COMMAND SECONDS
    sysbench "$WORKLOAD" --db-driver=mysql --mysql-socket="$WORK/$1/sock" --mysql-user=root \
        --mysql-db=sbtest --tables=8 --table-size=100000 --rand-type=uniform \
        --threads="$THREADS" --time="$3" --report-interval=0 "$2"
}

tps() {  # the "transactions: N (X per sec.)" figure of a sysbench run
    sed -n 's/.*transactions: *[0-9]* *(\([0-9.]*\) per sec.*/\1/p'
}

start plain 13401
start encrypted 13402 encrypted
for side in plain encrypted; do
    bench "$side" prepare 0 >/dev/null
done
# The proof: every sbtest tablespace encrypted on one side, none on the other.
for side in plain encrypted; do
    n=$(mariadb --socket="$WORK/$side/sock" -uroot -N -e "SELECT COUNT(*) FROM
        information_schema.INNODB_TABLESPACES_ENCRYPTION WHERE NAME LIKE 'sbtest/%'
        AND MIN_KEY_VERSION > 0")
    echo "$side: $n of 8 sbtest tablespaces encrypted"
done
for side in plain encrypted; do
    bench "$side" run "$WARM_S" >/dev/null
done

OUT="$WORK/runs.tsv"
echo -e "block\tside\ttps" | tee "$OUT"
for block in $(seq 1 "$BLOCKS"); do
    if ((block % 2)); then order="plain encrypted encrypted plain"; else order="encrypted plain plain encrypted"; fi
    for side in $order; do
        t=$(bench "$side" run "$RUN_S" | tps)
        [[ -n $t ]] || { echo "no TPS in sysbench's output for $side" >&2; exit 1; }
        echo -e "$block\t$side\t$t" | tee -a "$OUT"
    done
done

python3 - "$OUT" <<'EOF'
import math, statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().split("\n")[1:] if l]
blocks = {}
for b, side, t in rows:
    blocks.setdefault(b, {}).setdefault(side, []).append(float(t))
# a block's figure: the mean of its two ABBA pairs' log ratios encrypted/plain
logs = [statistics.mean(math.log(e / p) for e, p in zip(s["encrypted"], s["plain"]))
        for s in blocks.values()]
n = len(logs)
# Student's t, 97.5th percentile, by the number of blocks (n − 1 degrees of freedom)
T95 = {2: 12.706, 3: 4.303, 4: 3.182, 5: 2.776, 6: 2.571, 7: 2.447, 8: 2.365, 9: 2.306,
       10: 2.262, 11: 2.228, 12: 2.201, 13: 2.179, 14: 2.160, 15: 2.145, 16: 2.131}
if n > max(T95):
    sys.exit(f"{n} blocks: extend the t table (it stops at {max(T95)})")
m = statistics.mean(logs)
half = T95[n] * statistics.stdev(logs) / math.sqrt(n) if n > 1 else float("nan")
cost = lambda x: (1 - math.exp(x)) * 100
print(f"TPS cost of encryption over {n} blocks ({2 * n} pairs): {cost(m):+.1f}% "
      f"(95% CI {cost(m + half):+.1f} … {cost(m - half):+.1f})")
for side in ("plain", "encrypted"):
    print(f"{side}: mean {statistics.mean(t for s in blocks.values() for t in s[side]):.0f} TPS")
EOF
