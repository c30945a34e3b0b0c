/**
 * Writes the OpenAPI document generated from the controllers and schemas to openapi.yaml
 * (`npm run openapi`), or with --check exits 1 when the committed file differs.
 */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiModule } from '../api.module';
import { buildOpenApiDocument, toYaml } from '../api/openapi';
import { projectRoot } from '../config/paths';

/** The document as the code defines it; preview mode builds routes without connecting to anything. */
export async function generateOpenApiYaml(): Promise<string> {
  const app = await NestFactory.create(ApiModule, { preview: true, logger: false, abortOnError: false });
  const version = (JSON.parse(readFileSync(join(projectRoot(), 'package.json'), 'utf8')) as { version: string }).version;
  const yaml = toYaml(buildOpenApiDocument(app, version));
  await app.close();
  return yaml;
}

async function main(): Promise<void> {
  const path = join(projectRoot(), 'openapi.yaml');
  const generated = await generateOpenApiYaml();
  if (process.argv.includes('--check')) {
    const committed = readFileSync(path, 'utf8');
    if (committed !== generated) {
      console.error('openapi.yaml differs from the document generated from the code: run `npm run openapi` and commit it');
      process.exit(1);
    }
    console.log('openapi.yaml is up to date');
    return;
  }
  writeFileSync(path, generated);
  console.log(`wrote ${path}`);
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
