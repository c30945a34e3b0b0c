#!/usr/bin/env node
// Validates an OpenAPI document with swagger-parser (structure, $refs, the 3.1 schema):
// `node scripts/validate-openapi.js [openapi.yaml]`. Exits 1 with the problems otherwise.
const SwaggerParser = require('@apidevtools/swagger-parser');

const path = process.argv[2] ?? 'openapi.yaml';
SwaggerParser.validate(path).then(
  (api) => console.log(`${path}: valid OpenAPI ${api.openapi} (swagger-parser)`),
  (error) => {
    console.error(`${path}: ${error.message}`);
    process.exit(1);
  },
);
