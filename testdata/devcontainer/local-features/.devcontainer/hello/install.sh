#!/bin/sh
set -e
# installsAfter greeter: its file is there
test -f /opt/greeter-first
mkdir -p /opt/hello
echo "$GREETING loud=$LOUD dots=$NAME_WITH_DOTS user=$_REMOTE_USER home=$_REMOTE_USER_HOME" > /opt/hello/said
