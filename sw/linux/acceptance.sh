#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The acceptance run of the stock Linux nvme driver on the simulated drive, in the guest
# (busybox sh; nvme-cli, fio, e2fsprogs from Debian). `ssdlab linux --acceptance` boots the
# guest twice: phase 1 runs everything below and leaves files on an ext4 file system, the host
# power-cycles the drive, phase 2 mounts it again and checks every file's checksum.
#
# Output the host reads: "PASS <check>" / "FAIL <check>: <why>" lines, in phase 1 the files'
# "ssdlab-manifest: <sha256>  <name>" lines (handed to phase 2), and the exit status: the
# number of failed checks.
#
# QEMU passes the phase (and phase 2 the manifest) as fw_cfg files opt/ssdlab/phase and
# opt/ssdlab/manifest.

FWCFG=/sys/firmware/qemu_fw_cfg/by_name/opt/ssdlab
CTRL=/dev/nvme0
NS=/dev/nvme0n1
OUT=/tmp/check.out
failed=0
phase=$(cat $FWCFG/phase/raw 2>/dev/null || echo 1)

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }

# check NAME CMD...: CMD must succeed; its output is kept in $OUT (and shown on failure).
check() {
    name=$1; shift
    "$@" >$OUT 2>&1
    rc=$?
    if [ $rc = 0 ]; then pass "$name"; return 0; fi
    fail "$name" "'$*' exited $rc"; sed 's/^/    /' $OUT; return 1
}

# expect NAME PATTERN CMD...: CMD's output (whatever its exit status) must match PATTERN
# (grep -E, case-insensitive).
expect() {
    name=$1; pattern=$2; shift 2
    "$@" >$OUT 2>&1
    if grep -qiE "$pattern" $OUT; then pass "$name"; return 0; fi
    fail "$name" "'$*' did not print /$pattern/"; sed 's/^/    /' $OUT; return 1
}

# The nvme driver probes asynchronously, and the drive runs slower than real time: wait.
wait_for_namespace() {
    i=0
    while [ ! -b $NS ]; do
        i=$((i + 1))
        if [ $i -gt 900 ]; then fail "namespace" "$NS did not appear in 900 s"; return 1; fi
        sleep 1
    done
    pass "namespace $NS after ${i} s"
}

# No nvme error or timeout in the kernel log (checked at the end of each phase).
dmesg_clean() {
    dmesg | grep -i nvme | grep -vi 'command line' > /tmp/nvme.dmesg
    # (the driver's "Shutdown timeout set to N seconds" is the drive's RTD3E, not a timeout)
    if grep -v 'Shutdown timeout set' /tmp/nvme.dmesg \
            | grep -qiE 'timeout|error|fail|abort|reset|invalid|missing'
    then
        fail "dmesg" "nvme errors or timeouts"; sed 's/^/    /' /tmp/nvme.dmesg
    else
        pass "dmesg: $(wc -l < /tmp/nvme.dmesg) nvme lines, no error or timeout"
    fi
}

# feature_roundtrip FID VALUE: Set Features then Get Features reads VALUE back.
feature_roundtrip() {
    check "set-feature $1=$2" nvme set-feature $CTRL -f "$1" -v "$2" || return
    # nvme-cli prints the value as hex digits, zero-padded ("Current value:00000a05")
    expect "get-feature $1 reads $2" "Current value: *(0x)?0*$(printf '%x' "$2")\b" \
        nvme get-feature $CTRL -f "$1" -H
}

