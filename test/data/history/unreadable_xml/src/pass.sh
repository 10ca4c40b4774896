#!/bin/sh
sleep 0.3
