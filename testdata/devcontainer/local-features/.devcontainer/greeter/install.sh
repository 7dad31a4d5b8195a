#!/bin/sh
set -e
mkdir -p /opt
echo greeter > /opt/greeter-first
