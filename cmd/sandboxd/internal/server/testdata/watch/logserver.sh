#!/bin/bash
# A stand-in for a dev server under watch_process: it leaves a grandchild
# running (its PID in grandchild.pid), logs, and when the file named by
# $1 appears logs an error line stamped with the Unix time in
# nanoseconds at which it was written, then keeps serving until killed.
set -u
trigger=$1
sleep 300 &
echo $! > grandchild.pid.tmp && mv grandchild.pid.tmp grandchild.pid
echo "listening on 127.0.0.1:8080"
while [ ! -e "$trigger" ]; do sleep 0.005; done
echo "ERROR request failed at $(date +%s%N)" >&2
echo "served /health"
wait
