import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiExtension, ApiOperation, ApiParam, ApiQuery, ApiResponse } from '@nestjs/swagger';
import type { TObject } from '@sinclair/typebox';

/** A response header as the OpenAPI document declares it. */
type HeaderObject = { description: string; required?: boolean; schema: { type: 'string' | 'integer'; pattern?: string; enum?: string[]; format?: string } };

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const problem = (status: number, description: string) =>
  ApiResponse({ status, description, content: { 'application/problem+json': { schema: ref('Problem') } } });

/**
 * One operation of the OpenAPI contract: id (a unique verb+noun), summary, success response,
 * and the problem responses every authenticated route shares.
 */
export function Operation(options: {
  id: string;
  summary: string;
  status?: number;
  response?: string;
  description?: string;
  isPublic?: boolean;
  contentType?: string;
  headers?: Record<string, HeaderObject>;
  /** false: the body differs on every request (no ETag, no 304); see openapi-policy.ts. */
  cacheable?: boolean;
}) {
  const status = options.status ?? 200;
  const { headers } = options;
  const decorators = [
    ApiOperation({ operationId: options.id, summary: options.summary, description: options.description }),
    options.response
      ? ApiResponse({ status, description: options.summary, headers, content: { [options.contentType ?? 'application/json']: { schema: ref(options.response) } } })
      : ApiResponse({ status, description: options.summary, headers }),
  ];
  if (!options.isPublic) decorators.push(ApiBearerAuth(), problem(401, 'missing, invalid or revoked API key'));
  if (options.cacheable === false) decorators.push(ApiExtension('x-cacheable', false));
  return applyDecorators(...decorators);
}

export const JobIdParam = () => ApiParam({ name: 'id', description: 'job id', schema: { type: 'string', format: 'uuid' } });
export const NotFoundResponse = () => problem(404, 'no such job visible to the caller');
export const BadRequestResponse = () => problem(400, 'invalid input; `errors` names each field');
export const AdminJobActionResponse = () => problem(403, 'admins only (the caller can read the job; one it cannot read is a 404)');
export const ConflictResponse = () => problem(409, 'not allowed in the job’s current state');
/** 202: a control recorded for the job's running attempt, which carries it out within seconds. */
export const ControlAcceptedResponse = () =>
  ApiResponse({ status: 202, description: 'accepted: the running attempt carries the request out within seconds; until then the job shows it as `controlRequest`', content: { 'application/json': { schema: ref('Job') } } });
export const UnprocessableResponse = (description: string) => problem(422, description);

/** 200 instead of 201: the same Idempotency-Key and body again, answered with the first result. */
export const IdempotentReplayResponse = (schemaName = 'Job') =>
  ApiResponse({
    status: 200,
    description: 'a replay: the resource created by the first request with this Idempotency-Key',
    headers: { 'Idempotent-Replayed': { description: 'present on replays', required: true, schema: { type: 'string', enum: ['true'] } } },
    content: { 'application/json': { schema: ref(schemaName) } },
  });

/** Documents each property of a TypeBox query schema as a query parameter. */
export function QueryParams(schema: TObject) {
  return applyDecorators(
    ...Object.entries(schema.properties).map(([name, property]) =>
      ApiQuery({ name, required: (schema.required ?? []).includes(name), schema: JSON.parse(JSON.stringify(property)), description: property.description }),
    ),
  );
}

/** `optional`: the body may be left out; every field then takes its default. */
export function JsonBody(schemaName: string, description?: string, optional = false) {
  return ApiBody({ schema: ref(schemaName), description, required: !optional });
}
