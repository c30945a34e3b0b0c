import Ajv2020, { ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

const DOCUMENT_ID = 'openapi.yaml';
/** Headers whose presence the contract must announce wherever the server sends them. */
const ANNOUNCED_HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit-policy', 'retry-after', 'etag', 'idempotent-replayed', 'content-disposition', 'location'];

export interface ServedResponse {
  method: string;
  /** Path and query as requested. */
  url: string;
  status: number;
  headers: Headers;
  /** The body as received ('' when there is none). */
  text: string;
}

type Json = Record<string, any>;

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/**
 * Checks served responses against openapi.yaml with Ajv's JSON Schema 2020-12 validator (the
 * dialect of OpenAPI 3.1): the route and method are documented; the status is declared for the
 * operation; the content type is one it declares and the body validates against its schema; every
 * declared header validates (required ones are present), and every header of ANNOUNCED_HEADERS
 * that was sent is declared. Records which operation answered which status, for coverage.
 */
export class ContractValidator {
  readonly document: Json;
  /** operationId → statuses served. */
  readonly served = new Map<string, Set<string>>();
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly templates: { method: string; template: string; pattern: RegExp; literals: number; operation: Json }[] = [];

  constructor(path = join(__dirname, '..', '..', 'openapi.yaml')) {
    this.document = parse(readFileSync(path, 'utf8'));
    addFormats(this.ajv);
    this.ajv.addFormat('binary', true);
    this.ajv.addSchema(this.document, DOCUMENT_ID);
    for (const [template, item] of Object.entries(this.document.paths as Json)) {
      for (const [method, operation] of Object.entries(item as Json)) {
        const segments = template.split('/');
        const pattern = new RegExp(`^${segments.map((s) => (s.startsWith('{') ? '[^/]+' : s.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))).join('/')}$`);
        this.templates.push({ method, template, pattern, literals: segments.filter((s) => !s.startsWith('{')).length, operation });
      }
    }
  }

  /** Every operation of the document: id, method, path template. */
  operations(): { id: string; method: string; template: string; operation: Json }[] {
    return this.templates.map((t) => ({ id: t.operation.operationId, method: t.method, template: t.template, operation: t.operation }));
  }

  /** The violations of one served response ([] when it matches the document). */
  check(response: ServedResponse): string[] {
    const path = new URL(response.url, 'http://x').pathname;
    const method = response.method.toLowerCase();
    const match = this.templates.filter((t) => t.method === method && t.pattern.test(path)).sort((a, b) => b.literals - a.literals)[0];
    const where = `${response.method} ${response.url} → ${response.status}`;
    if (!match) return [`${where}: no operation in the document`];
    const { operation, template } = match;
    const status = String(response.status);
    const declared = operation.responses[status] ?? operation.responses.default;
    if (!declared) return [`${where}: status ${status} not declared for ${operation.operationId}`];
    this.served.set(operation.operationId, (this.served.get(operation.operationId) ?? new Set()).add(status));
    const base = pointer('paths', template, method, 'responses', operation.responses[status] ? status : 'default');
    return [...this.checkBody(where, base, declared, response), ...this.checkHeaders(where, base, declared, response.headers)].map((v) => `${operation.operationId}: ${v}`);
  }

  private checkBody(where: string, base: string, declared: Json, response: ServedResponse): string[] {
    const types = Object.keys(declared.content ?? {});
    if (types.length === 0) return response.text === '' ? [] : [`${where}: a body where none is declared`];
    const type = (response.headers.get('content-type') ?? '').split(';')[0].trim();
    if (!types.includes(type)) return [`${where}: content type '${type}' not declared (${types.join(', ')})`];
    if (type === 'application/octet-stream') return [];
    const json = type === 'application/json' || type.endsWith('+json');
    let body: unknown = response.text;
    if (json) {
      try {
        body = JSON.parse(response.text);
      } catch {
        return [`${where}: ${type} body is not JSON`];
      }
    }
    return this.validate(`${DOCUMENT_ID}#/${base}/content/${pointer(type)}/schema`, body).map((e) => `${where}: body ${e}`);
  }

  private checkHeaders(where: string, base: string, declared: Json, headers: Headers): string[] {
    const violations: string[] = [];
    const names = new Map(Object.keys(declared.headers ?? {}).map((name) => [name.toLowerCase(), name]));
    for (const [lower, name] of names) {
      const ref = `${DOCUMENT_ID}#/${base}/headers/${pointer(name)}`;
      const header = this.resolve(declared.headers[name]);
      const value = headers.get(lower);
      if (value === null) {
        if (header.required) violations.push(`${where}: required header ${name} missing`);
        continue;
      }
      const typed = header.schema?.type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value;
      violations.push(...this.validate(ref, typed, true).map((e) => `${where}: header ${name}: ${e}`));
    }
    for (const lower of ANNOUNCED_HEADERS) if (headers.has(lower) && !names.has(lower)) violations.push(`${where}: header ${lower} sent but not declared`);
    return violations;
  }

  private resolve(object: Json): Json {
    if (!object.$ref) return object;
    return (object.$ref as string)
      .slice(2)
      .split('/')
      .reduce((node: Json, part) => node[part.replace(/~1/g, '/').replace(/~0/g, '~')], this.document);
  }

  /** Validates against the schema at `ref` (for a header: the schema of the header object there). */
  private validate(ref: string, value: unknown, isHeader = false): string[] {
    let validator = this.validators.get(ref);
    if (!validator) {
      const [, fragment] = ref.split('#');
      const target = this.resolve({ $ref: `#${fragment}` });
      const schemaRef = isHeader ? (target.$ref ? `${DOCUMENT_ID}${target.$ref}/schema` : `${ref}/schema`) : ref;
      validator = this.ajv.compile({ $ref: schemaRef });
      this.validators.set(ref, validator);
    }
    return validator(value) ? [] : (validator.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message}`);
  }
}
