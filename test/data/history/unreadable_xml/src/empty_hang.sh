#!/bin/sh
: > "$XML_OUTPUT_FILE"
sleep 100