phase1() {
    sed 's/^/    /' /proc/interrupts | grep -i nvme
    check "nvme list" nvme list && grep -q nvme0n1 $OUT || fail "nvme list" "no nvme0n1"
    expect "id-ctrl (vendor 1d1d)" 'vid +: 0x1d1d' nvme id-ctrl $CTRL
    expect "id-ns (nsze)" 'nsze +: 0x[0-9a-f]+' nvme id-ns $NS
    expect "smart-log" 'critical_warning[[:space:]]*: 0\b' nvme smart-log $CTRL
    check "error-log" nvme error-log $CTRL -e 4

    # Number of queues: readable; set once I/O queues exist it is a Command Sequence Error
    # (NVMe 1.4 5.21.1.7), which is what the stock driver's queues make it now.
    expect "get-feature number of queues" 'Current value: *0x[0-9a-f]+' \
        nvme get-feature $CTRL -f 7
    expect "set-feature number of queues: Command Sequence Error" 'SEQ' \
        nvme set-feature $CTRL -f 7 -v 0x10001
    feature_roundtrip 6 0            # volatile write cache off (the drive flushes first)
    feature_roundtrip 6 1
    feature_roundtrip 8 2565         # coalescing: time 10 (x 100 us), threshold 5 (0x0a05)
    feature_roundtrip 8 0

    # Data, then Format: the namespace reads zero afterwards.
    check "write 1 MiB" dd if=/dev/urandom of=$NS bs=4096 count=256 oflag=direct
    check "nvme format" nvme format $NS --ses=0 --force
    check "read after format" dd if=$NS of=/tmp/after bs=4096 count=256 iflag=direct
    if cmp -s /tmp/after /dev/zero 2>/dev/null || [ "$(tr -d '\000' < /tmp/after | wc -c)" = 0 ]
    then pass "format: 1 MiB reads zero"; else fail "format" "data left after Format"; fi

    # Deallocate: written blocks read zero after DSM with AD (the drive's DLFEAT).
    check "write 64 KiB" dd if=/dev/urandom of=$NS bs=4096 count=16 oflag=direct
    check "nvme dsm --ad" nvme dsm $NS --ad --slbs=0 --blocks=128
    check "read after dsm" dd if=$NS of=/tmp/dsm bs=4096 count=16 iflag=direct
    if [ "$(tr -d '\000' < /tmp/dsm | wc -c)" = 0 ]; then pass "dsm: 64 KiB reads zero"
    else fail "dsm" "deallocated blocks do not read zero"; fi
    check "nvme flush" nvme flush $NS -n 1

    # fio: io_uring, two jobs on two CPUs (so two of the driver's I/O queues), crc32c verify.
    before=$(grep -c . /proc/interrupts)
    check "fio io_uring randwrite + crc32c verify, 2 jobs" \
        fio --name=verify --filename=$NS --ioengine=io_uring --direct=1 --rw=randwrite \
            --bs=4k --iodepth=8 --numjobs=2 --size=4M --offset_increment=4M \
            --cpus_allowed=0-1 --cpus_allowed_policy=split --verify=crc32c --do_verify=1 \
            --verify_fatal=1 --group_reporting
    sed -n '/write:/p;/read:/p;/err=/p' $OUT | sed 's/^/    /'
    queues=$(awk '/nvme0q[1-9]/ { n = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i;
                                   if (n > 0) q++ } END { print q + 0 }' /proc/interrupts)
    if [ "$queues" -ge 2 ]; then pass "interrupts on $queues I/O queues"
    else fail "I/O queues" "interrupts on $queues I/O queue(s), expected 2"; fi
    grep nvme /proc/interrupts | sed 's/^/    /'

    # A file system, files, sync, unmount; their checksums go to the host for phase 2.
    check "mkfs.ext4" mkfs.ext4 -q -F $NS || return
    mkdir -p /mnt
    check "mount" mount -t ext4 $NS /mnt || return
    n=0
    for size in 1 7 64 300 1024 4096; do
        n=$((n + 1))
        dd if=/dev/urandom of=/mnt/file$n bs=1024 count=$size 2>/dev/null
    done
    mkdir -p /mnt/dir && cp /mnt/file3 /mnt/dir/copy
    check "sync" sync
    (cd /mnt && find . -type f | sort | xargs sha256sum) > /tmp/manifest
    check "umount" umount /mnt
    sed 's/^/ssdlab-manifest: /' /tmp/manifest
    pass "$(wc -l < /tmp/manifest) files written"
}

phase2() {
    cat $FWCFG/manifest/raw > /tmp/manifest 2>/dev/null
    [ -s /tmp/manifest ] || { fail "manifest" "phase 2 without the files' checksums"; return; }
    mkdir -p /mnt
    check "mount after power cycle" mount -t ext4 $NS /mnt || return
    if (cd /mnt && sha256sum -c /tmp/manifest) >$OUT 2>&1; then
        pass "all $(wc -l < /tmp/manifest) files' checksums after power cycle"
    else
        fail "checksums after power cycle" "mismatch"; sed 's/^/    /' $OUT
    fi
    check "umount" umount /mnt
    check "e2fsck" e2fsck -fn $NS
}

echo "ssdlab acceptance: phase $phase; kernel $(uname -r) ($(uname -v)); $(nvme version);" \
     "$(fio --version); $(e2fsck -V 2>&1 | head -n1)"
wait_for_namespace || exit 1
if [ "$phase" = 2 ]; then phase2; else phase1; fi
dmesg_clean
echo "ssdlab acceptance: phase $phase, $failed failed"
exit $failed
