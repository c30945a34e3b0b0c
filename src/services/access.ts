import type { Principal } from './auth.service';

interface OwnedJob {
  ownerId: string;
  owner: { teamId: string | null };
}

/** Admins read everything; members their own jobs, and team-mates' where the team shares jobs. */
export function canRead(principal: Principal, job: OwnedJob): boolean {
  if (principal.role === 'admin' || job.ownerId === principal.userId) return true;
  return principal.teamSharesJobs && principal.teamId !== null && job.owner.teamId === principal.teamId;
}

/** Only the owner and admins change a job. */
export function canControl(principal: Principal, job: OwnedJob): boolean {
  return principal.role === 'admin' || job.ownerId === principal.userId;
}
