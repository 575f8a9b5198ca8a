#!/usr/bin/env node
// Entry point installed as `mcpfleet`; the compiled CLI lives in build/.
import "../build/src/cli/main.js";
