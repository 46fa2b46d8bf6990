while [ ! -e /tmp/r/done ] && [ $SECONDS -lt 560 ]; do sleep 5; done
ls /tmp/r; tail -5 /tmp/r/x.log
if [ -e /tmp/r/done ]; then cd /tmp/r && tar czf $OUT/r.tgz res x.log; fi
