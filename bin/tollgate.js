#!/usr/bin/env node
// The operator CLI. `npm install` builds dist/ (the `prepare` script); this only loads it.
import '../dist/src/cli/entry.js';
