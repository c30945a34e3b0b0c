import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiParam, ApiQuery, ApiResponse } from '@nestjs/swagger';
import type { TObject } from '@sinclair/typebox';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const problem = (status: number, description: string) =>
  ApiResponse({ status, description, content: { 'application/problem+json': { schema: ref('Problem') } } });

/**
 * One operation of the OpenAPI contract: id (a unique verb+noun), summary, success response,
 * and the problem responses every authenticated route shares.
 */
export function Operation(options: { id: string; summary: string; status?: number; response?: string; description?: string; isPublic?: boolean; contentType?: string }) {
  const status = options.status ?? 200;
  const decorators = [
    ApiOperation({ operationId: options.id, summary: options.summary, description: options.description }),
    options.response
      ? ApiResponse({ status, description: options.summary, content: { [options.contentType ?? 'application/json']: { schema: ref(options.response) } } })
      : ApiResponse({ status, description: options.summary }),
  ];
  if (!options.isPublic) decorators.push(ApiBearerAuth(), problem(401, 'missing, invalid or revoked API key'));
  return applyDecorators(...decorators);
}

export const JobIdParam = () => ApiParam({ name: 'id', description: 'job id', schema: { type: 'string', format: 'uuid' } });
export const NotFoundResponse = () => problem(404, 'no such job visible to the caller');
export const BadRequestResponse = () => problem(400, 'invalid input; `errors` names each field');
export const AdminJobActionResponse = () => problem(403, 'admins only (the caller can read the job; one it cannot read is a 404)');
export const ConflictResponse = () => problem(409, 'not allowed in the job’s current state');

/** Documents each property of a TypeBox query schema as a query parameter. */
export function QueryParams(schema: TObject) {
  return applyDecorators(
    ...Object.entries(schema.properties).map(([name, property]) =>
      ApiQuery({ name, required: (schema.required ?? []).includes(name), schema: JSON.parse(JSON.stringify(property)), description: property.description }),
    ),
  );
}

export function JsonBody(schemaName: string, description?: string) {
  return ApiBody({ schema: ref(schemaName), description });
}
