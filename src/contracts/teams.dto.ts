import { Static, Type } from '@sinclair/typebox';
import { NAME_PATTERN } from './users.dto';

const TeamName = Type.String({ minLength: 1, maxLength: 64, pattern: NAME_PATTERN });
const SHARE_JOBS = 'team-mates may read (never control) each other’s jobs';

export const CreateTeamSchema = Type.Object({ name: TeamName, shareJobs: Type.Optional(Type.Boolean({ description: SHARE_JOBS, default: false })) }, { additionalProperties: false });
export type CreateTeamBody = Static<typeof CreateTeamSchema>;

export const UpdateTeamSchema = Type.Object({ name: Type.Optional(TeamName), shareJobs: Type.Optional(Type.Boolean({ description: SHARE_JOBS })) }, { additionalProperties: false });
export type UpdateTeamBody = Static<typeof UpdateTeamSchema>;

export const TeamSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  shareJobs: Type.Boolean(),
  members: Type.Integer({ description: 'users in the team, disabled ones included' }),
  createdAt: Type.String({ format: 'date-time' }),
});
export type TeamView = Static<typeof TeamSchema>;

export const TeamListSchema = Type.Object({ data: Type.Array(TeamSchema) });
export type TeamListView = Static<typeof TeamListSchema>;
