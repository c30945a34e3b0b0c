import { ApiParam, ApiResponse } from '@nestjs/swagger';

/** OpenAPI problem responses of the user, team and API-key routes (the shared ones speak of jobs). */
const problem = (status: number, description: string) =>
  ApiResponse({ status, description, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } });

export const AdminOnlyResponse = () => problem(403, 'the caller is not an admin');
export const NotVisibleResponse = (what: string) => problem(404, `no such ${what} visible to the caller`);
export const NameTakenResponse = (what: string) => problem(409, `a ${what} with this name already exists`);
export const LastAdminResponse = () => problem(409, 'would leave no enabled admin');

export const UserIdParam = () => ApiParam({ name: 'id', description: 'user id or name', schema: { type: 'string' } });
export const TeamIdParam = () => ApiParam({ name: 'id', description: 'team id or name', schema: { type: 'string' } });
export const ApiKeyIdParam = () => ApiParam({ name: 'id', description: 'API key id', schema: { type: 'string', format: 'uuid' } });
